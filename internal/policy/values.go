package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parseDuration reads a duration such as 90s, 10m, 1h or 1m30s.
func parseDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || strings.ContainsAny(v, "+-") {
		return 0, fmt.Errorf("%s is not a duration; write it like 90s, 10m or 1h", quote(v))
	}
	return d, nil
}

// parseRate reads "N/DURATION", e.g. 6/1m.
func parseRate(p *Policy, v string) error {
	ns, ws, ok := strings.Cut(v, "/")
	ns, ws = strings.Trim(ns, " \t"), strings.Trim(ws, " \t")
	n, err := strconv.Atoi(ns)
	if !ok || err != nil || strings.HasPrefix(ns, "+") {
		return fmt.Errorf("%s is not a rate; write requests/window, like 6/1m", quote(v))
	}
	w, err := parseDuration(ws)
	if err != nil {
		return fmt.Errorf("%s: the window %w", quote(v), err)
	}
	p.RateLimit, p.RateWindow = n, w
	return checkRate(n, w)
}
