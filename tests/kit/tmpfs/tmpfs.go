//go:build linux

// Package tmpfs gives a test a small disk of its own to fill: a tmpfs
// mounted over a directory (root only, as tests/run runs), so that what
// fillgate does when its disk is full can be seen.
package tmpfs

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// Page is tmpfs's unit of allocation, in bytes.
const Page = 4096

// Mount mounts a tmpfs of size bytes (a multiple of Page) at dir, which
// it makes if missing, until the test ends.
func Mount(t testing.TB, dir string, size int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size="+strconv.Itoa(size)+",mode=0700"); err != nil {
		t.Fatalf("mount a tmpfs at %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
}

// Fill writes a file in dir until its disk is full and returns the file,
// whose removal frees the disk again.
func Fill(t testing.TB, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, Page)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill the disk: %v", err)
			}
			return p
		}
	}
}
