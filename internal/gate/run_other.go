//go:build !unix

package gate

import "os"

// reachedCommand: without Unix process groups, every signal askd gate run
// gets is passed on to its command.
func reachedCommand(os.Signal) bool { return false }
