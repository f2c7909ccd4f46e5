//go:build !unix

package sqlite

import "errors"

// Without unix file systems' calls, an I/O error stays an I/O error and the
// file's identity is not watched.

func noSpace(name string) bool { return false }

func unwritable(name string) error { return nil }

func statID(name string) (fileID, error) { return fileID{}, errors.ErrUnsupported }
