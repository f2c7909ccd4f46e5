// Package agentcli_test runs the real Claude Code and Codex CLIs, installed
// from npm at pinned versions, in projects wired only by askd install,
// against the real askd binary and a scripted model endpoint on loopback:
// the hooks askd writes are run the way each CLI runs them (Claude Code with
// /bin/sh -c, which is dash on Debian and Ubuntu). In CI (CI=true) a missing
// node or npm fails the tests; elsewhere they skip, loudly.
package agentcli_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/testserver"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.RemoveBinary()
	os.Exit(code)
}

// The CLIs the tests run, pinned: the versions docs/clients.md and
// ../shared/reference describe.
const (
	claudePackage = "@anthropic-ai/claude-code@2.1.328"
	codexPackage  = "@openai/codex@0.171.0"
)

// installCLI installs an npm package once into the user's cache (reused by
// later runs) and returns the path of its command bin.
func installCLI(t *testing.T, pkg, bin string) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("npm is required in CI to install %s: %v", pkg, err)
		}
		t.Skipf("SKIPPING: npm not found to install %s (%v); CI runs this test", pkg, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "askd-test", strings.NewReplacer("@", "", "/", "-").Replace(pkg))
	path := filepath.Join(dir, "node_modules", ".bin", bin)
	installing.Lock()
	defer installing.Unlock()
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"askd-agentcli","private":true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--silent", pkg)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install %s: %v\n%s", pkg, err, out)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("npm install %s: no %s: %v", pkg, bin, err)
	}
	return path
}

var installing sync.Mutex

// askdServer is the real askd binary serving a fresh SQLite database, with
// the human and agent tokens its first start printed.
type askdServer struct {
	*testserver.Served
	bin string
}

func startAskd(t *testing.T, extra ...string) *askdServer {
	t.Helper()
	return &askdServer{Served: testserver.ServeBinary(t, extra...), bin: testserver.Binary(t)}
}

func (s *askdServer) person() *client.Client { return client.New(s.URL, s.Human) }

// pending waits for the first ask created in session, from the inbox's
// event stream (replayed from the start, so an ask made before the stream
// opened counts), and returns it as the event gave it. A CLI starts slowly
// on a busy machine: the bound is generous.
func (s *askdServer) pending(t *testing.T, session string) *askd.Ask {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	events, err := s.person().Events(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for ev := range events {
		if ev.Event.Action == "created" && ev.Event.Session == session && ev.Event.Ask != nil {
			return ev.Event.Ask
		}
	}
	t.Fatalf("no ask was created in session %s within 3 minutes", session)
	return nil
}

// run runs the askd binary with args in dir, for askd install.
func (s *askdServer) run(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(s.bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("askd %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// agentEnv is the environment a CLI runs in: only what a person who
// followed the README would have (PATH with askd on it, HOME, the askd
// variables), plus what points the CLI at the scripted model.
func agentEnv(s *askdServer, home, session string, model ...string) []string {
	env := []string{
		"PATH=" + filepath.Dir(s.bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home,
		"ASKD_URL=" + s.URL,
		"ASKD_TOKEN=" + s.Agent,
		"ASKD_SESSION=" + session,
	}
	return append(env, model...)
}
