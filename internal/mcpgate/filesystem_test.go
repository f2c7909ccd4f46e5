package mcpgate

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFilesystem puts the real filesystem MCP server from npm behind the
// gate, with read_file allowed: a write waits for the person, and what they
// decide is what happens to the file.
func TestFilesystem(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	server := npmServer(t, "mcp-server-filesystem", dir)
	// Each case its own session, so that its asks are its own.
	gate := func(t *testing.T) (*mcp.ClientSession, *watcher, string) {
		session := "fs-" + strings.ReplaceAll(t.Name(), "/", "-")
		w := f.watch(t, session)
		g := startGate(t, f.env(), append([]string{"--name", "filesystem", "--session", session, "--allow", "read_file", "--"}, server...)...)
		return g.connect(t, "", nil), w, session
	}

	t.Run("approved", func(t *testing.T) {
		cs, w, _ := gate(t)
		path := filepath.Join(dir, "approved.txt")
		content := "line one\nline two: ünïcode, `backticks`, \"quotes\"\n"
		out := callAsync(cs, context.Background(), "write_file", map[string]any{"path": path, "content": content})
		a := w.asked(t)
		if a.Kind != askd.KindApproval || a.ToolName != "mcp__filesystem__write_file" || a.Source != "filesystem" || a.Title != "Call write_file" {
			t.Fatalf("the approval asked: kind %s, tool_name %q, source %q, title %q", a.Kind, a.ToolName, a.Source, a.Title)
		}
		var payload map[string]string
		if err := json.Unmarshal(a.Payload, &payload); err != nil || payload["path"] != path || payload["content"] != content {
			t.Fatalf("payload %s, want the call's arguments", a.Payload)
		}
		if !strings.Contains(a.Details, "line two: ünïcode") {
			t.Errorf("details do not show the arguments:\n%s", a.Details)
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the file exists before anyone approved: %v", err)
		}
		f.answer(t, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
		res := (<-out).must(t)
		if res.IsError {
			t.Fatalf("approved write: error result %q", text(res))
		}
		if got := readFile(t, path); got != content {
			t.Fatalf("the file holds %q, want exactly what was asked, %q", got, content)
		}
	})

	t.Run("modified", func(t *testing.T) {
		cs, w, _ := gate(t)
		path := filepath.Join(dir, "modified.txt")
		out := callAsync(cs, context.Background(), "write_file", map[string]any{"path": path, "content": "the agent's words"})
		a := w.asked(t)
		edit, _ := json.Marshal(map[string]string{"path": path, "content": "the person's words"})
		f.answer(t, a.ID, &askd.Answer{Decision: askd.DecisionModified, Payload: edit})
		if res := (<-out).must(t); res.IsError {
			t.Fatalf("modified write: error result %q", text(res))
		}
		if got := readFile(t, path); got != "the person's words" {
			t.Fatalf("the file holds %q, want what the person wrote", got)
		}
	})

	t.Run("rejected", func(t *testing.T) {
		cs, w, _ := gate(t)
		path := filepath.Join(dir, "rejected.txt")
		out := callAsync(cs, context.Background(), "write_file", map[string]any{"path": path, "content": "no"})
		a := w.asked(t)
		f.answer(t, a.ID, &askd.Answer{Decision: askd.DecisionRejected, Comment: "not in that directory"})
		res := (<-out).must(t)
		if !res.IsError || !strings.Contains(text(res), f.askd.HumanName) || !strings.Contains(text(res), "not in that directory") {
			t.Fatalf("rejected write: isError %v, %q; want an error result naming %s and the comment", res.IsError, text(res), f.askd.HumanName)
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the rejected file exists: %v", err)
		}
	})

	t.Run("allowed", func(t *testing.T) {
		cs, _, session := gate(t)
		path := filepath.Join(dir, "allowed.txt")
		if err := os.WriteFile(path, []byte("read me"), 0o600); err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": path}})
		if err != nil || res.IsError || !strings.Contains(text(res), "read me") {
			t.Fatalf("read_file (allowed): %v, %+v", err, res)
		}
		// The call has returned: an ask made for it would be listed now.
		if asks := f.asks(t, session); len(asks) != 0 {
			t.Fatalf("an allowed call asked askd: %d asks, the first %q", len(asks), asks[0].Title)
		}
	})

	t.Run("again", func(t *testing.T) {
		cs, w, _ := gate(t)
		path := filepath.Join(dir, "again.txt")
		args := map[string]any{"path": path, "content": "once more"}
		out := callAsync(cs, context.Background(), "write_file", args)
		first := w.asked(t)
		f.answer(t, first.ID, &askd.Answer{Decision: askd.DecisionApproved})
		if res := (<-out).must(t); res.IsError {
			t.Fatalf("first write: %q", text(res))
		}
		// The same call later: the approval answered the first one.
		out = callAsync(cs, context.Background(), "write_file", args)
		second := w.asked(t)
		if second.ID == first.ID {
			t.Fatalf("the same call again re-used approval #%d", first.ID)
		}
		f.answer(t, second.ID, &askd.Answer{Decision: askd.DecisionRejected, Comment: "enough"})
		if res := (<-out).must(t); !res.IsError || !strings.Contains(text(res), "enough") {
			t.Fatalf("second write, rejected: isError %v, %q", res.IsError, text(res))
		}
	})
}

// must is the outcome's result, failing the test on a protocol error.
func (o callOutcome) must(t testing.TB) *mcp.CallToolResult {
	t.Helper()
	if o.err != nil {
		t.Fatalf("call: %v", o.err)
	}
	return o.res
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// asks lists session's asks, every status, as the inbox does.
func (f *fixture) asks(t testing.TB, session string) []*askd.Ask {
	t.Helper()
	asks, err := f.person.List(context.Background(), client.ListOptions{Session: session, Agent: f.askd.AgentName})
	if err != nil {
		t.Fatal(err)
	}
	return asks
}
