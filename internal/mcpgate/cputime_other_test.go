//go:build !unix

package mcpgate

import "time"

// cpuTime is 0 where the benchmark does not read a process's CPU time.
func cpuTime() time.Duration { return 0 }
