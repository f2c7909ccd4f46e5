package pgtest

import "syscall"

// procAttr runs a command as cred (nil: as ourselves). A server also gets
// SIGQUIT (immediate shutdown) should the test process die without stopping it.
func procAttr(cred *syscall.Credential, server bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Credential: cred}
	if server {
		a.Pdeathsig = syscall.SIGQUIT
	}
	return a
}
