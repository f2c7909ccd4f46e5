package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/testserver"
)

// Hook inputs of Copilot CLI 1.0.102, Qwen Code 0.24.4 and Gemini CLI
// 0.61.0 shaped as they were seen headless (shared/reference/other-clis.md:
// field names, events, replies), and OpenCode's as askd's plugin sends it.

const (
	shellInput = `{"command":"make test","description":"Run the tests"}`
	session    = "7d2f0c1e-4b8a-4c55-9a51-0f7e2d9b6c10"
)

// agentHookInputs are, per CLI, its pre-tool hook's input for a call of
// tool with input, and its next-prompt hook's input.
var agentHookInputs = map[string]struct {
	gate func(tool, input string) string
	stop string
}{
	"copilot": {
		gate: func(tool, input string) string {
			return `{"sessionId":"` + session + `","timestamp":1796342400000,"cwd":"/home/u/p","toolName":"` + tool + `","toolInput":` + input + `,"toolCallId":"call_c1"}`
		},
		stop: `{"sessionId":"` + session + `","timestamp":1796342400000,"cwd":"/home/u/p","transcriptPath":"/home/u/t.jsonl","stopReason":"end_turn","stop_hook_active":false}`,
	},
	"qwen": {
		gate: func(tool, input string) string {
			return `{"session_id":"` + session + `","transcript_path":"/home/u/t.jsonl","cwd":"/home/u/p","hook_event_name":"PreToolUse","timestamp":"2026-12-01T10:00:00.000Z",` +
				`"permission_mode":"yolo","tool_name":"` + tool + `","tool_input":` + input + `,"tool_use_id":"toolu_q1","tool_call_id":"call_q1"}`
		},
		stop: `{"session_id":"` + session + `","transcript_path":"/home/u/t.jsonl","cwd":"/home/u/p","hook_event_name":"Stop","timestamp":"2026-12-01T10:00:00.000Z",` +
			`"stop_hook_active":false,"last_assistant_message":"Done.","context_usage":{"used":1200,"limit":128000}}`,
	},
	"gemini": {
		gate: func(tool, input string) string {
			return `{"session_id":"` + session + `","transcript_path":"/home/u/t.json","cwd":"/home/u/p","hook_event_name":"BeforeTool","timestamp":"2026-12-01T10:00:00.000Z",` +
				`"tool_name":"` + tool + `","tool_input":` + input + `}`
		},
		stop: `{"session_id":"` + session + `","transcript_path":"/home/u/t.json","cwd":"/home/u/p","hook_event_name":"AfterAgent","timestamp":"2026-12-01T10:00:00.000Z",` +
			`"prompt":"Run the tests","prompt_response":"Done.","stop_hook_active":false}`,
	},
	"opencode": {
		gate: func(tool, input string) string {
			return `{"hook_event_name":"tool.execute.before","session_id":"ses_0a1b2c","tool_name":"` + tool + `","tool_input":` + input + `,"tool_use_id":"call_o1"}`
		},
		stop: `{"hook_event_name":"session.idle","session_id":"ses_0a1b2c"}`,
	},
}

// agentEvent is ?event= for a CLI whose input does not name its event.
func agentEvent(cli, event string) string {
	if cli == "copilot" {
		return "?event=" + event
	}
	return ""
}

// postAgentHook posts a CLI's hook input to /hooks/CLI, in session s1, as
// askd hook --cli does.
func postAgentHook(srv *testserver.Server, cli, query, body string) <-chan hookReply {
	ch := make(chan hookReply, 1)
	go func() {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/hooks/"+cli+query, strings.NewReader(body))
		if err != nil {
			ch <- hookReply{err: err}
			return
		}
		req.Header.Set("Authorization", "Bearer "+srv.AgentToken)
		req.Header.Set("Askd-Session", "s1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			ch <- hookReply{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		ch <- hookReply{resp.StatusCode, strings.TrimSpace(string(b)), err}
	}()
	return ch
}

// TestAgentHookGate: each CLI's shell call waits in the inbox as Bash with
// the CLI's own name in agent_tool, and the person's decision comes back in
// the CLI's own reply: approved, rejected with a comment, and edited (run
// as edited by OpenCode, a deny naming the edit for the others, whose card
// offers no Edit).
func TestAgentHookGate(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	edited := `{"command":"make test-short","description":"Run the tests"}`
	quoted := strings.ReplaceAll(edited, `"`, `\"`) // inside a JSON string
	for _, c := range []struct {
		cli, tool, event           string
		approved, rejected, edited string
	}{
		{"copilot", "bash", "permissionRequest",
			`{"behavior":"allow"}`,
			`{"behavior":"deny","message":"The user rejected this: not now"}`,
			`{"behavior":"deny","message":"The person would allow this only with their changes, and Copilot CLI cannot run a call changed by its hook, so it was not run. Their input: ` + quoted + `. Call it again with that input if you agree."}`},
		{"qwen", "run_shell_command", "PreToolUse",
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"askd: allowed"}}`,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"The user rejected this: not now"}}`,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"The person would allow this only with their changes, and Qwen Code cannot run a call changed by its hook, so it was not run. Their input: ` + quoted + `. Call it again with that input if you agree."}}`},
		{"gemini", "run_shell_command", "BeforeTool",
			`{"decision":"allow"}`,
			`{"decision":"deny","reason":"The user rejected this: not now"}`,
			`{"decision":"deny","reason":"The person would allow this only with their changes, and Gemini CLI cannot run a call changed by its hook, so it was not run. Their input: ` + quoted + `. Call it again with that input if you agree."}`},
		{"opencode", "bash", "tool.execute.before",
			`{"decision":"allow"}`,
			`{"decision":"deny","reason":"The user rejected this: not now"}`,
			`{"decision":"allow","args":` + edited + `}`},
	} {
		t.Run(c.cli, func(t *testing.T) {
			for i, d := range []struct {
				answer *askd.Answer
				reply  string
			}{
				{&askd.Answer{Decision: askd.DecisionApproved}, c.approved},
				{&askd.Answer{Decision: askd.DecisionRejected, Comment: "not now"}, c.rejected},
				{&askd.Answer{Decision: askd.DecisionModified, Payload: json.RawMessage(edited)}, c.edited},
			} {
				// A call of its own each: the same call id again would be
				// the same call, re-attached to its decided ask.
				input := strings.Replace(agentHookInputs[c.cli].gate(c.tool, shellInput), `1"`, fmt.Sprintf(`1-%d"`, i), 1)
				ch := postAgentHook(srv, c.cli, agentEvent(c.cli, c.event), input)
				a := firstPending(t, srv, "s1")
				if a.Title != "Allow Bash: make test" || a.ToolName != "Bash" || a.AgentTool != c.tool || a.NoEdit == (c.cli == "opencode") {
					t.Fatalf("approval %+v", a)
				}
				if _, err := srv.Human().Answer(t.Context(), a.ID, d.answer); err != nil {
					t.Fatal(err)
				}
				wantReply(t, awaitReply(t, ch), http.StatusOK, d.reply)
			}
		})
	}
}

// TestAgentHookFree: askd's own tools under each CLI's naming, and a read
// under the yolo modes, are allowed at once in the CLI's reply, no card.
func TestAgentHookFree(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ask := `{"kind":"ready","title":"Ready"}`
	for _, c := range []struct{ cli, event, body, reply string }{
		{"copilot", "permissionRequest", agentHookInputs["copilot"].gate("askd/ask", ask), `{"behavior":"allow"}`},
		{"qwen", "", agentHookInputs["qwen"].gate("mcp__askd__ask", ask), `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"askd: allowed without asking"}}`},
		{"gemini", "", strings.Replace(agentHookInputs["gemini"].gate("mcp_askd_ask", ask), `"tool_input"`,
			`"mcp_context":{"server_name":"askd","tool_name":"ask","url":"http://127.0.0.1:7777/mcp"},"tool_input"`, 1), `{"decision":"allow"}`},
		{"gemini", "", agentHookInputs["gemini"].gate("read_file", `{"file_path":"README.md"}`), `{"decision":"allow"}`},
		{"opencode", "", agentHookInputs["opencode"].gate("askd_ask", ask), `{"decision":"allow"}`},
	} {
		wantReply(t, awaitReply(t, postAgentHook(srv, c.cli, agentEvent(c.cli, c.event), c.body)), http.StatusOK, c.reply)
	}
	if n := countPending(t, srv); n != 0 {
		t.Fatalf("%d asks pending, want none", n)
	}
}

func countPending(t *testing.T, srv *testserver.Server) int {
	t.Helper()
	open, err := srv.Agent("s1").Open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return len(open)
}

// TestAgentHookNames: Copilot's permission request names an MCP tool
// SERVER/TOOL, and its arguments may come as a JSON string; both reach the
// inbox as Claude Code's would (mcp__SERVER__TOOL, an object).
func TestAgentHookNames(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	body := `{"sessionId":"s","timestamp":1,"cwd":"/home/u/p","toolName":"github/create_issue","toolArgs":"{\"title\":\"Flaky test\"}"}`
	ch := postAgentHook(srv, "copilot", "?event=permissionRequest", body)
	a := firstPending(t, srv, "s1")
	if a.ToolName != "mcp__github__create_issue" || a.AgentTool != "github/create_issue" || string(a.Payload) != `{"title":"Flaky test"}` {
		t.Fatalf("approval %+v", a)
	}
	if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	wantReply(t, awaitReply(t, ch), http.StatusOK, `{"behavior":"allow"}`)
}

// TestAgentHookStop: each CLI's next-prompt hook gets an answer the session
// was not told of in its own shape (Gemini's a deny), once; then {}.
func TestAgentHookStop(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	for cli, in := range agentHookInputs {
		t.Run(cli, func(t *testing.T) {
			a, err := srv.Agent("s1").Create(t.Context(), &askd.AskInput{Kind: askd.KindReady, Title: "Review " + cli}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Answer: "looks good"}); err != nil {
				t.Fatal(err)
			}
			verb := "block"
			if cli == "gemini" {
				verb = "deny"
			}
			got := awaitReply(t, postAgentHook(srv, cli, agentEvent(cli, "agentStop"), in.stop))
			var out struct{ Decision, Reason string }
			if err := json.Unmarshal([]byte(got.body), &out); err != nil || got.status != http.StatusOK || out.Decision != verb || !strings.Contains(out.Reason, "looks good") {
				t.Fatalf("reply %d %s, want %q with the answer", got.status, got.body, verb)
			}
			wantReply(t, awaitReply(t, postAgentHook(srv, cli, agentEvent(cli, "agentStop"), in.stop)), http.StatusOK, `{}`)
		})
	}
}

// TestAgentHookRefusals: what askd cannot answer is an error status, which
// askd hook turns into the CLI's deny: a hook of no CLI askd knows, input
// that is not JSON; a wait past askd's limit.
func TestAgentHookRefusals(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	for _, c := range []struct {
		cli, query, body string
		status           int
	}{
		{"cline", "", `{}`, http.StatusNotFound},
		{"gemini", "", `{"hook_event_name":"BeforeTool"`, http.StatusBadRequest},
		{"gemini", "?wait=2h", agentHookInputs["gemini"].gate("run_shell_command", shellInput), http.StatusBadRequest},
	} {
		if got := awaitReply(t, postAgentHook(srv, c.cli, c.query, c.body)); got.status != c.status {
			t.Errorf("/hooks/%s%s: %d %s, want %d", c.cli, c.query, got.status, got.body, c.status)
		}
	}
}
