package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
)

// Hook inputs shaped as Claude Code 2.1.328 sent them (observed with the real
// CLI); replies are compared byte for byte with Claude's documented outputs.

func preToolUse(session, toolName, toolInput string) string {
	return `{"session_id":"` + session + `","transcript_path":"/home/u/.claude/projects/p/` + session + `.jsonl",` +
		`"cwd":"/home/u/p","prompt_id":"8e82c65b-0c0a-4f64-9f39-1d1f4c2c1a11","permission_mode":"default","effort":{"level":"medium"},` +
		`"hook_event_name":"PreToolUse","tool_name":"` + toolName + `","tool_input":` + toolInput + `,"tool_use_id":"toolu_01A"}`
}

func permissionRequest(session, toolName, toolInput string) string {
	return `{"session_id":"` + session + `","transcript_path":"/home/u/.claude/projects/p/` + session + `.jsonl",` +
		`"cwd":"/home/u/p","permission_mode":"default","hook_event_name":"PermissionRequest","tool_name":"` + toolName + `",` +
		`"tool_input":` + toolInput + `,"permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test"}],"behavior":"allow","destination":"localSettings"}]}`
}

func stopInput(session string, active bool) string {
	return fmt.Sprintf(`{"session_id":%q,"transcript_path":"/home/u/.claude/projects/p/x.jsonl","cwd":"/home/u/p",`+
		`"prompt_id":"8e82c65b-0c0a-4f64-9f39-1d1f4c2c1a11","permission_mode":"default","effort":{"level":"medium"},`+
		`"hook_event_name":"Stop","stop_hook_active":%v,"last_assistant_message":"You picked Blue.","background_tasks":[],"session_crons":[]}`, session, active)
}

const colorQuestion = `{"questions":[{"question":"Which color should the button be?","header":"Color",` +
	`"options":[{"label":"Blue","description":"Calm and familiar"},{"label":"Red","description":"Loud and urgent"}],"multiSelect":false}]}`

type hookReply struct {
	status int
	body   string
	err    error // the request failed: no reply
}

// postHook posts a hook input as Claude Code's http hook does.
func postHook(ctx context.Context, t *testing.T, srv *testserver.Server, token, query, body string, header map[string]string) hookReply {
	t.Helper()
	r := sendHook(ctx, srv, token, query, body, header)
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r
}

// sendHook is postHook for any goroutine: a failure is in the reply's err.
func sendHook(ctx context.Context, srv *testserver.Server, token, query, body string, header map[string]string) hookReply {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/hooks/claude"+query, strings.NewReader(body))
	if err != nil {
		return hookReply{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "axios/1.15.2")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return hookReply{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return hookReply{resp.StatusCode, string(b), err}
}

// postAsync posts a hook input in the background; awaitReply gets the reply.
// The goroutine does not touch t: t.Fatal belongs to the test's goroutine.
func postAsync(t *testing.T, srv *testserver.Server, query, body string, header map[string]string) <-chan hookReply {
	ch := make(chan hookReply, 1)
	go func() { ch <- sendHook(context.Background(), srv, srv.AgentToken, query, body, header) }()
	return ch
}

func awaitReply(t *testing.T, ch <-chan hookReply) hookReply {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r
	case <-time.After(60 * time.Second):
		t.Fatal("hook did not reply")
	}
	return hookReply{}
}

func firstPending(t *testing.T, srv *testserver.Server, session string) *askd.Ask {
	t.Helper()
	return srv.Pending(t, session, 1)[0]
}

func wantReply(t *testing.T, got hookReply, status int, body string) {
	t.Helper()
	if got.status != status || got.body != body {
		t.Fatalf("reply %d %s\nwant  %d %s", got.status, got.body, status, body)
	}
}

func TestHookPreToolUseAskUserQuestion(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	session := "d7a0df0e-6c1f-4a36-9d0c-5b1e9c7f0a01"
	ch := postAsync(t, srv, "", preToolUse(session, "AskUserQuestion", colorQuestion), nil)
	a := firstPending(t, srv, session) // the session is the hook's session_id
	if a.Kind != askd.KindQuestion || a.Questions[0].Header != "Color" {
		t.Fatalf("ask %+v", a)
	}
	if _, err := srv.Human().Answer(context.Background(), a.ID, &askd.Answer{Answers: map[string]askd.Choice{"Which color should the button be?": {Values: []string{"Blue"}}}}); err != nil {
		t.Fatal(err)
	}
	wantReply(t, awaitReply(t, ch), 200,
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"questions":[{"question":"Which color should the button be?","header":"Color","options":[{"label":"Blue","description":"Calm and familiar"},{"label":"Red","description":"Loud and urgent"}],"multiSelect":false}],"answers":{"Which color should the button be?":"Blue"}}}}`+"\n")
}

func TestHookPreToolUseMultiSelectAndOther(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	input := `{"questions":[{"question":"Which sections should I include?","header":"Sections","options":[{"label":"Introduction","description":"Opening context"},{"label":"Conclusion","description":"Final summary"}],"multiSelect":true},` +
		`{"question":"How should I format the output?","header":"Format","options":[{"label":"Summary","description":"Brief overview"},{"label":"Detailed","description":"Full explanation"}],"multiSelect":false}]}`
	// The Askd-Session header wins over session_id.
	ch := postAsync(t, srv, "", preToolUse("ignored-session", "AskUserQuestion", input), map[string]string{"Askd-Session": "docs-run"})
	a := firstPending(t, srv, "docs-run")
	if _, err := srv.Human().Answer(context.Background(), a.ID, &askd.Answer{Answers: map[string]askd.Choice{
		"Which sections should I include?": {Values: []string{"Introduction", "Conclusion"}, Multi: true},
		"How should I format the output?":  {Values: []string{"a table per section"}},
	}}); err != nil {
		t.Fatal(err)
	}
	var out struct {
		HookSpecificOutput struct {
			UpdatedInput struct {
				Answers map[string]string `json:"answers"`
			} `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	r := awaitReply(t, ch)
	if err := json.Unmarshal([]byte(r.body), &out); err != nil {
		t.Fatal(err)
	}
	got := out.HookSpecificOutput.UpdatedInput.Answers
	if got["Which sections should I include?"] != "Introduction, Conclusion" || got["How should I format the output?"] != "a table per section" {
		t.Fatalf("answers %v in %s", got, r.body)
	}
}

func TestHookPreToolUseDismissedAndTimeout(t *testing.T) {
	// The default question timeout (minutes): the person dismisses the ask
	// long before it, however slowly this machine runs.
	srv := testserver.Start(t, testserver.Options{})
	ch := postAsync(t, srv, "", preToolUse("s-dismiss", "AskUserQuestion", colorQuestion), nil)
	a := firstPending(t, srv, "s-dismiss")
	if _, err := srv.Human().Dismiss(context.Background(), a.ID, "use the brand colour"); err != nil {
		t.Fatal(err)
	}
	wantReply(t, awaitReply(t, ch), 200, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"The user did not pick an answer. They said: use the brand colour"}}`+"\n")

	// A short timeout on a server of its own: the reply waits for it, so a
	// slow machine only makes the reply later.
	srv = testserver.Start(t, testserver.Options{Config: app.Config{QuestionTimeout: 300 * time.Millisecond}})
	r := postHook(context.Background(), t, srv, srv.AgentToken, "", preToolUse("s-timeout", "AskUserQuestion", colorQuestion), nil)
	wantReply(t, r, 200, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"No one answered within 300 milliseconds. Proceed on your own judgement, or ask again."}}`+"\n")
}

func TestHookPermissionRequest(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	input := `{"command":"npm test","description":"Run tests"}`
	cases := []struct {
		ans  askd.Answer
		want string
	}{
		{askd.Answer{Decision: askd.DecisionApproved}, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"npm test","description":"Run tests"}}}}`},
		{askd.Answer{Decision: askd.DecisionModified, Payload: json.RawMessage(`{"command":"npm test -- --bail"}`)}, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"npm test -- --bail"}}}}`},
		{askd.Answer{Decision: askd.DecisionRejected, Comment: "tests are flaky today"}, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"The user rejected this: tests are flaky today"}}}`},
	}
	for i, c := range cases {
		session := fmt.Sprintf("perm-%d", i)
		ch := postAsync(t, srv, "", permissionRequest(session, "Bash", input), nil)
		a := firstPending(t, srv, session)
		if a.Kind != askd.KindApproval || a.Title != "Allow Bash: npm test" {
			t.Fatalf("ask %+v", a)
		}
		if _, err := srv.Human().Answer(context.Background(), a.ID, &c.ans); err != nil {
			t.Fatal(err)
		}
		wantReply(t, awaitReply(t, ch), 200, c.want+"\n")
	}
}

func TestHookStop(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	session := "stop-run"
	agent := srv.Agent(session)

	// Nothing pending, nothing to tell: {} at once, even with ?wait=. "At
	// once" is anything well short of the 10 minutes asked for: a minute
	// is room for a busy machine.
	quick, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	wantReply(t, postHook(quick, t, srv, srv.AgentToken, "?wait=10m", stopInput(session, false), nil), 200, "{}\n")

	a, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindDecision, Title: "Deploy on Monday or Friday?",
		Options: []askd.Option{{Label: "Monday"}, {Label: "Friday"}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Pending, without ?wait=: nothing to say yet.
	wantReply(t, postHook(ctx, t, srv, srv.AgentToken, "", stopInput(session, false), nil), 200, "{}\n")
	if _, err := srv.Human().Answer(ctx, a.ID, &askd.Answer{Answer: "Monday"}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"decision":"block","reason":"The user answered your ask #%d (decision: \"Deploy on Monday or Friday?\"): Monday"}`, a.ID) + "\n"
	wantReply(t, postHook(ctx, t, srv, srv.AgentToken, "", stopInput(session, false), nil), 200, want)
	// Told once: the next Stop ends the run.
	wantReply(t, postHook(ctx, t, srv, srv.AgentToken, "", stopInput(session, true), nil), 200, "{}\n")

	// With ?wait=, a pending ask keeps the agent alive until it is answered.
	b, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "Release notes drafted"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ch := postAsync(t, srv, "?wait=10m", stopInput(session, true), nil)
	waitForWaiters(t, srv, 1) // the Stop hook waits on the ask
	if _, err := srv.Human().Dismiss(ctx, b.ID, "ship them"); err != nil {
		t.Fatal(err)
	}
	want = fmt.Sprintf(`{"decision":"block","reason":"The user closed your ask #%d (ready: \"Release notes drafted\") without answering it. They said: ship them"}`, b.ID) + "\n"
	wantReply(t, awaitReply(t, ch), 200, want)
}

func TestHookNoOpsAndAuth(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	for _, body := range []string{
		preToolUse("s1", "Bash", `{"command":"ls"}`),
		`{"session_id":"s1","hook_event_name":"Notification","message":"Claude needs your permission","notification_type":"permission_prompt"}`,
		`{"session_id":"s1","hook_event_name":"SomethingNew","extra":{"a":1}}`,
	} {
		wantReply(t, postHook(ctx, t, srv, srv.AgentToken, "", body, nil), 200, "{}\n")
	}
	if r := postHook(ctx, t, srv, "", "", stopInput("s1", false), nil); r.status != http.StatusUnauthorized {
		t.Fatalf("no token: %d %s", r.status, r.body)
	}
	if r := postHook(ctx, t, srv, srv.HumanToken, "", stopInput("s1", false), nil); r.status != http.StatusForbidden {
		t.Fatalf("human token: %d %s", r.status, r.body)
	}
}

// An agent that never set ASKD_SESSION asks over MCP in its token's own
// session; Claude's Stop hook, which knows only its own session_id, still
// tells it what the person said.
func TestHookStopTellsTheTokenSessionToo(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	a, err := srv.Agent("").Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "PR #7 is ready"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if a.Session != "agent-1" {
		t.Fatalf("session %q, want the token's name", a.Session)
	}
	if _, err := srv.Human().Answer(ctx, a.ID, &askd.Answer{Answer: "merged, thanks"}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"decision":"block","reason":"The user answered your ask #%d (ready: \"PR #7 is ready\"): merged, thanks"}`, a.ID) + "\n"
	wantReply(t, postHook(ctx, t, srv, srv.AgentToken, "", stopInput("d7a0df0e-5b1c-4c1e-9a55-0e1f2a3b4c5d", false), nil), 200, want)
	wantReply(t, postHook(ctx, t, srv, srv.AgentToken, "", stopInput("d7a0df0e-5b1c-4c1e-9a55-0e1f2a3b4c5d", true), nil), 200, "{}\n")
	// With an explicit session the token's own session is not looked at.
	b, _ := srv.Agent("").Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "PR #8 is ready"}, 0)
	srv.Human().Answer(ctx, b.ID, &askd.Answer{Answer: "ok"})
	wantReply(t, postHook(ctx, t, srv, srv.AgentToken, "", stopInput("x", false), map[string]string{"Askd-Session": "elsewhere"}), 200, "{}\n")
}

// TestHookPermissionForAskdsOwnTools: a permission request for one of
// askd's own tools is allowed at once with its input unchanged, and no ask
// is stored (reading the store back); a tool of another MCP server of the
// same tool name still becomes an approval.
func TestHookPermissionForAskdsOwnTools(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	input := `{"kind":"ready","title":"The branch is ready"}`
	for _, tool := range []string{"mcp__askd__ask", "mcp__askd__ask_user_question", "mcp__askd__request_approval", "mcp__askd__check_ask", "mcp__askd__cancel_ask"} {
		r := postHook(ctx, t, srv, srv.AgentToken, "", permissionRequest("own-tools", tool, input), nil)
		wantReply(t, r, 200, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":`+input+`}}}`+"\n")
	}
	var n int
	err := srv.Store.View(ctx, func(tx askd.Tx) (err error) {
		n, err = tx.Asks.CountAsks(ctx, askd.AskFilter{})
		return err
	})
	if err != nil || n != 0 {
		t.Fatalf("%d asks stored (%v), want none", n, err)
	}
	ch := postAsync(t, srv, "", permissionRequest("own-tools", "mcp__other__ask", input), nil)
	a := firstPending(t, srv, "own-tools")
	if a.Kind != askd.KindApproval || a.ToolName != "mcp__other__ask" {
		t.Fatalf("ask %+v, want an approval of mcp__other__ask", a)
	}
	if _, err := srv.Human().Answer(ctx, a.ID, &askd.Answer{Decision: "rejected"}); err != nil {
		t.Fatal(err)
	}
	if r := awaitReply(t, ch); !strings.Contains(r.body, `"behavior":"deny"`) {
		t.Fatalf("reply %s, want a deny", r.body)
	}
}
