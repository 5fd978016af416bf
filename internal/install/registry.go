package install

// Root is a Windows registry root key.
type Root string

const (
	// HKCU is HKEY_CURRENT_USER: per-user installs.
	HKCU Root = "HKCU"
	// HKLM is HKEY_LOCAL_MACHINE: --system installs.
	HKLM Root = "HKLM"
)

// Registry is the little of the Windows registry install needs: the
// default value of a key, which for a native-messaging host names its
// manifest file. Implementations use the 64-bit view of the registry.
// On Windows the default is the real registry (x/sys/windows/registry);
// tests pass a fake.
type Registry interface {
	// Default returns the default value of key under root; ok is false
	// when the key or its default value does not exist.
	Default(root Root, key string) (value string, ok bool, err error)
	// SetDefault creates key if needed and sets its default value.
	SetDefault(root Root, key, value string) error
	// DeleteKey deletes key, which must have no subkeys.
	DeleteKey(root Root, key string) error
	// Entries counts key's subkeys and values; ok is false when key does
	// not exist. Install records the parent keys it creates (ok false
	// before), and uninstall deletes those left with no entries.
	Entries(root Root, key string) (n int, ok bool, err error)
}
