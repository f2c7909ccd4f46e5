package agentcli_test

import (
	"context"
	"encoding/json"
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

// everythingPackage is the MCP reference server that elicits, pinned: the
// version ../shared/reference/mcp-2026.md describes. Its tool
// trigger-elicitation-request (listed only to clients that declare
// elicitation) sends a legacy elicitation/create with every field type and
// returns what the client answered; trigger-url-elicitation does the same
// in url mode.
const everythingPackage = "@modelcontextprotocol/server-everything@2026.8.31"

// everythingServer installs server-everything (once, into the user's cache,
// as the CLIs are) and returns its .mcp.json entry: node running it over
// stdio.
func everythingServer(t *testing.T) map[string]any {
	t.Helper()
	bin := installCLI(t, everythingPackage, "mcp-server-everything")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	script, err := filepath.EvalSymlinks(bin) // …/server-everything/dist/index.js
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"type": "stdio", "command": node, "args": []string{script, "stdio"}}
}

// elicitingProject is a project wired by askd install claude --elicitation
// (with installArgs), whose .mcp.json also has server-everything as
// "everything", beside askd's entry.
func elicitingProject(t *testing.T, s *askdServer, installArgs ...string) (project, home string) {
	t.Helper()
	project, home = wiredProject(t, s, append([]string{"--elicitation"}, installArgs...)...)
	path := filepath.Join(project, ".mcp.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var config map[string]map[string]any
	if err := json.Unmarshal(data, &config); err != nil {
		t.Fatal(err)
	}
	config["mcpServers"]["everything"] = everythingServer(t)
	if data, err = json.MarshalIndent(config, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return project, home
}

// elicitTool is the everything server's tool as Claude Code names it.
func elicitTool(name string) string { return "mcp__everything__" + name }

// startEliciting runs claude -p whose scripted model calls the everything
// server's tool with input, then ends its turn. The tool is allowed up
// front, so the one ask is the MCP server's question.
func startEliciting(t *testing.T, s *askdServer, project, home, session, tool string, input map[string]any) (*claudeRun, *fakeClaudeModel) {
	t.Helper()
	model := newFakeClaudeModel(t, func(i int, req *messagesRequest) []block {
		if i == 0 {
			// Claude Code defers MCP tools: the request names them (in
			// a system reminder) for the model to load with ToolSearch,
			// and a call by name works at once.
			if !req.hasTool(elicitTool(tool)) && !strings.Contains(string(req.raw), elicitTool(tool)) {
				t.Errorf("claude -p did not offer %s (server-everything lists it only to clients that declare elicitation)", elicitTool(tool))
			}
			return []block{{Tool: elicitTool(tool), Input: input}}
		}
		return []block{{Text: "Done."}}
	})
	// claude -p sends its first model request without waiting for MCP
	// servers still connecting (it waits at the call) unless told to:
	// server-everything (node) is not always up in time on a busy machine.
	wait := []string{"MCP_CONNECTION_NONBLOCKING=0"}
	run := startClaudeEnv(t, s, model, project, home, session, "Ask me through the everything server", wait, "--allowedTools", elicitTool(tool))
	return run, model
}

// elicitResult waits for the run to end and returns what the MCP server
// got back for its elicitation, as its tool result echoes it ("Raw result:
// {...}") in the model's second turn.
func elicitResult(t *testing.T, run *claudeRun, model *fakeClaudeModel, started time.Time) map[string]any {
	t.Helper()
	run.wait(t)
	t.Logf("claude -p ran %s", time.Since(started).Round(time.Millisecond))
	turns := model.agentTurns()
	if len(turns) != 2 {
		t.Fatalf("%d agent turns, want 2 (the tool call, then its result)", len(turns))
	}
	text, isError := toolResult(t, turns[1].lastMessage())
	t.Logf("tool result (is_error %v):\n%s", isError, text)
	if isError {
		t.Fatalf("the tool call failed: %s", text)
	}
	_, raw, ok := strings.Cut(text, "Raw result: ")
	if !ok {
		t.Fatalf("the tool result has no raw result: %s", text)
	}
	// The first JSON value: Claude Code appends a system reminder to the
	// tool's text.
	var got map[string]any
	if err := json.NewDecoder(strings.NewReader(raw)).Decode(&got); err != nil {
		t.Fatalf("raw result %q: %v", raw, err)
	}
	return got
}

// toolResult reads the text of the one tool_result block in a user message
// as Claude Code sends it to the model.
func toolResult(t *testing.T, message string) (text string, isError bool) {
	t.Helper()
	var m struct {
		Content []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
			IsError bool            `json:"is_error"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(message), &m); err != nil {
		t.Fatalf("last message %s: %v", message, err)
	}
	for _, c := range m.Content {
		if c.Type != "tool_result" {
			continue
		}
		var s string
		if json.Unmarshal(c.Content, &s) == nil {
			return s, c.IsError
		}
		var parts []struct{ Type, Text string }
		if err := json.Unmarshal(c.Content, &parts); err != nil {
			t.Fatalf("tool_result content %s: %v", c.Content, err)
		}
		var texts []string
		for _, p := range parts {
			texts = append(texts, p.Text)
		}
		return strings.Join(texts, "\n"), c.IsError
	}
	t.Fatalf("no tool_result in %s", message)
	return "", false
}

// everythingSchema is the form server-everything 2026.8.31's
// trigger-elicitation-request asks for: every field type MCP's restricted
// schema has.
const everythingSchema = `{
  "type": "object",
  "properties": {
    "name": {"title": "String", "type": "string", "description": "Your full, legal name"},
    "check": {"title": "Boolean", "type": "boolean", "description": "Agree to the terms and conditions"},
    "firstLine": {"title": "String with default", "type": "string", "description": "Favorite first line of a story", "default": "It was a dark and stormy night."},
    "email": {"title": "String with email format", "type": "string", "format": "email", "description": "Your email address (will be verified, and never shared with anyone else)"},
    "homepage": {"type": "string", "format": "uri", "title": "String with uri format", "description": "Portfolio / personal website"},
    "birthdate": {"title": "String with date format", "type": "string", "format": "date", "description": "Your date of birth"},
    "integer": {"title": "Integer", "type": "integer", "description": "Your favorite integer (do not give us your phone number, pin, or other sensitive info)", "minimum": 1, "maximum": 100, "default": 42},
    "number": {"title": "Number in range 1-1000", "type": "number", "description": "Favorite number (there are no wrong answers)", "minimum": 0, "maximum": 1000, "default": 3.14},
    "untitledSingleSelectEnum": {"type": "string", "title": "Untitled Single Select Enum", "description": "Choose your favorite friend",
      "enum": ["Monica", "Rachel", "Joey", "Chandler", "Ross", "Phoebe"], "default": "Monica"},
    "untitledMultipleSelectEnum": {"type": "array", "title": "Untitled Multiple Select Enum", "description": "Choose your favorite instruments", "minItems": 1, "maxItems": 3,
      "items": {"type": "string", "enum": ["Guitar", "Piano", "Violin", "Drums", "Bass"]}, "default": ["Guitar"]},
    "titledSingleSelectEnum": {"type": "string", "title": "Titled Single Select Enum", "description": "Choose your favorite hero",
      "oneOf": [{"const": "hero-1", "title": "Superman"}, {"const": "hero-2", "title": "Green Lantern"}, {"const": "hero-3", "title": "Wonder Woman"}], "default": "hero-1"},
    "titledMultipleSelectEnum": {"type": "array", "title": "Titled Multiple Select Enum", "description": "Choose your favorite types of fish", "minItems": 1, "maxItems": 3,
      "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"}, {"const": "fish-2", "title": "Salmon"}, {"const": "fish-3", "title": "Trout"}]}, "default": ["fish-1"]},
    "legacyTitledEnum": {"type": "string", "title": "Legacy Titled Single Select Enum", "description": "Choose your favorite type of pet",
      "enum": ["pet-1", "pet-2", "pet-3", "pet-4", "pet-5"], "enumNames": ["Cats", "Dogs", "Birds", "Fish", "Reptiles"], "default": "pet-1"}
  },
  "required": ["name"]
}`

// TestClaudeElicitation: in a project wired by askd install claude
// --elicitation, with server-everything beside askd in .mcp.json, claude
// -p's model calls one of the server's eliciting tools; the server's
// elicitation/create reaches askd's Elicitation hook (run by Claude Code
// with /bin/sh -c) as one form ask; what the person does there is what the
// MCP server receives: every field as entered, Decline, a dismissal as
// cancel, Done on a url-mode ask as accept. The run ends on its own once
// the MCP server has its answer.
func TestClaudeElicitation(t *testing.T) {
	shIsDash(t)
	s := startAskd(t)
	entered := map[string]any{
		"name":                       "Robin Example",
		"check":                      true,
		"firstLine":                  "It was a bright cold day in April.",
		"email":                      "robin@example.com",
		"homepage":                   "https://example.com/robin",
		"birthdate":                  "1990-04-01",
		"integer":                    7.0,
		"number":                     2.5,
		"untitledSingleSelectEnum":   "Joey",
		"untitledMultipleSelectEnum": []any{"Piano", "Drums"},
		"titledSingleSelectEnum":     "hero-3",
		"titledMultipleSelectEnum":   []any{"fish-2", "fish-3"},
		"legacyTitledEnum":           "pet-2",
	}
	deviceURL := "https://example.com/device?code=AB-12"
	cases := []struct {
		name     string
		tool     string
		input    map[string]any
		person   func(ctx context.Context, id int64) error
		received map[string]any // by the MCP server
		status   askd.Status
		reason   askd.CancelReason
	}{
		{
			name: "every field entered", tool: "trigger-elicitation-request", input: map[string]any{},
			person: func(ctx context.Context, id int64) error {
				_, err := s.person().Answer(ctx, id, &askd.Answer{Content: entered})
				return err
			},
			received: map[string]any{"action": "accept", "content": entered},
			status:   askd.StatusAnswered,
		},
		{
			name: "declined", tool: "trigger-elicitation-request", input: map[string]any{},
			person: func(ctx context.Context, id int64) error {
				_, err := s.person().Answer(ctx, id, &askd.Answer{Action: askd.FormDecline})
				return err
			},
			received: map[string]any{"action": "decline"},
			status:   askd.StatusAnswered,
		},
		{
			name: "dismissed", tool: "trigger-elicitation-request", input: map[string]any{},
			person: func(ctx context.Context, id int64) error {
				_, err := s.person().Dismiss(ctx, id, "")
				return err
			},
			received: map[string]any{"action": "cancel"},
			status:   askd.StatusCancelled, reason: askd.ReasonDismissed,
		},
		{
			name: "url mode done", tool: "trigger-url-elicitation", input: map[string]any{"url": deviceURL},
			person: func(ctx context.Context, id int64) error {
				_, err := s.person().Answer(ctx, id, &askd.Answer{Action: askd.FormAccept})
				return err
			},
			received: map[string]any{"action": "accept"},
			status:   askd.StatusAnswered,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			session := "elicit-" + strings.ReplaceAll(c.name, " ", "-")
			project, home := elicitingProject(t, s)
			started := time.Now()
			run, model := startEliciting(t, s, project, home, session, c.tool, c.input)
			ask := s.pending(t, session)
			t.Logf("form ask %d after %s", ask.ID, time.Since(started).Round(time.Millisecond))
			wantFormAsk(t, ask, c.tool, deviceURL)
			answered := time.Now()
			if err := c.person(context.Background(), ask.ID); err != nil {
				t.Fatal(err)
			}
			got := elicitResult(t, run, model, started)
			t.Logf("from the person's answer to the end of claude -p: %s", time.Since(answered).Round(time.Millisecond))
			if !jsonEqual(got, c.received) {
				t.Errorf("the MCP server received %v, want %v", got, c.received)
			}
			settled := onlyAsk(t, s, session)
			if settled.Status != c.status || settled.CancelReason != c.reason {
				t.Errorf("the form ask is %s (%s), want %s (%s)", settled.Status, settled.CancelReason, c.status, c.reason)
			}
		})
	}
}

// TestClaudeElicitationTimesOut: an askd serve with a short
// --elicitation-timeout answers the Elicitation hook cancel when no one
// answers in time, and the MCP server receives cancel; the ask says
// timeout, never a person's refusal.
func TestClaudeElicitationTimesOut(t *testing.T) {
	s := startAskd(t, "--elicitation-timeout", "2s")
	project, home := elicitingProject(t, s, "--elicitation-timeout", "2s")
	started := time.Now()
	run, model := startEliciting(t, s, project, home, "elicit-timeout", "trigger-elicitation-request", map[string]any{})
	ask := s.pending(t, "elicit-timeout")
	wantFormAsk(t, ask, "trigger-elicitation-request", "")
	got := elicitResult(t, run, model, started)
	if want := map[string]any{"action": "cancel"}; !jsonEqual(got, want) {
		t.Errorf("the MCP server received %v, want %v", got, want)
	}
	if settled := onlyAsk(t, s, "elicit-timeout"); settled.Status != askd.StatusCancelled || settled.CancelReason != askd.ReasonTimeout {
		t.Errorf("the form ask is %s (%s), want cancelled (timeout)", settled.Status, settled.CancelReason)
	}
}

// TestClaudeElicitationHookTimeoutWithdraws: when Claude Code's timeout for
// the Elicitation hook is shorter than askd's wait (settings edited by hand,
// or a server's --elicitation-timeout longer than install was told), Claude
// Code kills the hook first and answers the MCP server cancel itself, and
// askd withdraws the form ask: no later answer could reach the server.
// This is why install's hook timeout outlasts --elicitation-timeout.
func TestClaudeElicitationHookTimeoutWithdraws(t *testing.T) {
	s := startAskd(t)
	project, home := elicitingProject(t, s)
	setElicitationHookTimeout(t, project, 5)
	started := time.Now()
	run, model := startEliciting(t, s, project, home, "elicit-hook-timeout", "trigger-elicitation-request", map[string]any{})
	got := elicitResult(t, run, model, started)
	if want := map[string]any{"action": "cancel"}; !jsonEqual(got, want) {
		t.Errorf("the MCP server received %v, want %v", got, want)
	}
	testserver.Eventually(t, "the form ask withdrawn", func() bool {
		a := onlyAsk(t, s, "elicit-hook-timeout")
		return a.Status == askd.StatusCancelled && a.CancelReason == askd.ReasonWithdrawn
	})
}

// setElicitationHookTimeout sets Claude Code's timeout for askd's
// Elicitation hook in the project's settings to seconds.
func setElicitationHookTimeout(t *testing.T, project string, seconds int) {
	t.Helper()
	path := filepath.Join(project, ".claude", "settings.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var settings map[string]any
	if err := json.Unmarshal(data, &settings); err != nil {
		t.Fatal(err)
	}
	groups := settings["hooks"].(map[string]any)["Elicitation"].([]any)
	hook := groups[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)
	hook["timeout"] = seconds
	if data, err = json.MarshalIndent(settings, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantFormAsk checks the ask the Elicitation hook made: a form ask from
// the everything server with the server's message, and its schema as the
// server sent it (form mode) or the URL (url mode).
func wantFormAsk(t *testing.T, ask *askd.Ask, tool, url string) {
	t.Helper()
	if ask.Kind != askd.KindForm || ask.Source != "everything" {
		t.Fatalf("pending ask: %s from %q, want a form ask from everything: %+v", ask.Kind, ask.Source, ask)
	}
	if tool == "trigger-url-elicitation" {
		if ask.URL != url || ask.Schema != nil || ask.Title != "Please open the link to complete this action." {
			t.Fatalf("url-mode ask: url %q, title %q, schema %s", ask.URL, ask.Title, ask.Schema)
		}
		return
	}
	var got, want any
	if err := json.Unmarshal(ask.Schema, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(everythingSchema), &want); err != nil {
		t.Fatal(err)
	}
	if ask.URL != "" || ask.Title != "Please provide inputs for the following fields:" || !jsonEqual(got, want) {
		t.Fatalf("form ask: title %q, url %q, schema %s\nwant the server's: %s", ask.Title, ask.URL, ask.Schema, everythingSchema)
	}
}

// onlyAsk returns the one ask of session, settled: the MCP server's
// question and nothing else (no approval of the tool call, no second ask).
func onlyAsk(t *testing.T, s *askdServer, session string) *askd.Ask {
	t.Helper()
	asks, err := s.person().List(context.Background(), client.ListOptions{Session: session})
	if err != nil || len(asks) != 1 {
		t.Fatalf("session %s holds %d asks (%v), want the one form ask: %+v", session, len(asks), err, asks)
	}
	return asks[0]
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
