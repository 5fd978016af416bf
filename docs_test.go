package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

var (
	mdFence   = regexp.MustCompile("(?s)```.*?```")
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	mdScheme  = regexp.MustCompile(`^[a-z]+:`)
)

// TestDocsLinks checks the reference a newcomer follows from the README:
// every relative link in the README, PROTOCOL.md and docs/ names a file
// that exists and, with a #fragment, a heading in it (GitHub's anchors),
// and the README links every file in docs/.
func TestDocsLinks(t *testing.T) {
	docs, err := filepath.Glob("docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md found (err %v)", err)
	}
	files := append([]string{"README.md", "PROTOCOL.md", "extension/README.md"}, docs...)
	linked := map[string]bool{}
	for _, f := range files {
		for _, target := range links(t, f) {
			if mdScheme.MatchString(target) {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := f
			if path != "" {
				dest = filepath.Clean(filepath.Join(filepath.Dir(f), path))
			}
			if f == "README.md" {
				linked[dest] = true
			}
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s links %s: %v", f, target, err)
				continue
			}
			if anchor != "" && strings.HasSuffix(dest, ".md") && !anchors(t, dest)[anchor] {
				t.Errorf("%s links %s: %s has no such heading", f, target, dest)
			}
		}
	}
	for _, d := range docs {
		if !linked[d] {
			t.Errorf("README.md does not link %s", d)
		}
	}
}

// links returns the targets of the Markdown links in file f, outside code
// blocks.
func links(t *testing.T, f string) []string {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range mdLink.FindAllStringSubmatch(mdFence.ReplaceAllString(string(b), ""), -1) {
		out = append(out, m[1])
	}
	return out
}

// anchors returns the fragments GitHub gives the headings of file f:
// lower case, letters, digits, spaces, '-' and '_' kept, spaces made '-',
// and "-N" after a repeated one.
func anchors(t *testing.T, f string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	out, seen, code := map[string]bool{}, map[string]int{}, false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			code = !code
			continue
		}
		m := mdHeading.FindStringSubmatch(line)
		if code || m == nil {
			continue
		}
		s := strings.Map(func(r rune) rune {
			switch {
			case r == ' ':
				return '-'
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				return r
			}
			return -1
		}, strings.ToLower(m[1]))
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}
