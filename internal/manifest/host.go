package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Family is a browser family. It decides which allow-list a host manifest
// carries: Chromium-family browsers read allowed_origins, Firefox-family
// browsers allowed_extensions.
type Family string

const (
	// Chromium is Chrome, Chromium, Edge, Brave, Vivaldi, Opera and Arc.
	Chromium Family = "chromium"
	// Firefox is Firefox, LibreWolf and Waterfox.
	Firefox Family = "firefox"
)

// Description is the description fillgate writes into its host manifests.
const Description = "fillgate: types a password or one-time code into the focused login field; the agent never sees it"

// FileName is the host manifest's file name. Linux and macOS browsers look
// for exactly this name; on Windows the registry points at the file, and
// fillgate uses the same name there.
const FileName = HostName + ".json"

// Host is a native-messaging host manifest: the JSON file a browser reads to
// find and launch a host. See
// https://developer.chrome.com/docs/extensions/develop/concepts/native-messaging#native-messaging-host
// and https://developer.mozilla.org/en-US/docs/Mozilla/Add-ons/WebExtensions/Native_manifests.
type Host struct {
	Name              string   `json:"name"`
	Description       string   `json:"description"`
	Path              string   `json:"path"`
	Type              string   `json:"type"`
	AllowedOrigins    []string `json:"allowed_origins,omitempty"`
	AllowedExtensions []string `json:"allowed_extensions,omitempty"`
}

// New returns fillgate's host manifest for a browser family, launching
// binary (which must be absolute and symlink-resolved: browsers on Linux and
// macOS require an absolute path, and a symlink that later moves would
// break the manifest silently); a Chromium family's allows origins.
func New(f Family, binary string, origins Origins) (Host, error) {
	h := Host{Name: HostName, Description: Description, Path: binary, Type: "stdio"}
	switch f {
	case Chromium:
		if err := origins.valid(); err != nil {
			return Host{}, err
		}
		h.AllowedOrigins = slices.Clone(origins)
	case Firefox:
		h.AllowedExtensions = []string{FirefoxID}
	default:
		return Host{}, fmt.Errorf("unknown browser family %q", f)
	}
	if binary == "" {
		return Host{}, errors.New("host manifest needs the binary's path")
	}
	return h, nil
}

// Marshal encodes the manifest as indented JSON ending in a newline. The
// encoding is stable, so the same manifest always gives the same bytes.
func (h Host) Marshal() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(h); err != nil {
		return nil, fmt.Errorf("encode host manifest: %w", err)
	}
	return b.Bytes(), nil
}

// Parse decodes a host manifest. A UTF-8 byte order mark is skipped, as
// Firefox does. A syntax error names its line and column.
func Parse(data []byte) (Host, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var h Host
	if err := json.Unmarshal(data, &h); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			line, col := position(data, syn.Offset)
			return Host{}, fmt.Errorf("not valid JSON: line %d, column %d: %w", line, col, err)
		}
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			return Host{}, fmt.Errorf("not a host manifest: field %q has the wrong type: %w", typ.Field, err)
		}
		return Host{}, fmt.Errorf("not a host manifest: %w", err)
	}
	return h, nil
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}
