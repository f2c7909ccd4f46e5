package main

import (
	"os"
	"testing"

	"github.com/askd-dev/askd/internal/testserver"
)

// TestMain removes the askd binary that tests running it built
// (testserver.Binary).
func TestMain(m *testing.M) {
	code := m.Run()
	testserver.RemoveBinary()
	os.Exit(code)
}
