package testserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The agent CLIs tests run, pinned: the versions docs/clients.md
// describes. internal/agentcli runs them against askd; internal/install has
// them read the configs askd install mcp-gate writes.
const (
	ClaudeCodePackage = "@anthropic-ai/claude-code@2.1.328"
	CodexPackage      = "@openai/codex@0.171.0"
	GeminiCLIPackage  = "@google/gemini-cli@0.61.0"
)

// NPM installs the npm packages pkgs (each name@version: pinned) once
// into the user's cache, together, where every test package and every
// later run finds them, and returns the directory holding their
// node_modules. Packages that import one another (a compiler and the
// libraries it compiles against) are installed in one call. Without npm the
// test skips, loudly; in CI (CI=true) it fails.
//
// Test packages run as processes of their own, at once: an install takes a
// lock on its directory (a file lock where the system has one), so that
// the second process waits for the first one's install and uses it.
func NPM(tb testing.TB, pkgs ...string) string {
	tb.Helper()
	pkg := strings.Join(pkgs, " ")
	npm := lookNPM(tb, pkg)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "askd-test", strings.NewReplacer("@", "", "/", "-", " ", "+").Replace(pkg))
	npmInstalling.Lock()
	defer npmInstalling.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		tb.Fatalf("lock %s: %v", dir, err)
	}
	defer unlock()
	if installed(dir, pkgs) {
		return dir
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"askd-test","private":true}`+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	began := time.Now()
	cmd := exec.CommandContext(ctx, npm, append([]string{"install", "--no-audit", "--no-fund", "--silent"}, pkgs...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("npm install %s: %v\n%s", pkg, err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, installedMark), nil, 0o644); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("npm install %s: %s", pkg, time.Since(began).Round(time.Millisecond))
	return dir
}

// NPMBin is the path of the command bin of npm package pkg (NPM).
func NPMBin(tb testing.TB, pkg, bin string) string {
	tb.Helper()
	path := filepath.Join(NPM(tb, pkg), "node_modules", ".bin", bin)
	if _, err := os.Stat(path); err != nil {
		tb.Fatalf("npm package %s: no command %s: %v", pkg, bin, err)
	}
	return path
}

// Node is the path of node, for a test that runs a package's JavaScript;
// without it the test skips, loudly, and fails in CI.
func Node(tb testing.TB) string {
	tb.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("node is required in CI: %v", err)
		}
		tb.Skipf("SKIPPING: node not found (%v); CI runs this test", err)
	}
	return node
}

func lookNPM(tb testing.TB, pkg string) string {
	tb.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("npm is required in CI to install %s: %v", pkg, err)
		}
		tb.Skipf("SKIPPING: npm not found to install %s (%v); CI runs this test", pkg, err)
	}
	return npm
}

// installedMark is the file an install leaves once npm is done.
const installedMark = "installed"

// installed reports whether dir holds a finished install of pkgs: the
// mark, or, in a cache from before the mark, one package with its commands
// linked (npm links them last).
func installed(dir string, pkgs []string) bool {
	if _, err := os.Stat(filepath.Join(dir, installedMark)); err == nil {
		return true
	}
	if len(pkgs) != 1 {
		return false
	}
	name := pkgs[0]
	if i := strings.LastIndex(name, "@"); i > 0 {
		name = name[:i]
	}
	_, err := os.Stat(filepath.Join(dir, "node_modules", name, "package.json"))
	_, binErr := os.Stat(filepath.Join(dir, "node_modules", ".bin"))
	return err == nil && binErr == nil
}

var npmInstalling sync.Mutex
