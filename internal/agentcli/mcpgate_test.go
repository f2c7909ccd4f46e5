package agentcli_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
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

// The MCP gate (askd gate mcp, SPEC §14) with real clients that have no
// askd hooks, wired only by askd install mcp-gate: claude -p and codex exec
// against their scripted models, and the MCP Inspector's CLI. Each drives
// the real filesystem MCP server from npm through the gate the real askd
// binary runs: a write waits for the person in askd and does what they
// decide; a read --allow names goes through with no ask.

// filesystemPackage is the MCP reference filesystem server, pinned as
// internal/mcpgate's tests pin it.
const filesystemPackage = "@modelcontextprotocol/server-filesystem@2026.8.31"

// inspectorPackage is the MCP Inspector, pinned; its --cli mode is a
// client of one server, run once per method. Its package wants Node
// 22.19 or later, so it runs on the pinned node of nodePackage.
const inspectorPackage = "@modelcontextprotocol/inspector@2.12.0"

// filesystemServer installs the filesystem server (once, into the user's
// cache) and returns the command and arguments of a client's entry that
// serves dir: node running its script.
func filesystemServer(t *testing.T, dir string) (command string, args []string) {
	t.Helper()
	script, err := filepath.EvalSymlinks(testserver.NPMBin(t, filesystemPackage, "mcp-server-filesystem"))
	if err != nil {
		t.Fatal(err)
	}
	return testserver.Node(t), []string{script, dir}
}

// gatedFiles makes dir, for the filesystem server to serve, with
// notes.txt in it for the read --allow lets through.
func gatedFiles(t *testing.T, dir string) (notes string) {
	t.Helper()
	notes = filepath.Join(dir, "notes.txt")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notes, []byte("read without asking"), 0o644); err != nil {
		t.Fatal(err)
	}
	return notes
}

// tempDir is a new temporary directory as the filesystem server names it
// (its links resolved).
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// The model's writes: one the person approves, one they reject.
const (
	approvedContent = "line one\nline two: ünïcode, `backticks`, \"quotes\"\n"
	rejectComment   = "not in this directory"
)

// installGate runs askd install mcp-gate on config as a person who followed
// the README would: askd on PATH (a Claude Desktop entry names the askd
// found there by its full path), ASKD_URL and ASKD_TOKEN exported,
// read_file allowed.
func installGate(t *testing.T, s *askdServer, dir, config string, extra ...string) {
	t.Helper()
	path := "PATH=" + filepath.Dir(s.bin) + string(os.PathListSeparator) + os.Getenv("PATH")
	out := s.run(t, dir, []string{path, "ASKD_URL=" + s.URL, "ASKD_TOKEN=" + s.Agent},
		append([]string{"install", "mcp-gate", "--config", config, "--server", "filesystem", "--allow", "read_file"}, extra...)...)
	t.Logf("askd install mcp-gate:\n%s", out)
}

// decideWrites plays the person: the first approval asked in session (the
// approved write) is approved once the test has checked that its file does
// not exist yet; the second (the rejected write), rejected with a comment.
// It returns both asks, as they were answered.
func decideWrites(t *testing.T, s *askdServer, session, dir string) (approved, rejected *askd.Ask) {
	t.Helper()
	ctx := context.Background()
	first := s.created(t, nil, session, 1)
	if first.Kind != askd.KindApproval || first.ToolName != "mcp__filesystem__write_file" || first.Source != "filesystem" {
		t.Fatalf("the first ask: %s %q from %q, want the approval of mcp__filesystem__write_file through filesystem", first.Kind, first.ToolName, first.Source)
	}
	var args struct{ Path, Content string }
	if err := json.Unmarshal(first.Payload, &args); err != nil || args.Path != filepath.Join(dir, "approved.txt") || args.Content != approvedContent {
		t.Fatalf("the approval's payload %s (%v), want the call's arguments", first.Payload, err)
	}
	if _, err := os.Stat(args.Path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("approved.txt exists before anyone approved it: %v", err)
	}
	approved, err := s.person().Answer(ctx, first.ID, &askd.Answer{Decision: askd.DecisionApproved})
	if err != nil {
		t.Fatal(err)
	}
	second := s.created(t, nil, session, 2)
	if second.ToolName != "mcp__filesystem__write_file" || !strings.Contains(string(second.Payload), "rejected.txt") {
		t.Fatalf("the second ask: %q %s, want the write of rejected.txt", second.ToolName, second.Payload)
	}
	rejected, err = s.person().Answer(ctx, second.ID, &askd.Answer{Decision: askd.DecisionRejected, Comment: rejectComment})
	if err != nil {
		t.Fatal(err)
	}
	return approved, rejected
}

// checkWrites checks what the person's decisions did to the files, and
// that the session holds the two approvals and nothing else: the read
// asked nothing.
func checkWrites(t *testing.T, s *askdServer, session, dir string) {
	t.Helper()
	if got, err := os.ReadFile(filepath.Join(dir, "approved.txt")); err != nil || string(got) != approvedContent {
		t.Errorf("approved.txt holds %q (%v), want exactly what was asked, %q", got, err, approvedContent)
	}
	if _, err := os.Stat(filepath.Join(dir, "rejected.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("rejected.txt exists: %v", err)
	}
	asks, err := s.person().List(context.Background(), client.ListOptions{Session: session})
	if err != nil {
		t.Fatal(err)
	}
	if len(asks) != 2 {
		t.Errorf("session %s holds %d asks, want the two writes' approvals (the allowed read asks nothing)", session, len(asks))
	}
}

// modelWrites is the script both agents' models follow, by turn: read
// notes.txt (allowed), write approved.txt, write rejected.txt, then end.
func modelWrites(dir string) []struct {
	tool string
	args map[string]any
} {
	return []struct {
		tool string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": filepath.Join(dir, "notes.txt")}},
		{"write_file", map[string]any{"path": filepath.Join(dir, "approved.txt"), "content": approvedContent}},
		{"write_file", map[string]any{"path": filepath.Join(dir, "rejected.txt"), "content": "the agent's words"}},
	}
}

// TestClaudeThroughTheMCPGate: a project's .mcp.json with the filesystem
// server, gated by askd install mcp-gate with read_file allowed, and
// claude -p with the README's --allowedTools mcp__filesystem (so that the
// gate alone asks; no askd hook is installed). The model reads a file
// (no ask), writes one the person approves (the file holds exactly what
// was asked) and one they reject (the file never exists, and the model's
// next request carries the person's name and comment).
func TestClaudeThroughTheMCPGate(t *testing.T) {
	s := startAskd(t)
	project, home := tempDir(t), t.TempDir()
	// Claude Code gives the server the project as its root, and the
	// filesystem server then serves its roots, not its arguments.
	dir := filepath.Join(project, "files")
	gatedFiles(t, dir)
	command, args := filesystemServer(t, dir)
	writeJSONFile(t, filepath.Join(project, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
		"filesystem": map[string]any{"command": command, "args": args},
	}})
	installGate(t, s, project, ".mcp.json")
	// The project's server, approved as a person would at Claude Code's prompt.
	writeJSONFile(t, filepath.Join(home, ".claude.json"), map[string]any{"projects": map[string]any{project: map[string]any{
		"hasTrustDialogAccepted": true, "enabledMcpjsonServers": []string{"filesystem"}}}})

	script := modelWrites(dir)
	model := newFakeClaudeModel(t, func(i int, req *messagesRequest) []block {
		if i < len(script) {
			return []block{{Tool: "mcp__filesystem__" + script[i].tool, Input: script[i].args}}
		}
		return []block{{Text: "Done."}}
	})
	const session = "claude-gate"
	// claude -p waits for its MCP servers before the first model request
	// only when told to: the gate and node start slowly on a busy machine.
	wait := []string{"MCP_CONNECTION_NONBLOCKING=0"}
	began := time.Now()
	run := startClaudeEnv(t, s, model, project, home, session, "Note the person's decisions in files", wait, "--allowedTools", "mcp__filesystem")
	approved, rejected := decideWrites(t, s, session, dir)
	run.wait(t)
	t.Logf("claude -p through the gate: %s", time.Since(began).Round(time.Millisecond))

	turns := model.agentTurns()
	if len(turns) != 4 {
		t.Fatalf("%d agent turns, want 4 (read, write, write, end)", len(turns))
	}
	for i, want := range []struct {
		isError bool
		holds   []string
	}{
		{false, []string{"read without asking"}},
		{false, []string{"Successfully wrote to " + filepath.Join(dir, "approved.txt")}},
		{true, []string{rejected.SettledBy, rejectComment}},
	} {
		text, isError := lastToolResult(t, turns[i+1].lastMessage())
		t.Logf("turn %d reads (is_error %v): %.300s", i+1, isError, text)
		for _, h := range want.holds {
			if isError != want.isError || !strings.Contains(text, h) {
				t.Errorf("turn %d: the tool result (is_error %v) %q; want is_error %v holding %q", i+1, isError, text, want.isError, h)
			}
		}
	}
	if approved.SettledBy == "" || rejected.SettledBy != approved.SettledBy {
		t.Errorf("decided by %q and %q, want the person", approved.SettledBy, rejected.SettledBy)
	}
	checkWrites(t, s, session, dir)
}

// TestCodexThroughTheMCPGate: Codex's config.toml with the filesystem
// server, gated by askd install mcp-gate with read_file allowed (install
// also lets the server's calls through Codex's own approval, which codex
// exec would refuse), and codex exec against its scripted model, the same
// script as Claude Code's. Codex passes a server only the variables its
// env_vars list, so the gate asks in the session named after the server.
func TestCodexThroughTheMCPGate(t *testing.T) {
	s := startAskd(t)
	codexHome, project, dir := t.TempDir(), t.TempDir(), tempDir(t)
	gatedFiles(t, dir)
	command, args := filesystemServer(t, dir)
	quoted, _ := json.Marshal(args)
	config := filepath.Join(codexHome, "config.toml")
	// startup_timeout_sec: the gate and node start slowly on a busy
	// machine, and Codex gives a server 10 s.
	if err := os.WriteFile(config, []byte("[mcp_servers.filesystem]\ncommand = "+string(mustJSON(t, command))+"\nargs = "+string(quoted)+"\nstartup_timeout_sec = 60\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	installGate(t, s, project, config)

	script := modelWrites(dir)
	model := newFakeCodexModel(t, func(i int, req *responsesRequest) []call {
		if i < len(script) {
			return []call{{Namespace: "mcp__filesystem", Name: script[i].tool, Arguments: script[i].args}}
		}
		return []call{{Text: "Done."}}
	})
	const session = "filesystem" // the gate's --name: Codex passes no ASKD_SESSION
	began := time.Now()
	done, output := startCodex(t, s, model, project, codexHome, "codex-gate", "Note the person's decisions in files")
	approved, rejected := decideWrites(t, s, session, dir)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("codex exec: %v\n%s", err, output())
		}
	case <-time.After(5 * time.Minute):
		t.Fatalf("codex exec did not end:\n%s", output())
	}
	t.Logf("codex exec through the gate: %s", time.Since(began).Round(time.Millisecond))

	turns := model.agentTurns()
	if len(turns) != 4 {
		t.Fatalf("%d agent turns, want 4 (read, write, write, end)\n%s", len(turns), output())
	}
	for i, holds := range [][]string{
		{"read without asking"},
		{"Successfully wrote to " + filepath.Join(dir, "approved.txt")},
		{rejected.SettledBy, rejectComment},
	} {
		last := turns[i+1].lastInput()
		t.Logf("turn %d reads: %.300s", i+1, last)
		for _, h := range holds {
			if !strings.Contains(last, h) {
				t.Errorf("turn %d: the model reads %.600s\nwant it to hold %q", i+1, last, h)
			}
		}
	}
	if approved.SettledBy == "" || rejected.SettledBy != approved.SettledBy {
		t.Errorf("decided by %q and %q, want the person", approved.SettledBy, rejected.SettledBy)
	}
	checkWrites(t, s, session, dir)
}

// lastToolResult reads the text of the last tool_result block in a user
// message as Claude Code sends it to the model: it sends the results of a
// run's calls so far in one message, the newest last.
func lastToolResult(t *testing.T, message string) (text string, isError bool) {
	t.Helper()
	var m struct {
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal([]byte(message), &m); err != nil || len(m.Content) == 0 {
		t.Fatalf("last message %s: %v", message, err)
	}
	last, _ := json.Marshal(map[string]any{"content": []json.RawMessage{m.Content[len(m.Content)-1]}})
	return toolResult(t, string(last))
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInspectorThroughTheMCPGate: the MCP Inspector's CLI reads a Claude
// Desktop config gated by askd install mcp-gate (Claude Desktop's shape,
// which the Inspector's --config reads: the gate's askd and token file on
// its command line, nothing to expand). It lists the server's tools through
// the gate, the same list as the server's own, and calls write_file: the
// call waits for the person, and, approved, writes exactly what was asked.
func TestInspectorThroughTheMCPGate(t *testing.T) {
	s := startAskd(t)
	node := filepath.Join(testserver.NPM(t, nodePackage), "node_modules", ".bin", "node")
	inspector, err := filepath.EvalSymlinks(testserver.NPMBin(t, inspectorPackage, "mcp-inspector"))
	if err != nil {
		t.Fatal(err)
	}
	dir := tempDir(t)
	notes := gatedFiles(t, dir)
	command, args := filesystemServer(t, dir)
	home := t.TempDir()
	config := filepath.Join(home, "claude_desktop_config.json")
	writeJSONFile(t, config, map[string]any{"mcpServers": map[string]any{
		"filesystem": map[string]any{"command": command, "args": args},
	}})
	installGate(t, s, home, config)

	inspect := func(t *testing.T, target []string, args ...string) (string, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append(append([]string{inspector, "--cli"}, target...), args...)...)
		cmd.Dir = home
		// A home of its own; no OS keychain here, and the Inspector keeps
		// no secrets for these servers.
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "MCP_INSPECTOR_SECRET_STORE=memory"}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if ctx.Err() != nil {
			t.Fatalf("the Inspector did not end: %s", &stderr)
		}
		if err != nil {
			t.Logf("the Inspector's stderr:\n%s", &stderr)
		}
		return string(out), err
	}
	gated := []string{"--config", config, "--server", "filesystem"}

	t.Run("tools/list", func(t *testing.T) {
		through, err := inspect(t, gated, "--method", "tools/list")
		if err != nil {
			t.Fatalf("tools/list through the gate: %v", err)
		}
		direct, err := inspect(t, append([]string{command}, args...), "--method", "tools/list")
		if err != nil {
			t.Fatalf("tools/list of the server itself: %v", err)
		}
		var tools struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		if err := json.Unmarshal([]byte(through), &tools); err != nil || len(tools.Tools) == 0 {
			t.Fatalf("tools/list through the gate: %v\n%s", err, through)
		}
		if through != direct {
			t.Errorf("tools/list through the gate:\n%s\nthe server's own:\n%s", through, direct)
		}
		t.Logf("%d tools, the same through the gate as the server's own", len(tools.Tools))
	})

	t.Run("read_file allowed", func(t *testing.T) {
		out, err := inspect(t, gated, "--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path="+notes)
		if err != nil || !strings.Contains(out, "read without asking") {
			t.Fatalf("read_file through the gate: %v\n%s", err, out)
		}
		if asks, err := s.person().List(context.Background(), client.ListOptions{Session: "filesystem"}); err != nil || len(asks) != 0 {
			t.Fatalf("the allowed read asked askd: %d asks (%v)", len(asks), err)
		}
	})

	t.Run("write_file approved", func(t *testing.T) {
		path := filepath.Join(dir, "approved.txt")
		type result struct {
			out string
			err error
		}
		ran := make(chan result, 1)
		go func() {
			out, err := inspect(t, gated, "--method", "tools/call", "--tool-name", "write_file", "--tool-arg", "path="+path, "content="+approvedContent)
			ran <- result{out, err}
		}()
		a := s.created(t, nil, "filesystem", 1)
		if a.ToolName != "mcp__filesystem__write_file" || !strings.Contains(string(a.Payload), "approved.txt") {
			t.Fatalf("the approval: %q %s", a.ToolName, a.Payload)
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the file exists before anyone approved it: %v", err)
		}
		if _, err := s.person().Answer(context.Background(), a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
			t.Fatal(err)
		}
		r := <-ran
		if r.err != nil || !strings.Contains(r.out, "Successfully wrote to "+path) {
			t.Fatalf("write_file through the gate: %v\n%s", r.err, r.out)
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != approvedContent {
			t.Fatalf("the file holds %q (%v), want exactly what was asked, %q", got, err, approvedContent)
		}
	})
}
