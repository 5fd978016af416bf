package policy

import (
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
)

// TestConstantsMatchFill keeps the field kinds and paths the policy reads
// the same as the ones internal/fill puts on the wire.
func TestConstantsMatchFill(t *testing.T) {
	for _, c := range [][2]string{
		{fieldPassword, fill.FieldPassword},
		{fieldOTP, fill.FieldOTP},
		{fieldPasskey, fill.FieldPasskey},
		{fieldOther, fill.FieldOther},
		{fieldNone, fill.FieldNone},
		{ViaExtension, fill.ViaExtension},
		{ViaCDP, fill.ViaCDP},
	} {
		if c[0] != c[1] {
			t.Errorf("policy has %q where fill has %q", c[0], c[1])
		}
	}
}
