package manifest

import (
	"fmt"
	"regexp"
	"slices"
)

// The ids the browsers' stores assigned to fillgate's extension.
//
// A Chromium-family browser takes an unpacked extension's id from the
// "key" in its manifest.json (ExtensionID). A store assigns its own id at
// the first upload, from a key pair it keeps, and the Chrome Web Store
// refuses a package whose manifest.json has a "key" ("key field is not
// allowed in manifest"; see docs/release.md). So the store copy runs under
// another id, and a host manifest must allow it as well as the unpacked
// one, or the browser does not let the store copy start fillgate.
//
// Set each id here, in a reviewed commit, once its store has assigned it
// (the dashboard shows it as the item id). It never changes after that.
// Empty: not listed in that store yet. Firefox needs nothing here: AMO
// keeps the add-on id in manifest.json (FirefoxID). Nothing else reads a
// store's listing yet; docs/release.md says what should once one is set.
const (
	// ChromeWebStoreID is the id in the Chrome Web Store, which Chrome,
	// Chromium, Brave, Vivaldi and Opera install from.
	ChromeWebStoreID = ""
	// EdgeAddonsID is the id in Microsoft Edge Add-ons.
	EdgeAddonsID = ""
)

// Origins are the caller origins fillgate's host accepts from a
// Chromium-family browser, and so the allowed_origins of the host
// manifests it writes: the unpacked extension's (ExtensionOrigin) first,
// then each store's.
type Origins []string

// listed is what Listed returns; never written after init.
var listed = Origins(chromiumOrigins(ExtensionID, ChromeWebStoreID, EdgeAddonsID))

// Listed are fillgate's origins: the unpacked extension's and those of the
// stores whose ids are set above.
func Listed() Origins { return slices.Clone(listed) }

// WithStore is o and the origin of id, a store's id for fillgate's
// extension: the origins once that store lists it (a test's, until its id
// is set above). A malformed id panics, as one set above does.
func (o Origins) WithStore(id string) Origins {
	return append(slices.Clone(o), chromiumOrigins(id)...)
}

// idPattern is a Chromium extension id: 32 letters a to p.
var idPattern = regexp.MustCompile(`^[a-p]{32}$`)

// chromiumOrigins is the origin of each id, skipping empty ones (a store
// that does not list fillgate yet). A malformed id panics: Chromium
// rejects a host manifest with a malformed origin whole, so one would
// lock every browser out.
func chromiumOrigins(ids ...string) []string {
	var out []string
	for _, id := range ids {
		if id == "" {
			continue
		}
		if !idPattern.MatchString(id) {
			panic(fmt.Sprintf("manifest: extension id %q is not 32 letters a to p", id))
		}
		out = append(out, "chrome-extension://"+id+"/")
	}
	return out
}

// valid says why o cannot be a host's origins, or nil: it must start with
// the unpacked extension's origin, and every entry must be an extension
// origin Chromium accepts (an empty or foreign list would let no copy of
// fillgate's extension, or another extension, start the host).
func (o Origins) valid() error {
	if len(o) == 0 || o[0] != ExtensionOrigin {
		return fmt.Errorf("the extension origins %v do not start with the unpacked extension's, %s", []string(o), ExtensionOrigin)
	}
	for _, origin := range o {
		if !originPattern.MatchString(origin) {
			return fmt.Errorf("the extension origin %q is not of the form chrome-extension://<id>/", origin)
		}
	}
	return nil
}

// IsStore reports whether origin is one of o but not the unpacked
// copy's: fillgate's extension as a store installed it. (Firefox's add-on
// id is the same either way.)
func (o Origins) IsStore(origin string) bool {
	return origin != ExtensionOrigin && slices.Contains(o, origin)
}
