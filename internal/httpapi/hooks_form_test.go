package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
)

// An Elicitation hook input as Claude Code 2.1.328 sends it (SPEC §9,
// reference/mcp-2026.md): form mode has no elicitation_id, url mode has one.
func elicitation(session, mode, rest string) string {
	return `{"session_id":"` + session + `","transcript_path":"/home/u/.claude/projects/p/` + session + `.jsonl",` +
		`"cwd":"/home/u/p","permission_mode":"default","hook_event_name":"Elicitation","mcp_server_name":"everything",` +
		`"message":"Please provide inputs for the following fields:","mode":"` + mode + `",` + rest + `}`
}

// A schema with every kind of field, as server-everything's
// trigger-elicitation-request sends.
const everySchema = `{"type":"object","properties":{` +
	`"name":{"type":"string","title":"Full name","minLength":2},` +
	`"email":{"type":"string","format":"email","default":"a@example.com"},` +
	`"integer":{"type":"integer","minimum":1,"maximum":100,"default":42},` +
	`"number":{"type":"number","minimum":0,"maximum":1000},` +
	`"check":{"type":"boolean","default":false},` +
	`"color":{"type":"string","enum":["red","green"],"enumNames":["Red","Green"]},` +
	`"pets":{"type":"array","items":{"anyOf":[{"const":"cat","title":"Cat"},{"const":"dog","title":"Dog"}]},"minItems":1,"maxItems":2}` +
	`},"required":["name","integer"]}`

func formOutput(action, content string) string {
	if content == "" {
		return `{"hookSpecificOutput":{"hookEventName":"Elicitation","action":"` + action + `"}}` + "\n"
	}
	return `{"hookSpecificOutput":{"hookEventName":"Elicitation","action":"` + action + `","content":` + content + `}}` + "\n"
}

func TestHookElicitationForm(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	ch := postAsync(t, srv, "", elicitation("s-form", "form", `"requested_schema":`+everySchema), nil)
	a := firstPending(t, srv, "s-form")
	if a.Kind != askd.KindForm || a.Source != "everything" || a.Title != "Please provide inputs for the following fields:" || string(a.Schema) != everySchema {
		t.Fatalf("ask %+v, schema %s", a, a.Schema)
	}

	// An answer that breaks the schema is refused naming each field, and
	// nothing is stored.
	_, err := srv.Human().Answer(ctx, a.ID, &askd.Answer{Content: map[string]any{"name": "A", "integer": 142.0, "color": "blue", "pets": []any{}}})
	want := `answer does not fit the ask: color: "blue" is not one of red, green; integer: 142 is above the maximum 100; name: 1 character, at least 2; pets: 0 chosen, at least 1`
	if err == nil || askd.ErrorCode(err) != askd.EMISMATCH || !strings.Contains(err.Error(), strings.TrimPrefix(want, "answer does not fit the ask: ")) {
		t.Fatalf("bad answer: %v\nwant %s", err, want)
	}
	if got, err := srv.Human().Show(ctx, a.ID); err != nil || !got.Pending() || got.Answer != nil || len(got.History) != 1 {
		t.Fatalf("after a refused answer: %+v, %v", got, err)
	}

	content := map[string]any{"name": "Ada Lovelace", "email": "ada@example.com", "integer": 7.0, "number": 2.5, "check": true, "color": "green", "pets": []any{"dog"}}
	if _, err := srv.Human().Answer(ctx, a.ID, &askd.Answer{Content: content}); err != nil {
		t.Fatal(err)
	}
	wantReply(t, awaitReply(t, ch), 200, formOutput("accept", `{"check":true,"color":"green","email":"ada@example.com","integer":7,"name":"Ada Lovelace","number":2.5,"pets":["dog"]}`))
	got, err := srv.Human().Show(ctx, a.ID)
	if err != nil || got.Status != askd.StatusAnswered || got.Answer.Action != askd.FormAccept || got.ToldAt == nil {
		t.Fatalf("answered form %+v, %v", got, err)
	}
}

func TestHookElicitationDeclineDismissTimeout(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	schema := `"requested_schema":{"type":"object","properties":{"ok":{"type":"boolean"}}}`

	ch := postAsync(t, srv, "", elicitation("s-decline", "form", schema), nil)
	a := firstPending(t, srv, "s-decline")
	if _, err := srv.Human().Answer(ctx, a.ID, &askd.Answer{Action: askd.FormDecline}); err != nil {
		t.Fatal(err)
	}
	wantReply(t, awaitReply(t, ch), 200, formOutput("decline", ""))

	ch = postAsync(t, srv, "", elicitation("s-dismiss", "form", schema), nil)
	a = firstPending(t, srv, "s-dismiss")
	if _, err := srv.Human().Dismiss(ctx, a.ID, ""); err != nil {
		t.Fatal(err)
	}
	wantReply(t, awaitReply(t, ch), 200, formOutput("cancel", ""))

	// An empty form accepted is content {}, not no content.
	ch = postAsync(t, srv, "", elicitation("s-empty", "form", schema), nil)
	a = firstPending(t, srv, "s-empty")
	if _, err := srv.Human().Answer(ctx, a.ID, &askd.Answer{Action: askd.FormAccept}); err != nil {
		t.Fatal(err)
	}
	wantReply(t, awaitReply(t, ch), 200, formOutput("accept", `{}`))

	// --elicitation-timeout, on a server of its own: the reply waits for it.
	srv = testserver.Start(t, testserver.Options{Config: app.Config{ElicitationTimeout: 300 * time.Millisecond}})
	r := postHook(ctx, t, srv, srv.AgentToken, "", elicitation("s-timeout", "form", schema), nil)
	wantReply(t, r, 200, formOutput("cancel", ""))
	asks, err := srv.Human().List(ctx, client.ListOptions{Session: "s-timeout"})
	if err != nil || len(asks) != 1 || asks[0].CancelReason != askd.ReasonTimeout {
		t.Fatalf("timed out form: %+v, %v", asks, err)
	}
}

func TestHookElicitationURL(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	ch := postAsync(t, srv, "", elicitation("s-url", "url", `"url":"https://github.com/login/device?code=AB-12","elicitation_id":"e-1"`), nil)
	a := firstPending(t, srv, "s-url")
	if a.URL != "https://github.com/login/device?code=AB-12" || a.Schema != nil {
		t.Fatalf("url ask %+v", a)
	}
	// Done takes no content.
	if _, err := srv.Human().Answer(ctx, a.ID, &askd.Answer{Action: askd.FormAccept, Content: map[string]any{"x": "y"}}); askd.ErrorCode(err) != askd.EMISMATCH || !strings.Contains(err.Error(), "content: not for a url-mode form") {
		t.Fatalf("content on a url form: %v", err)
	}
	if _, err := srv.Human().Answer(ctx, a.ID, &askd.Answer{Action: askd.FormAccept}); err != nil {
		t.Fatal(err)
	}
	wantReply(t, awaitReply(t, ch), 200, formOutput("accept", ""))
}

// A form askd refuses is declined at once, and nothing is stored.
func TestHookElicitationRefusedSchema(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	for i, rest := range []string{
		`"requested_schema":{"type":"object","properties":{"address":{"type":"object","properties":{}}}}`,
		`"requested_schema":{"type":"object","properties":{"n":{"type":"integer","minimum":5,"maximum":1}}}`,
		`"requested_schema":{"type":"object","properties":{"x":{"type":"string"}},"additionalProperties":false}`,
		`"url":"javascript:alert(1)"`,
		`"url":"file:///etc/passwd"`,
	} {
		mode := "form"
		if strings.HasPrefix(rest, `"url"`) {
			mode = "url"
		}
		session := fmt.Sprintf("s-refused-%d", i)
		r := postHook(ctx, t, srv, srv.AgentToken, "", elicitation(session, mode, rest), nil)
		wantReply(t, r, 200, formOutput("decline", ""))
		asks, err := srv.Human().List(ctx, client.ListOptions{Session: session})
		if err != nil || len(asks) != 0 {
			t.Fatalf("%s: stored %+v, %v", rest, asks, err)
		}
	}
}

// Claude Code giving up on the hook withdraws the form ask: no later answer
// could reach the MCP server.
func TestHookElicitationCallerGone(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan hookReply, 1)
	go func() {
		done <- sendHook(ctx, srv, srv.AgentToken, "", elicitation("s-gone", "form", `"requested_schema":{"type":"object","properties":{"ok":{"type":"boolean"}}}`), nil)
	}()
	a := firstPending(t, srv, "s-gone")
	cancel()
	<-done
	testserver.Eventually(t, "the form ask withdrawn", func() bool {
		got, err := srv.Human().Show(context.Background(), a.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.CancelReason == askd.ReasonWithdrawn
	})
	if _, err := srv.Human().Answer(context.Background(), a.ID, &askd.Answer{Action: askd.FormDecline}); askd.ErrorCode(err) != askd.ECONFLICT {
		t.Fatalf("answer after withdrawal: %v", err)
	}
}

// Another agent token can neither see a form ask nor answer it (SPEC §1).
func TestFormAskIsolation(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	a, err := srv.Agent("s-iso").Create(ctx, &askd.AskInput{Kind: askd.KindForm, Title: "Name?", Source: "crm",
		Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	other := client.New(srv.URL, srv.Token(t, "other-agent", askd.RoleAgent))
	other.Session = "s-iso"
	if _, err := other.Check(ctx, a.ID, 0); askd.ErrorCode(err) != askd.ENOTFOUND {
		t.Fatalf("other agent's check: %v", err)
	}
	if _, err := other.Answer(ctx, a.ID, &askd.Answer{Content: map[string]any{"name": "x"}}); askd.ErrorCode(err) != askd.EFORBIDDEN {
		t.Fatalf("other agent's answer: %v", err)
	}
	if _, err := srv.Agent("s-iso").Answer(ctx, a.ID, &askd.Answer{Content: map[string]any{"name": "x"}}); askd.ErrorCode(err) != askd.EFORBIDDEN {
		t.Fatalf("own agent's answer: %v", err)
	}
	got, err := srv.Human().Show(ctx, a.ID)
	if err != nil || !got.Pending() || len(got.History) != 1 {
		t.Fatalf("after refused answers: %+v, %v", got, err)
	}
}
