package manifest

import "testing"

func TestExtensionIDFromKey(t *testing.T) {
	if ExtensionID != "eibglhghnpiamfbahofmkedefkffabnh" {
		t.Fatalf("ExtensionID = %s", ExtensionID)
	}
}
