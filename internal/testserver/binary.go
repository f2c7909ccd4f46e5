package testserver

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// Binary returns the path of an askd binary built from cmd/askd, once per
// test process, for tests that run the real binary as a subprocess. A
// package that uses it calls RemoveBinary from its TestMain after the tests.
func Binary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "askd-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "askd")
		if runtime.GOOS == "windows" {
			binPath += ".exe"
		}
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/askd-dev/askd/cmd/askd").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build askd: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binPath
}

// RemoveBinary removes the binary Binary built, if any.
func RemoveBinary() {
	if binDir != "" {
		os.RemoveAll(binDir)
	}
}
