//go:build unix

package gate

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// reachedCommand reports whether sig, which askd gate run got while its
// command ran, reached the command already. A terminal sends SIGINT and
// SIGQUIT (typed) and SIGHUP (hung up) to its foreground process group,
// which holds the command as well as askd when askd is in it: passed on
// again, the command would get a second Ctrl-C, which some programs take as
// "stop now, skip the clean-up" (terraform does). With no terminal (CI), or
// askd in the background, the signal was sent to askd alone.
func reachedCommand(sig os.Signal) bool {
	switch sig {
	case syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP:
	default:
		return false
	}
	tty, err := os.Open("/dev/tty") // the controlling terminal, whatever stdin is
	if err != nil {
		return false
	}
	defer tty.Close()
	// TIOCGPGRP writes a pid_t into IoctlGetInt's int: on a big-endian
	// machine the two never compare equal, and the signal is passed on as
	// without a terminal.
	fg, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPGRP)
	return err == nil && fg == unix.Getpgrp()
}
