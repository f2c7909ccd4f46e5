// Package agentcli_test runs the real Claude Code and Codex CLIs, installed
// from npm at pinned versions, in projects wired only by askd install,
// against the real askd binary and a scripted model endpoint on loopback:
// the hooks askd writes are run the way each CLI runs them (Claude Code with
// /bin/sh -c, which is dash on Debian and Ubuntu). The other CLIs of SPEC
// §18 (Copilot CLI, Qwen Code, Gemini CLI, OpenCode; agents_test.go) run
// the same way against one scripted-model server they share
// (scripted_test.go), each flow of issue 41 in one test
// (others_flows_test.go). Claude Code, Codex and the MCP Inspector's CLI
// also run with no askd hook at all, a filesystem MCP server of theirs put
// behind askd's MCP gate by askd install mcp-gate (mcpgate_test.go). In CI
// (CI=true) a missing node or npm fails the tests; elsewhere they skip,
// loudly.
package agentcli_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/testserver"
)

func TestMain(m *testing.M) {
	code := m.Run()
	stopModels()
	testserver.RemoveBinary()
	os.Exit(code)
}

// The CLIs the tests run, pinned (testserver: the install tests read the
// configs askd install mcp-gate writes with the same ones).
const (
	claudePackage = testserver.ClaudeCodePackage
	codexPackage  = testserver.CodexPackage
)

// installCLI installs an npm package once into the user's cache, shared
// with the other test packages and later runs (testserver.NPM), and returns
// the path of its command bin.
func installCLI(t *testing.T, pkg, bin string) string {
	t.Helper()
	return testserver.NPMBin(t, pkg, bin)
}

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
	return s.created(t, nil, session, 1)
}

// created waits for the nth ask (from 1) created in session, as pending
// does, failing the test at once if run (when not nil) ends first.
func (s *askdServer) created(t *testing.T, run *agentRun, session string, n int) *askd.Ask {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if run != nil {
		go func() {
			select {
			case <-run.exited:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	events, err := s.person().Events(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for ev := range events {
		if ev.Event.Action == "created" && ev.Event.Session == session && ev.Event.Ask != nil {
			if seen++; seen == n {
				return ev.Event.Ask
			}
		}
	}
	if run != nil && run.hasExited() {
		t.Fatalf("%s ended with %d asks created in session %s, want %d", run.name, seen, session, n)
	}
	t.Fatalf("%d asks created in session %s within 3 minutes, want %d", seen, session, n)
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
