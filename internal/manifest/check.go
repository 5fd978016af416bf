package manifest

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Problem is one way a host manifest falls short of what fillgate needs.
type Problem struct {
	// Field is the manifest field at fault: name, type, path,
	// allowed_origins or allowed_extensions (or family, for a family
	// fillgate does not know).
	Field string `json:"field"`
	// Detail says what is wrong, in a sentence fragment.
	Detail string `json:"detail"`
}

// String is the problem as "field: detail".
func (p Problem) String() string { return p.Field + ": " + p.Detail }

// originPattern is the only form Chromium accepts in allowed_origins: no
// wildcards, no path. A manifest with any other entry is rejected whole.
var originPattern = regexp.MustCompile(`^chrome-extension://[a-p]{32}/$`)

// Check reports every way h would keep a browser of family f from
// starting fillgate for fillgate's extension (in a Chromium family, each
// of origins). isAbs says whether a path is absolute on the target OS
// (nil: filepath.IsAbs). It checks the manifest only; whether the path
// exists and is executable is the caller's to ask.
func (h Host) Check(f Family, origins Origins, isAbs func(string) bool) []Problem {
	if isAbs == nil {
		isAbs = filepath.IsAbs
	}
	var ps []Problem
	add := func(field, format string, args ...any) {
		ps = append(ps, Problem{Field: field, Detail: fmt.Sprintf(format, args...)})
	}
	if h.Name != HostName {
		add("name", "is %q, not %q", h.Name, HostName)
	}
	if h.Type != "stdio" {
		add("type", "is %q, not \"stdio\"", h.Type)
	}
	switch {
	case h.Path == "":
		add("path", "is missing")
	case !isAbs(h.Path):
		add("path", "%q is not absolute", h.Path)
	}
	switch f {
	case Chromium:
		if len(h.AllowedOrigins) == 0 {
			add("allowed_origins", "is missing, so no extension may connect")
			break
		}
		if err := origins.valid(); err != nil {
			add("allowed_origins", "cannot be checked: %v", err)
			break
		}
		// The unpacked copy's origin and each store's: a manifest written
		// before fillgate was listed in a store keeps the store copy out.
		for _, want := range origins {
			if !slices.Contains(h.AllowedOrigins, want) {
				add("allowed_origins", "does not list %s (it lists %s)", want, strings.Join(h.AllowedOrigins, ", "))
			}
		}
		for _, o := range h.AllowedOrigins {
			if !originPattern.MatchString(o) {
				add("allowed_origins", "entry %q is not of the form chrome-extension://<id>/, so the browser rejects the whole manifest", o)
			}
		}
	case Firefox:
		if len(h.AllowedExtensions) == 0 {
			add("allowed_extensions", "is missing, so no add-on may connect")
			break
		}
		if !slices.Contains(h.AllowedExtensions, FirefoxID) {
			add("allowed_extensions", "does not list %s (it lists %s)", FirefoxID, strings.Join(h.AllowedExtensions, ", "))
		}
	default:
		add("family", "unknown browser family %q", f)
	}
	return ps
}
