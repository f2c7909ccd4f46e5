//go:build unix

package testserver

import (
	"os"
	"syscall"
)

// lockDir takes an exclusive lock on dir (on a file beside it), waiting for
// another process that holds it; unlock gives it back.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
