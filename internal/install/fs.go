package install

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FS is the little of a filesystem that install, uninstall and doctor use.
// OSFS is the real one; tests pass an in-memory one to write macOS,
// Windows and system-wide paths on Linux.
type FS interface {
	// Stat follows symlinks, like os.Stat.
	Stat(name string) (fs.FileInfo, error)
	ReadFile(name string) ([]byte, error)
	// WriteFile replaces name atomically: readers see the old file or the
	// new one, never a part.
	WriteFile(name string, data []byte, perm fs.FileMode) error
	MkdirAll(name string, perm fs.FileMode) error
	// Remove removes a file or an empty directory.
	Remove(name string) error
	ReadDir(name string) ([]fs.DirEntry, error)
	EvalSymlinks(name string) (string, error)
}

// OSFS is the operating system's filesystem.
type OSFS struct{}

// Stat implements FS.
func (OSFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

// ReadFile implements FS.
func (OSFS) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }

// MkdirAll implements FS.
func (OSFS) MkdirAll(name string, perm fs.FileMode) error { return os.MkdirAll(name, perm) }

// Remove implements FS.
func (OSFS) Remove(name string) error { return os.Remove(name) }

// ReadDir implements FS.
func (OSFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

// EvalSymlinks implements FS.
func (OSFS) EvalSymlinks(name string) (string, error) { return filepath.EvalSymlinks(name) }

// WriteFile implements FS: it writes a temporary file next to name and
// renames it into place.
func (OSFS) WriteFile(name string, data []byte, perm fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".fillgate-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
