package install

import (
	"errors"
	"fmt"

	"golang.org/x/sys/windows/registry"
)

// winRegistry is the real registry, in its 64-bit view.
type winRegistry struct{}

func defaultRegistry() Registry { return winRegistry{} }

func rootKey(r Root) (registry.Key, error) {
	switch r {
	case HKCU:
		return registry.CURRENT_USER, nil
	case HKLM:
		return registry.LOCAL_MACHINE, nil
	}
	return 0, fmt.Errorf("unknown registry root %q", r)
}

// Default implements Registry.
func (winRegistry) Default(root Root, key string) (string, bool, error) {
	rk, err := rootKey(root)
	if err != nil {
		return "", false, err
	}
	k, err := registry.OpenKey(rk, key, registry.QUERY_VALUE|registry.WOW64_64KEY)
	if errors.Is(err, registry.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("open %s\\%s: %w", root, key, err)
	}
	defer k.Close()
	v, _, err := k.GetStringValue("")
	if errors.Is(err, registry.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read %s\\%s: %w", root, key, err)
	}
	return v, true, nil
}

// SetDefault implements Registry.
func (winRegistry) SetDefault(root Root, key, value string) error {
	rk, err := rootKey(root)
	if err != nil {
		return err
	}
	k, _, err := registry.CreateKey(rk, key, registry.SET_VALUE|registry.WOW64_64KEY)
	if err != nil {
		return fmt.Errorf("create %s\\%s: %w", root, key, err)
	}
	defer k.Close()
	if err := k.SetStringValue("", value); err != nil {
		return fmt.Errorf("set %s\\%s: %w", root, key, err)
	}
	return nil
}

// Entries implements Registry.
func (winRegistry) Entries(root Root, key string) (int, bool, error) {
	rk, err := rootKey(root)
	if err != nil {
		return 0, false, err
	}
	k, err := registry.OpenKey(rk, key, registry.QUERY_VALUE|registry.ENUMERATE_SUB_KEYS|registry.WOW64_64KEY)
	if errors.Is(err, registry.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("open %s\\%s: %w", root, key, err)
	}
	defer k.Close()
	st, err := k.Stat()
	if err != nil {
		return 0, false, fmt.Errorf("read %s\\%s: %w", root, key, err)
	}
	return int(st.SubKeyCount) + int(st.ValueCount), true, nil
}

// DeleteKey deletes in the view of the running process, which for the
// 64-bit builds fillgate ships is the 64-bit view.
func (winRegistry) DeleteKey(root Root, key string) error {
	rk, err := rootKey(root)
	if err != nil {
		return err
	}
	if err := registry.DeleteKey(rk, key); err != nil && !errors.Is(err, registry.ErrNotExist) {
		return fmt.Errorf("delete %s\\%s: %w", root, key, err)
	}
	return nil
}
