// Package deploy tests the ways operators run askd (SPEC §17) with the real
// parts: the image make image builds, run with Podman (image_test.go);
// compose.yaml read by podman-compose (compose_test.go); the systemd unit
// checked by systemd-analyze, and askd's side of the notify protocol on a
// real NOTIFY_SOCKET (systemd_test.go); the release archives GoReleaser
// builds, and go install of a tag from a local module proxy
// (release_test.go).
//
// Podman, runc, podman-compose and systemd-analyze come from Debian (.ci/run
// installs them), GoReleaser from the Go module proxy at a pinned version.
// Without one of them its tests are skipped, loudly; with CI=true they fail.
package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/testserver"
)

func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	removeImage()
	testserver.RemoveBinary()
	os.Exit(code)
}

// tool is the path of the command name, which Debian's package pkg
// installs. Without it t is skipped, loudly, and fails when CI=true: CI
// installs every one (.ci/run).
func tool(t testing.TB, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is required in CI (apt-get install %s): %v", name, pkg, err)
	}
	skipNotice.Do(func() {
		os.Stderr.WriteString("deploy: " + name + " not found (apt-get install " + pkg + "): its tests are SKIPPED\n")
	})
	t.Skipf("SKIPPING: %s not found (apt-get install %s); CI runs this test", name, pkg)
	return ""
}

var skipNotice sync.Once

// repoRoot is the repository's top directory, where go.mod is.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("no go.mod at the repository's top (%s): %v", dir, err)
	}
	return dir
}

// output runs name with args in dir, the environment plus env, and returns
// its standard output; failing, it fails t with what it wrote.
func output(t testing.TB, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, errOut, err := runIn(dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// runIn runs name with args in dir, the environment plus env.
func runIn(dir string, env []string, name string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}
