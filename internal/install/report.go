package install

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Status of one manifest or registry key in a Report.
type Status string

// Statuses. In a dry run they say what would happen.
const (
	Created   Status = "created"   // written where there was none
	Updated   Status = "updated"   // fillgate's own, rewritten (e.g. the binary moved)
	Unchanged Status = "unchanged" // already exactly right
	Replaced  Status = "replaced"  // not fillgate's, overwritten with --force
	Conflict  Status = "conflict"  // not fillgate's, left alone (use --force)
	Removed   Status = "removed"   // uninstall removed it
	Kept      Status = "kept"      // uninstall left it: not fillgate's, or still used
)

// Report is what Install or Uninstall did (or, with DryRun, would do).
type Report struct {
	Action       string      `json:"action"` // "install" or "uninstall"
	DryRun       bool        `json:"dry_run"`
	Scope        string      `json:"scope"`
	Binary       string      `json:"binary"`
	ExtensionDir string      `json:"extension_dir"`
	Extension    Status      `json:"extension"` // created, updated, unchanged, removed or kept
	Found        []Found     `json:"found,omitempty"`
	Manifests    []File      `json:"manifests"`
	Registry     []Key       `json:"registry,omitempty"`
	Skipped      []Skipped   `json:"skipped,omitempty"`
	Sandboxed    []Sandboxed `json:"sandboxed,omitempty"`
	Steps        []Steps     `json:"steps,omitempty"`
	Notes        []string    `json:"notes,omitempty"`

	tilde func(string) string
}

// Found is a browser found on the machine, and the path that showed it.
type Found struct {
	Browser  string `json:"browser"`
	Evidence string `json:"evidence"`
}

// File is one host manifest file.
type File struct {
	Path     string   `json:"path"`
	Browsers []string `json:"browsers"`
	Status   Status   `json:"status"`
	Detail   string   `json:"detail,omitempty"`
}

// Key is one Windows registry key; its default value names a manifest.
type Key struct {
	Key      string   `json:"key"` // with its root, e.g. HKCU\Software\...
	Value    string   `json:"value"`
	Browsers []string `json:"browsers"`
	Status   Status   `json:"status"`
	Detail   string   `json:"detail,omitempty"`
}

// Skipped is a browser install left out, and why.
type Skipped struct {
	Browser string `json:"browser"`
	Reason  string `json:"reason"`
}

// Sandboxed is a browser installed as a Flatpak or Snap, and what works
// for it.
type Sandboxed struct {
	Browser string `json:"browser"`
	Kind    string `json:"kind"` // flatpak or snap
	ID      string `json:"id"`
	Path    string `json:"path"`
	Works   bool   `json:"works"`
	Detail  string `json:"detail"`
	// Fix is what makes fillgate work with this browser, when it can.
	Fix string `json:"fix,omitempty"`
}

// Steps are the clicks that load the unpacked extension in some browsers
// (those whose clicks are the same).
type Steps struct {
	Browsers []string `json:"browsers"`
	Title    string   `json:"title"` // their names, for people
	Steps    []string `json:"steps"`
	Note     string   `json:"note,omitempty"`
}

// JSON is the report as indented JSON.
func (r *Report) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	return append(b, '\n'), nil
}

// verb is a status as a report says it: in a dry run, what would be done.
func (r *Report) verb(s Status) string {
	if !r.DryRun {
		return string(s)
	}
	switch s {
	case Created:
		return "would create"
	case Updated:
		return "would update"
	case Replaced:
		return "would replace"
	case Removed:
		return "would remove"
	case Kept:
		return "would keep"
	}
	return string(s)
}

func (r *Report) short(p string) string {
	if r.tilde == nil {
		return p
	}
	return r.tilde(p)
}

// Text is the report for people.
func (r *Report) Text() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	title := "fillgate " + r.Action
	if r.DryRun {
		title += " (dry run: nothing written)"
	}
	w("%s, %s scope, binary %s\n", title, r.Scope, r.short(r.Binary))

	if len(r.Found) > 0 {
		w("\nFound:\n")
		for _, f := range r.Found {
			w("  %-12s %s\n", f.Browser, r.short(f.Evidence))
		}
	}
	if len(r.Manifests) > 0 {
		w("\nHost manifests:\n")
		for _, m := range r.Manifests {
			w("  %-14s %s (%s)\n", r.verb(m.Status), r.short(m.Path), strings.Join(m.Browsers, ", "))
			if m.Detail != "" {
				w("  %-14s %s\n", "", m.Detail)
			}
		}
	}
	if len(r.Registry) > 0 {
		w("\nRegistry keys:\n")
		for _, k := range r.Registry {
			w("  %-14s %s = %s (%s)\n", r.verb(k.Status), k.Key, k.Value, strings.Join(k.Browsers, ", "))
			if k.Detail != "" {
				w("  %-14s %s\n", "", k.Detail)
			}
		}
	}
	if len(r.Skipped) > 0 {
		w("\nSkipped:\n")
		for _, s := range r.Skipped {
			w("  %-12s %s\n", s.Browser, s.Reason)
		}
	}
	if len(r.Sandboxed) > 0 {
		w("\nSandboxed browsers:\n")
		for _, s := range r.Sandboxed {
			w("  %-12s %s\n", s.Browser, s.Detail)
		}
	}
	if r.Extension != "" {
		w("\nExtension: %s %s\n", r.verb(r.Extension), r.short(r.ExtensionDir))
	}
	if len(r.Steps) > 0 {
		w("\nLoad the extension:\n")
		for _, s := range r.Steps {
			w("  %s:\n", s.Title)
			for i, step := range s.Steps {
				w("    %d. %s\n", i+1, step)
			}
			if s.Note != "" {
				w("    %s\n", s.Note)
			}
		}
		w("\nThen run `fillgate doctor`: it says what is still missing.\n")
	}
	if len(r.Notes) > 0 {
		w("\nNotes:\n")
		for _, n := range r.Notes {
			w("  - %s\n", n)
		}
	}
	return b.String()
}
