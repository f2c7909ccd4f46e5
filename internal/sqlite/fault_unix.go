//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// noSpace reports whether the file system holding name has no block left for
// an unprivileged writer.
func noSpace(name string) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dirOf(name), &st); err != nil {
		return false
	}
	return st.Bavail == 0
}

// unwritable returns why the database at name, or the directory its -wal and
// -shm files go in, cannot be written (access(2) with W_OK, which refuses an
// immutable file or a read-only mount even to root), or nil.
func unwritable(name string) error {
	for _, n := range []string{name, name + "-wal", dirOf(name)} {
		err := syscall.Access(n, 2 /* W_OK */)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			continue
		}
		return fmt.Errorf("%s: %w", n, err)
	}
	return nil
}

// statID returns the identity of the file at name.
func statID(name string) (fileID, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return fileID{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, errors.ErrUnsupported
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, nil
}
