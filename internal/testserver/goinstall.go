package testserver

import (
	"context"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// GoInstall installs the command pkg@version (pinned) from the Go module
// proxy once into the user's cache, where every test package and every
// later run finds it, and returns the command's path. A failed install
// fails the test: the Go module proxy is reachable wherever tests run.
//
// Test packages run as processes of their own, at once: an install takes a
// lock on its directory, as NPM's does, so that the second process waits
// for the first one's install and uses it.
func GoInstall(tb testing.TB, pkgAtVersion string) string {
	tb.Helper()
	pkg, version, ok := strings.Cut(pkgAtVersion, "@")
	if !ok || version == "" {
		tb.Fatalf("GoInstall(%q): want PACKAGE@VERSION", pkgAtVersion)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "askd-test", "go", strings.NewReplacer("/", "-", "@", "-").Replace(pkgAtVersion))
	name := path.Base(pkg)
	if majorSuffix.MatchString(name) { // .../goreleaser/v2 installs goreleaser
		name = path.Base(path.Dir(pkg))
	}
	bin := filepath.Join(dir, name)
	npmInstalling.Lock() // one install at a time in this process too
	defer npmInstalling.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		tb.Fatalf("lock %s: %v", dir, err)
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	began := time.Now()
	cmd := exec.CommandContext(ctx, "go", "install", pkgAtVersion)
	// Into a directory of its own; outside any module, so that nothing of
	// askd's go.mod applies.
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOBIN="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go install %s: %v\n%s", pkgAtVersion, err, out)
	}
	tb.Logf("go install %s: %s", pkgAtVersion, time.Since(began).Round(time.Millisecond))
	return bin
}

// majorSuffix is a module path's major version element (v2, v3, ...).
var majorSuffix = regexp.MustCompile(`^v[0-9]+$`)
