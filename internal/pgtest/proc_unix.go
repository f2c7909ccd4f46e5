//go:build unix && !linux

package pgtest

import "syscall"

// procAttr runs a command as cred (nil: as ourselves). Without Linux's
// parent-death signal, a server outlives a test process that dies without
// calling Main's cleanup.
func procAttr(cred *syscall.Credential, server bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred}
}
