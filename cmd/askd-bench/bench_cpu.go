package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// clockTicks is the unit of /proc/PID/stat's CPU times (USER_HZ), 100 on
// every Linux askd bench runs on.
const clockTicks = 100

// procCPU sums the user and system CPU seconds of every process whose
// /proc/PID/comm is name (PostgreSQL's backends, for instance). Processes
// that exit between two samples take their time with them, so count
// long-lived ones.
func procCPU(name string) (float64, error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		return 0, fmt.Errorf("--cpu-of: no /proc to read process times from (Linux only)")
	}
	total := 0.0
	for _, path := range stats {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ... utime(14) stime(15): comm may hold
		// spaces, so split after its closing parenthesis.
		open, end := bytes.IndexByte(raw, '('), bytes.LastIndexByte(raw, ')')
		if open < 0 || end < open || string(raw[open+1:end]) != name {
			continue
		}
		f := bytes.Fields(raw[end+1:])
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseFloat(string(f[11]), 64)
		s, _ := strconv.ParseFloat(string(f[12]), 64)
		total += (u + s) / clockTicks
	}
	return total, nil
}
