package passkey

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// collectedClientData is WebAuthn's CollectedClientData (§5.8.1) as
// fillgate writes it, in the order browsers write its members.
// crossOrigin is always false: fillgate answers no call from a frame of
// another origin than its top page, so topOrigin never appears.
type collectedClientData struct {
	Type        Ceremony `json:"type"`
	Challenge   string   `json:"challenge"`
	Origin      string   `json:"origin"`
	CrossOrigin bool     `json:"crossOrigin"`
}

// ClientData writes the clientDataJSON of a ceremony: its type, the
// relying party's challenge (the raw bytes the page passed, which it
// carries as base64url without padding), and the page's verified origin.
// The page supplies the challenge only; everything else is fillgate's.
func ClientData(c Ceremony, challenge []byte, o Origin) ([]byte, error) {
	if c != Create && c != Get {
		return nil, fmt.Errorf("passkey: no ceremony %s", quote(string(c)))
	}
	if len(challenge) == 0 {
		return nil, errors.New("passkey: the relying party sent no challenge")
	}
	if o.host == "" {
		return nil, errors.New("passkey: no origin for the client data")
	}
	b, err := json.Marshal(collectedClientData{
		Type:      c,
		Challenge: base64.RawURLEncoding.EncodeToString(challenge),
		Origin:    o.String(),
	})
	if err != nil {
		return nil, fmt.Errorf("passkey: encode the client data: %w", err)
	}
	return b, nil
}

// clientDataHash is SHA-256 of the client data, which an assertion signs.
func clientDataHash(clientDataJSON []byte) [32]byte { return sha256.Sum256(clientDataJSON) }
