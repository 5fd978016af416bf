// Package manifest knows fillgate's identity in the browsers: the native
// host's name, the extension's public key and the ids derived from it, and
// the host-manifest files each browser family reads.
package manifest

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
)

// HostName is the native-messaging host name the extension connects to.
const HostName = "dev.fillgate.host"

// FirefoxID is the add-on id in extension/manifest.json
// (browser_specific_settings.gecko.id).
const FirefoxID = "fillgate@fillgate.dev"

// ExtensionKey is the base64 DER (SubjectPublicKeyInfo) public key in
// extension/manifest.json's "key". It fixes the Chromium extension id; the
// private key is not in the repository.
const ExtensionKey = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAkj4pSBJohQ5KIG0iSr7mUbEnIR0MirtOwhQbIrfEAQFJ9rjSsUjaXlZPGY+6kwm3X9kt7cxFBlcPYbCI455ZVYCyRcxoN6Z7PZQFrJzLHjOJ0lSflJ4AQ7CLvEoWKW9l1IOH7x4gRQT/9y8ofD8Hu9RGZv6s/h4GWZtolOi1shNbecJNc1oysRDODtDoKHkaIo5leu2gOmXwPWHNuiin/1BtsOx4PaMNkkltD4Bwfosy83pyUfOVT1Yq9fohtTZLogqo0SILEuTSkp8KMD5HBLA2vlGZTgtnkMXiKKoqAW7Lja0LKFnBNDR+dM9Xr/eCFaM1qX0p/7mkg0hqKtb2IQIDAQAB"

// ExtensionID is the Chromium extension id that ExtensionKey yields.
var ExtensionID = mustID(ExtensionKey)

// ExtensionOrigin is the origin Chromium-family browsers pass to the host.
var ExtensionOrigin = "chrome-extension://" + ExtensionID + "/"

// IDFromKey computes a Chromium extension id from a base64 DER public key:
// the first 32 hex digits of its SHA-256, with 0-f mapped to a-p.
func IDFromKey(b64 string) (string, error) {
	der, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", fmt.Errorf("extension key is not base64: %w", err)
	}
	sum := sha256.Sum256(der)
	id := make([]byte, 32)
	for i := range 16 {
		id[2*i] = 'a' + sum[i]>>4
		id[2*i+1] = 'a' + sum[i]&0x0f
	}
	return string(id), nil
}

func mustID(b64 string) string {
	id, err := IDFromKey(b64)
	if err != nil {
		panic(err)
	}
	return id
}
