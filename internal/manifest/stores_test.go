package manifest

import (
	"reflect"
	"strings"
	"testing"
)

// storeID is an id such as a store assigns.
const storeID = "abcdefghijklmnopabcdefghijklmnop"

// storeOrigin is storeID's origin.
const storeOrigin = "chrome-extension://" + storeID + "/"

func TestStoreIDsAreWellFormed(t *testing.T) {
	// chromiumOrigins panics on a malformed id, so a bad constant fails
	// every test run, not a person's browser.
	o := Listed()
	if o[0] != ExtensionOrigin {
		t.Errorf("the unpacked extension's origin comes first: got %v, want %v", o[0], ExtensionOrigin)
	}
	if len(o) != 1+len(nonEmpty(ChromeWebStoreID, EdgeAddonsID)) {
		t.Errorf("Listed() has %d items (%v), want %d", len(o), o, 1+len(nonEmpty(ChromeWebStoreID, EdgeAddonsID)))
	}
	o[0] = "changed"
	if Listed()[0] != ExtensionOrigin {
		t.Error("a change to what Listed returned changed what it returns next")
	}
}

func nonEmpty(ids ...string) []string {
	var out []string
	for _, id := range ids {
		if id != "" {
			out = append(out, id)
		}
	}
	return out
}

func TestChromiumOriginsRejectMalformedIDs(t *testing.T) {
	if got, want := chromiumOrigins("", storeID, ""), []string{"chrome-extension://" + storeID + "/"}; !reflect.DeepEqual(got, want) {
		t.Errorf("chromiumOrigins(\"\", storeID, \"\") = %v, want %v", got, want)
	}
	for _, bad := range []string{"ABCDEFGHIJKLMNOPABCDEFGHIJKLMNOP", "abcdefghijklmnopabcdefghijklmnoz", "abc", storeID + "/", "*"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("chromiumOrigins(%q) did not panic, want a panic", bad)
				}
			}()
			chromiumOrigins(bad)
		}()
	}
}

func TestStoreCopyIsAllowed(t *testing.T) {
	store, origins := storeOrigin, Listed().WithStore(storeID)
	h, err := New(Chromium, "/usr/bin/fillgate", origins)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{ExtensionOrigin, store}; !reflect.DeepEqual(h.AllowedOrigins, want) {
		t.Errorf("the unpacked copy and the store's: got %v, want %v", h.AllowedOrigins, want)
	}
	if got := h.Check(Chromium, origins, unixAbs); len(got) != 0 {
		t.Errorf("h.Check = %v, want it empty", got)
	}

	for _, origin := range []string{ExtensionOrigin, store} {
		c, err := ParseCaller([]string{origin}, origins)
		if err != nil {
			t.Fatalf("%v: %v", origin, err)
		}
		if want := (Caller{Family: Chromium, ID: origin}); !reflect.DeepEqual(c, want) {
			t.Errorf("ParseCaller(%q) = %+v, want %+v", origin, c, want)
		}
	}
	_, err = ParseCaller([]string{"chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"}, origins)
	if want := "not fillgate's extension (" + ExtensionOrigin + " or " + store + ")"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ParseCaller of another extension: error %v; want one containing %q", err, want)
	}

	if !origins.IsStore(store) {
		t.Errorf("IsStore(store): got false, want true")
	}
	if origins.IsStore(ExtensionOrigin) {
		t.Errorf("origins.IsStore(ExtensionOrigin): got true, want false")
	}
	if origins.IsStore("chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/") {
		t.Errorf("IsStore(\"chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/\"): got true, want false")
	}
}

// TestManifestBeforeListingMissesStore: a host manifest written before
// fillgate was listed allows only the unpacked copy, so the store's copy
// could not start the host; Check says so, and doctor's fix (fillgate
// install) rewrites it.
func TestManifestBeforeListingMissesStore(t *testing.T) {
	store := storeOrigin
	h := Host{Name: HostName, Type: "stdio", Path: "/usr/bin/fillgate", AllowedOrigins: []string{ExtensionOrigin}}
	if got, want := h.Check(Chromium, Listed().WithStore(storeID), unixAbs), []Problem{{Field: "allowed_origins", Detail: "does not list " + store + " (it lists " + ExtensionOrigin + ")"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("h.Check = %v, want %v", got, want)
	}
}

func TestBuildInfo(t *testing.T) {
	for _, c := range []struct {
		b    BuildInfo
		want string
	}{
		{BuildInfo{Version: "0.1.0"}, "0.1.0"},
		{BuildInfo{Version: "0.1.0", Commit: "0123456789abcdef0123456789abcdef01234567", Date: "2026-05-01T10:00:00Z"}, "0.1.0 (commit 0123456789ab, 2026-05-01T10:00:00Z)"},
		{BuildInfo{Version: "0.1.0", Commit: "0123456789abcdef", Modified: true}, "0.1.0 (commit 0123456789ab with uncommitted changes)"},
	} {
		if got := c.b.String(); got != c.want {
			t.Errorf("%+v.String() = %q, want %q", c.b, got, c.want)
		}
	}

	// Stamped values win over the toolchain's record.
	oldC, oldD := Commit, Date
	t.Cleanup(func() { Commit, Date = oldC, oldD })
	Commit, Date = "feedfacefeedfacefeedfacefeedfacefeedface", "2026-05-01T10:00:00Z"
	if got, want := Build(), (BuildInfo{Version: Version, Commit: Commit, Date: Date}); !reflect.DeepEqual(got, want) {
		t.Errorf("Build() = %+v, want %+v", got, want)
	}
}

// TestOriginsThatCannotBeAHostsAreRefused: an empty list, one without the
// unpacked copy first, or one with a malformed entry makes no manifest
// and passes no manifest's check (else a manifest listing only another
// extension would pass).
func TestOriginsThatCannotBeAHostsAreRefused(t *testing.T) {
	foreign := "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"
	h := Host{Name: HostName, Type: "stdio", Path: "/usr/bin/fillgate", AllowedOrigins: []string{foreign}}
	for _, o := range []Origins{nil, {}, {foreign}, {foreign, ExtensionOrigin}, {ExtensionOrigin, "chrome-extension://x/"}} {
		if _, err := New(Chromium, "/usr/bin/fillgate", o); err == nil {
			t.Errorf("New with origins %q made a manifest", o)
		}
		if got := h.Check(Chromium, o, unixAbs); len(got) == 0 {
			t.Errorf("with origins %q, a manifest that lists only another extension passed its check", o)
		}
	}
	if _, err := New(Firefox, "/usr/bin/fillgate", nil); err != nil {
		t.Errorf("New(Firefox) needs no Chromium origins: %v", err)
	}
}
