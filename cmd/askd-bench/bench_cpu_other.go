//go:build !unix

package main

// selfCPU is this process's CPU seconds: not measured here (0).
func selfCPU() float64 { return 0 }
