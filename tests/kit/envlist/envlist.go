// Package envlist reads an environment given as a list of KEY=value
// entries, as exec.Cmd.Env holds the one a test gives the processes it
// starts.
package envlist

import (
	"slices"
	"strings"
)

// Get is the value of key in env as a process started with env sees it:
// the last entry for key wins; "" when there is none.
func Get(env []string, key string) string {
	for _, kv := range slices.Backward(env) {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}
