package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
)

// tsSDK is the TypeScript SDK version the interop test installs.
const tsSDK = "@modelcontextprotocol/sdk@1.32.2"

// TestTypeScriptClient: the official TypeScript SDK, installed from npm by
// the test, lists askd's tools and completes an ask_user_question round trip
// over streamable HTTP while the test answers through the HTTP API. In CI
// (CI=true) a missing node or npm fails the test; elsewhere it skips, loudly.
func TestTypeScriptClient(t *testing.T) {
	node, dir := tsClient(t, "interop.mjs")
	srv := start(t, app.Config{})
	session := "ts-sdk"
	js := runScript(t, node, dir, "interop.mjs", "ASKD_URL="+srv.URL, "ASKD_TOKEN="+srv.AgentToken, "ASKD_SESSION="+session)
	lines, stderr := js.lines, js.stderr
	a := pending(t, srv, session, 1)[0]
	// Answer once the client says a progress notification reached it.
	got := map[string]json.RawMessage{}
	for m := range lines {
		var step string
		json.Unmarshal(m["step"], &step)
		got[step] = m["value"]
		if step == "progress" {
			break
		}
	}
	if got["progress"] == nil {
		t.Fatalf("the client ended before any progress notification reached it: %v\n%s", got, stderr.String())
	}
	answer(t, srv, a.ID, &askd.Answer{Answers: map[string]askd.Choice{"Which database?": {Values: []string{"Postgres"}}}})

	for m := range lines {
		var step string
		json.Unmarshal(m["step"], &step)
		got[step] = m["value"]
	}
	if err := js.cmd.Wait(); err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var name string
	json.Unmarshal(got["version"], &name)
	if name != "askd" {
		t.Errorf("server name %q", name)
	}
	var tools []struct {
		Name                 string `json:"name"`
		AdditionalProperties *bool  `json:"additionalProperties"`
	}
	json.Unmarshal(got["tools"], &tools)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
		if tl.AdditionalProperties == nil || *tl.AdditionalProperties {
			t.Errorf("%s: additionalProperties not false", tl.Name)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, sixTools) {
		t.Errorf("tools %v", names)
	}
	var res struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
		Text              string          `json:"text"`
		IsError           bool            `json:"isError"`
		Progress          int             `json:"progress"`
	}
	if err := json.Unmarshal(got["result"], &res); err != nil {
		t.Fatalf("result %s: %v\n%s", got["result"], err, stderr.String())
	}
	var sc questionOut
	json.Unmarshal(res.StructuredContent, &sc)
	if res.IsError || sc.Answers["Which database?"] != "Postgres" || !jsonEqual(t, []byte(res.Text), res.StructuredContent) {
		t.Fatalf("result %s", got["result"])
	}
	if res.Progress == 0 {
		t.Errorf("no progress notifications reached the TypeScript client")
	}
}

// tsClient finds node and npm, installs the TypeScript SDK and copies the
// script from testdata beside it; it returns node and the directory. In CI
// (CI=true) a missing node or npm fails the test; elsewhere it skips, loudly.
func tsClient(t *testing.T, script string) (node, dir string) {
	t.Helper()
	node, nodeErr := exec.LookPath("node")
	npm, npmErr := exec.LookPath("npm")
	if nodeErr != nil || npmErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node and npm are required in CI for the TypeScript interop tests: %v %v", nodeErr, npmErr)
		}
		t.Skipf("SKIPPING the TypeScript SDK interop test: node or npm not found (%v %v); CI runs it", nodeErr, npmErr)
	}
	dir = tsClientDir(t, npm)
	src, err := os.ReadFile(filepath.Join("testdata", script))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, script), src, 0o644); err != nil {
		t.Fatal(err)
	}
	return node, dir
}

// script is a running node script: its JSON lines on stdout, its stdin, and
// its stderr.
type script struct {
	cmd    *exec.Cmd
	lines  <-chan map[string]json.RawMessage
	stdin  io.WriteCloser
	stderr *testserver.SyncBuffer
}

// runScript starts node on the script in dir with env added to the test's
// environment; the script is killed at the end of the test if still running.
func runScript(t *testing.T, node, dir, name string, env ...string) *script {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a safety net, generous for a busy machine
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, node, name)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	s := &script{cmd: cmd, stderr: &testserver.SyncBuffer{}}
	cmd.Stderr = s.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if s.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan map[string]json.RawMessage, 8)
	s.lines = lines
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
	}()
	return s
}

// step waits for the script's line for step and decodes its value into v.
func (s *script) step(t *testing.T, step string, v any) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-s.lines:
			if !ok {
				t.Fatalf("the script ended before step %q:\n%s", step, s.stderr.String())
			}
			var got string
			json.Unmarshal(m["step"], &got)
			if got != step {
				t.Fatalf("script step %q (%s), want %q\n%s", got, m["value"], step, s.stderr.String())
			}
			if err := json.Unmarshal(m["value"], v); err != nil {
				t.Fatalf("step %s: %s: %v", step, m["value"], err)
			}
			return
		case <-timeout:
			t.Fatalf("no step %q from the script:\n%s", step, s.stderr.String())
		}
	}
}

// tell writes one line to the script's stdin.
func (s *script) tell(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		t.Fatalf("script stdin: %v", err)
	}
}

// tsClientDir installs the TypeScript SDK once into the user's cache (reused
// by later runs) and returns the directory.
func tsClientDir(t *testing.T, npm string) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "askd-test", "ts-sdk-1.32.2")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err == nil {
		return dir
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"askd-interop","private":true,"type":"module"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--silent", tsSDK)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install %s: %v\n%s", tsSDK, err, out)
	}
	return dir
}

// TestTypeScriptClientCutOff: the official TypeScript SDK gives up on a
// blocking ask_user_question after its per-request timeout, over streamable
// HTTP and over stdio through askd mcp (the SDK's StdioClientTransport
// starting the real binary). The ask stays pending (SPEC §2.1); the person
// answers; the same questions called again return that answer from the same
// ask. A second question cut off and never called again is told at the Stop
// hook, once. No response ever reaches the SDK for a call it gave up on: it
// reports none for an unknown message ID.
func TestTypeScriptClientCutOff(t *testing.T) {
	node, dir := tsClient(t, "cutoff.mjs")
	srv := start(t, app.Config{})
	for _, mode := range []string{"http", "stdio"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			session := "ts-cutoff-" + mode
			env := []string{"ASKD_URL=" + srv.URL, "ASKD_TOKEN=" + srv.AgentToken, "ASKD_SESSION=" + session, "ASKD_TRANSPORT=" + mode}
			if mode == "stdio" {
				env = append(env, "ASKD_BINARY="+askdBinary(t))
			}
			sc := runScript(t, node, dir, "cutoff.mjs", env...)

			a := tsGaveUp(t, srv, sc, "cutoff", session)
			answer(t, srv, a.ID, &askd.Answer{Answers: map[string]askd.Choice{"Which database?": {Values: []string{"Postgres"}}}})
			sc.tell(t, "again")
			var again struct {
				StructuredContent questionOut `json:"structuredContent"`
				IsError           bool        `json:"isError"`
			}
			sc.step(t, "again", &again)
			if again.IsError || again.StructuredContent.Answers["Which database?"] != "Postgres" {
				t.Fatalf("called again after the answer: %+v, want Postgres", again)
			}
			reattached(t, srv, session, a.ID)

			b := tsGaveUp(t, srv, sc, "cutoff2", session)
			answer(t, srv, b.ID, &askd.Answer{Answers: map[string]askd.Choice{"Which region?": {Values: []string{"Europe"}}}})
			toldAtStop(t, srv, session, b.ID, "Europe", "Which database?")

			sc.tell(t, "close")
			var problems []string
			sc.step(t, "problems", &problems)
			if err := sc.cmd.Wait(); err != nil {
				t.Fatalf("node: %v\n%s", err, sc.stderr.String())
			}
			if len(problems) > 0 || strings.Contains(sc.stderr.String(), "unknown message ID") {
				t.Fatalf("the SDK reported problems: %q\nstderr:\n%s", problems, sc.stderr.String())
			}
		})
	}
}

// tsGaveUp reads the script's report that a call failed on its client
// timeout, and returns the call's ask once the server has it as cut off.
func tsGaveUp(t *testing.T, srv *testserver.Server, sc *script, step, session string) *askd.Ask {
	t.Helper()
	var failed struct {
		Code     *int            `json:"code"`
		Message  string          `json:"message"`
		Returned json.RawMessage `json:"returned"`
	}
	sc.step(t, step, &failed)
	// -32001 is the SDK's RequestTimeout.
	if failed.Returned != nil || failed.Code == nil || *failed.Code != -32001 || !strings.Contains(failed.Message, "timed out") {
		t.Fatalf("%s: %+v (returned %s), want the SDK's request timeout", step, failed, failed.Returned)
	}
	asks := pending(t, srv, session, 1)
	if len(asks) != 1 {
		t.Fatalf("%s: %s pending, want the one ask", step, describe(asks))
	}
	return cutOffWait(t, srv, asks[0].ID)
}
