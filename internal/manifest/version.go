package manifest

import (
	"runtime/debug"
	"strings"
)

// Version is fillgate's version: the binary's, and the extension's
// manifest.json "version", which is its source (the stores read it there,
// and want it bumped on every upload). A test keeps the two equal. Release
// builds stamp it, Commit and Date with -ldflags -X
// (.goreleaser.yaml); the release refuses a tag that is not
// "v" + this version, so the stamp only ever repeats it.
var Version = "0.1.0"

// Commit and Date are the commit a release was built from and that
// commit's time (RFC 3339), stamped by -ldflags -X. Empty in other builds:
// Build reads them from the Go toolchain's VCS stamp instead.
var (
	Commit = ""
	Date   = ""
)

// BuildInfo says which fillgate this is.
type BuildInfo struct {
	Version string
	Commit  string // the full commit hash, "" when unknown
	Date    string // the commit's time, "" when unknown
	// Modified says the binary was built from a work tree with changes
	// that were not committed (a go build in a checkout).
	Modified bool
}

// Build returns the stamped version, commit and date, or, for a binary
// that was not stamped (go build in a checkout), the commit and time the
// Go toolchain recorded.
func Build() BuildInfo {
	b := BuildInfo{Version: Version, Commit: Commit, Date: Date}
	if b.Commit != "" {
		return b
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Date = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the version with what is known of the build: "0.1.0 (commit
// 1a2b3c4d5e6f, 2026-05-01T10:00:00Z)", or "0.1.0" alone.
func (b BuildInfo) String() string {
	var parts []string
	if b.Commit != "" {
		c := b.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if b.Modified {
			c += " with uncommitted changes"
		}
		parts = append(parts, "commit "+c)
	}
	if b.Date != "" {
		parts = append(parts, b.Date)
	}
	if len(parts) == 0 {
		return b.Version
	}
	return b.Version + " (" + strings.Join(parts, ", ") + ")"
}
