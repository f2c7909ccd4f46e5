package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var sixTools = []string{"ask", "ask_user_question", "cancel_ask", "check_ask", "permission_prompt", "request_approval"}

func TestToolsList(t *testing.T) {
	srv := start(t, app.Config{})
	forEach(t, func(t *testing.T, tr transport) {
		cs := connect(t, srv, tr, "list-"+tr.name, nil)
		if !tr.stdio && tr.version != "" {
			if got := cs.InitializeResult().ProtocolVersion; got != tr.version {
				t.Fatalf("negotiated %s, want %s", got, tr.version)
			}
		}
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			schema, _ := json.Marshal(tool.InputSchema)
			var s struct {
				Type                 string         `json:"type"`
				AdditionalProperties *bool          `json:"additionalProperties"`
				Properties           map[string]any `json:"properties"`
			}
			if err := json.Unmarshal(schema, &s); err != nil {
				t.Fatal(err)
			}
			if s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties {
				t.Errorf("%s: schema %s: want an object with additionalProperties false", tool.Name, schema)
			}
			if len(tool.Description) < 80 {
				t.Errorf("%s: description too short to teach a model: %q", tool.Name, tool.Description)
			}
		}
		slices.Sort(names)
		if !slices.Equal(names, sixTools) {
			t.Fatalf("tools %v, want %v", names, sixTools)
		}
		schema, _ := json.Marshal(res.Tools[slices.IndexFunc(res.Tools, func(x *mcp.Tool) bool { return x.Name == "ask_user_question" })].InputSchema)
		for _, want := range []string{`"multiSelect"`, `"header"`, `"maxLength":12`, `"maxItems":4`, `"preview"`} {
			if !strings.Contains(string(schema), want) {
				t.Errorf("ask_user_question schema lacks %s: %s", want, schema)
			}
		}
	})
}

type questionOut struct {
	Questions []askd.Question `json:"questions"`
	Answers   map[string]any  `json:"answers"`
	Response  string          `json:"response"`
}

var threeQuestions = map[string]any{"questions": []map[string]any{
	{"question": "Which database?", "header": "Database", "multiSelect": false, "options": []map[string]any{
		{"label": "SQLite", "description": "embedded, zero setup"}, {"label": "Postgres", "description": "shared, scales out"}}},
	{"question": "Which checks?", "header": "Checks", "multiSelect": true, "options": []map[string]any{
		{"label": "lint"}, {"label": "tests"}, {"label": "fuzz"}}},
	{"question": "Project name?", "header": "Name", "options": []map[string]any{
		{"label": "askd"}, {"label": "inbox"}}},
}}

func TestAskUserQuestion(t *testing.T) {
	srv := start(t, app.Config{})
	forEach(t, func(t *testing.T, tr transport) {
		session := "q-" + tr.name
		var progress atomic.Int32
		cs := connect(t, srv, tr, session, &mcp.ClientOptions{ProgressNotificationHandler: func(ctx context.Context, r *mcp.ProgressNotificationClientRequest) {
			if r.Params.ProgressToken == "tok-1" {
				progress.Add(1)
			}
		}})
		params := &mcp.CallToolParams{Name: "ask_user_question", Arguments: threeQuestions}
		params.SetProgressToken("tok-1")
		ch := callAsync(context.Background(), cs, params)
		a := pending(t, srv, session, 1)[0]
		if a.Kind != askd.KindQuestion || len(a.Questions) != 3 {
			t.Fatalf("ask %+v", a)
		}
		// Progress keeps arriving while the call blocks.
		testserver.Eventually(t, "progress notifications while blocked", func() bool { return progress.Load() >= 2 })
		answer(t, srv, a.ID, &askd.Answer{Answers: map[string]askd.Choice{
			"Which database?": {Values: []string{"SQLite"}},
			"Which checks?":   {Values: []string{"lint", "tests"}, Multi: true},
			"Project name?":   {Values: []string{"call it harbor"}}, // "Other": own words
		}})
		res := await(t, ch)
		if res.IsError {
			t.Fatalf("isError: %s", text(t, res))
		}
		var out questionOut
		structured(t, res, &out)
		want := `{"Project name?":"call it harbor","Which checks?":["lint","tests"],"Which database?":"SQLite"}`
		if got, _ := json.Marshal(out.Answers); string(got) != want {
			t.Fatalf("answers %s, want %s", got, want)
		}
		if len(out.Questions) != 3 || out.Questions[1].Options[2].Label != "fuzz" {
			t.Fatalf("questions not echoed: %+v", out.Questions)
		}
	})
}

func TestAskUserQuestionTimeout(t *testing.T) {
	srv := start(t, app.Config{QuestionTimeout: 400 * time.Millisecond})
	forEach(t, func(t *testing.T, tr transport) {
		session := "timeout-" + tr.name
		cs := connect(t, srv, tr, session, nil)
		res := call(t, cs, "ask_user_question", map[string]any{"questions": []map[string]any{
			{"question": "Ship it?", "header": "Ship", "options": []map[string]any{{"label": "yes"}, {"label": "no"}}}}})
		var out questionOut
		structured(t, res, &out)
		if len(out.Answers) != 0 || !strings.Contains(out.Response, "No one answered within") || !strings.Contains(out.Response, "own judgement") {
			t.Fatalf("timeout result %+v", out)
		}
		asks, _ := srv.App.Open(context.Background(), askd.Caller{Name: "agent-1", Role: askd.RoleAgent, Session: session})
		if len(asks) != 0 {
			t.Fatalf("still pending: %+v", asks)
		}
		all, err := srv.Human().List(context.Background(), listOf(session))
		if err != nil || len(all) != 1 || all[0].Status != askd.StatusCancelled || all[0].CancelReason != askd.ReasonTimeout {
			t.Fatalf("ask after timeout: %+v %v", all, err)
		}
	})
}

func TestAskUserQuestionDismissedWithReply(t *testing.T) {
	srv := start(t, app.Config{})
	forEach(t, func(t *testing.T, tr transport) {
		session := "dismiss-" + tr.name
		cs := connect(t, srv, tr, session, nil)
		ch := callAsync(context.Background(), cs, &mcp.CallToolParams{Name: "ask_user_question", Arguments: threeQuestions})
		a := pending(t, srv, session, 1)[0]
		if _, err := srv.Human().Dismiss(context.Background(), a.ID, "neither, use the existing one"); err != nil {
			t.Fatal(err)
		}
		var out questionOut
		structured(t, await(t, ch), &out)
		if len(out.Answers) != 0 || out.Response != "neither, use the existing one" {
			t.Fatalf("dismissed result %+v", out)
		}
	})
}

// TestCancelledCallIsCutOff: a call the client cancels leaves its ask
// pending (SPEC §2.1), marked to be told; the person can still answer, and
// the same call again returns that answer with the same id.
func TestCancelledCallIsCutOff(t *testing.T) {
	srv := start(t, app.Config{})
	forEach(t, func(t *testing.T, tr transport) {
		session := "cancel-" + tr.name
		cs := connect(t, srv, tr, session, nil)
		for _, tool := range []struct {
			name string
			args any
			ans  askd.Answer
			want string // in the second call's result
		}{
			{"ask_user_question", threeQuestions, askd.Answer{Response: "later, thanks"}, "later, thanks"},
			{"permission_prompt", map[string]any{"tool_name": "Bash", "input": map[string]any{"command": "rm -rf build"}, "tool_use_id": "toolu_cut_" + tr.name},
				askd.Answer{Decision: askd.DecisionRejected, Comment: "not now"}, "not now"},
		} {
			ctx, cancel := context.WithCancel(context.Background())
			ch := callAsync(ctx, cs, &mcp.CallToolParams{Name: tool.name, Arguments: tool.args})
			a := pending(t, srv, session, 1)[0]
			cancel()
			if o := <-ch; o.err == nil {
				t.Fatalf("%s: cancelled call returned %v", tool.name, o.res)
			}
			cutOffWait(t, srv, a.ID)
			answer(t, srv, a.ID, &tool.ans)
			res := call(t, cs, tool.name, tool.args)
			if got := text(t, res); !strings.Contains(got, tool.want) {
				t.Fatalf("%s called again: %s, want the answer given meanwhile", tool.name, got)
			}
			if n := len(pending(t, srv, session, 0)); n != 0 {
				t.Fatalf("%s: %d pending asks after calling again, want none (it re-attached)", tool.name, n)
			}
			got, err := srv.Human().Show(context.Background(), a.ID)
			if err != nil || got.ToldAt == nil {
				t.Fatalf("%s: ask %d after calling again: told %v, %v; want told", tool.name, a.ID, got.ToldAt, err)
			}
		}
		// request_approval cut off inside its grace: pending, and told at
		// check_ask {} once decided.
		ctx, cancel := context.WithCancel(context.Background())
		ch := callAsync(ctx, cs, &mcp.CallToolParams{Name: "request_approval", Arguments: map[string]any{"title": "Drop the table", "grace_seconds": 60}})
		a := pending(t, srv, session, 1)[0]
		cancel()
		<-ch
		cutOffWait(t, srv, a.ID)
		answer(t, srv, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
		if got := text(t, call(t, cs, "check_ask", map[string]any{})); !strings.Contains(got, `"status":"approved"`) {
			t.Fatalf("check_ask {} after a cut-off approval was decided: %s", got)
		}
		if got := text(t, call(t, cs, "check_ask", map[string]any{})); strings.Contains(got, fmt.Sprintf(`"id":%d`, a.ID)) {
			t.Fatalf("check_ask {} lists the approval again after telling it: %s", got)
		}
	})
}

func listOf(session string) client.ListOptions {
	return client.ListOptions{Session: session, Limit: 100}
}

func TestAsk(t *testing.T) {
	srv := start(t, app.Config{})
	forEach(t, func(t *testing.T, tr transport) {
		session := "attn-" + tr.name
		cs := connect(t, srv, tr, session, nil)
		type askOut struct {
			ID       int64  `json:"id"`
			Key      string `json:"key"`
			Revision int    `json:"revision"`
			Status   string `json:"status"`
		}
		var first, second askOut
		res := call(t, cs, "ask", map[string]any{"kind": "decision", "title": "Deploy on Monday or Friday?",
			"options": []map[string]any{{"label": "Monday"}, {"label": "Friday", "description": "riskier"}}, "recommended": "Monday"})
		structured(t, res, &first)
		if text(t, res) != fmt.Sprintf(`{"id":%d,"key":"session:%s","revision":1,"status":"pending"}`, first.ID, session) {
			t.Fatalf("ask result %s", text(t, res))
		}
		structured(t, call(t, cs, "ask", map[string]any{"kind": "decision", "title": "Deploy on Monday or Friday?",
			"options": []map[string]any{{"label": "Monday"}, {"label": "Friday"}}}), &second)
		if second.ID != first.ID || second.Revision != 2 {
			t.Fatalf("replacement %+v after %+v", second, first)
		}
		answer(t, srv, first.ID, &askd.Answer{Answer: "Monday"})
		for range 2 { // a settled ask gives its outcome on every check
			var v struct {
				Status, Answer, Message string
			}
			res := call(t, cs, "check_ask", map[string]any{"id": first.ID})
			structured(t, res, &v)
			want := fmt.Sprintf(`The user answered your ask #%d (decision: "Deploy on Monday or Friday?"): Monday`, first.ID)
			if res.IsError || v.Status != "answered" || v.Answer != "Monday" || v.Message != want {
				t.Fatalf("check_ask %s", text(t, res))
			}
		}
	})
}

type approvalOut struct {
	ID       int64          `json:"id"`
	Status   string         `json:"status"`
	Payload  map[string]any `json:"payload"`
	Comment  string         `json:"comment"`
	Hint     string         `json:"hint"`
	Response string         `json:"response"`
}

func TestRequestApproval(t *testing.T) {
	srv := start(t, app.Config{ApprovalGrace: 100 * time.Millisecond})
	forEach(t, func(t *testing.T, tr transport) {
		session := "approve-" + tr.name
		cs := connect(t, srv, tr, session, nil)
		decisions := []struct {
			ans    askd.Answer
			status string
			isErr  bool
		}{
			{askd.Answer{Decision: askd.DecisionApproved}, "approved", false},
			{askd.Answer{Decision: askd.DecisionModified, Payload: json.RawMessage(`{"replicas":2}`)}, "modified", false},
			{askd.Answer{Decision: askd.DecisionRejected, Comment: "not today"}, "rejected", true},
		}
		for _, d := range decisions {
			var p approvalOut
			res := call(t, cs, "request_approval", map[string]any{"title": "Scale the web tier", "details": "kubectl scale --replicas=5", "payload": map[string]any{"replicas": 5}})
			structured(t, res, &p)
			if res.IsError || p.Status != "pending" || p.ID == 0 || text(t, res) != fmt.Sprintf(`{"id":%d,"status":"pending","hint":"call check_ask with id %d"}`, p.ID, p.ID) {
				t.Fatalf("after grace: %s", text(t, res))
			}
			answer(t, srv, p.ID, &d.ans)
			for range 3 {
				var c approvalOut
				res := call(t, cs, "check_ask", map[string]any{"id": p.ID})
				structured(t, res, &c)
				if c.Status != d.status || res.IsError != d.isErr {
					t.Fatalf("check_ask after %s: %s (isError %v)", d.status, text(t, res), res.IsError)
				}
				if d.status == "modified" && c.Payload["replicas"] != 2.0 {
					t.Fatalf("modified payload %v", c.Payload)
				}
				if d.status == "rejected" && c.Comment != "not today" {
					t.Fatalf("comment %q", c.Comment)
				}
			}
		}
		// Decided inside the grace window: the decision is the result.
		ch := callAsync(context.Background(), cs, &mcp.CallToolParams{Name: "request_approval", Arguments: map[string]any{"title": "Tag v1.0", "grace_seconds": 30}})
		a := pending(t, srv, session, 1)[0]
		answer(t, srv, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
		var p approvalOut
		structured(t, await(t, ch), &p)
		if p.Status != "approved" || p.ID != a.ID {
			t.Fatalf("in-grace decision %+v", p)
		}
	})
}

func TestPermissionPrompt(t *testing.T) {
	srv := start(t, app.Config{})
	forEach(t, func(t *testing.T, tr transport) {
		session := "perm-" + tr.name
		var progress progressLog
		cs := connect(t, srv, tr, session, progress.options())
		input := map[string]any{"command": "touch perm-made.txt && echo perm-ok", "description": "make a file"}
		cases := []struct {
			name string
			ans  askd.Answer
			want string
		}{
			{"allow", askd.Answer{Decision: askd.DecisionApproved}, `{"behavior":"allow","updatedInput":{"command":"touch perm-made.txt && echo perm-ok","description":"make a file"}}`},
			{"edited", askd.Answer{Decision: askd.DecisionModified, Payload: json.RawMessage(`{"command":"echo safer"}`)}, `{"behavior":"allow","updatedInput":{"command":"echo safer"}}`},
			{"deny", askd.Answer{Decision: askd.DecisionRejected, Comment: "no files here"}, `{"behavior":"deny","message":"The user rejected this: no files here"}`},
		}
		for i, c := range cases {
			useID := fmt.Sprintf("toolu_%s_%d", tr.name, i)
			args := map[string]any{"tool_name": "Bash", "input": input, "tool_use_id": useID}
			first := callAsync(context.Background(), cs, &mcp.CallToolParams{Name: "permission_prompt", Arguments: args})
			a := pending(t, srv, session, 1)[0]
			if a.Kind != askd.KindApproval || a.ToolName != "Bash" || !strings.HasPrefix(a.Title, "Allow Bash: touch perm-made.txt") {
				t.Fatalf("%s: ask %+v", c.name, a)
			}
			// A retry with the same tool_use_id attaches to the same ask: once
			// it waits (its progress comes), there is still one pending.
			retryParams := &mcp.CallToolParams{Name: "permission_prompt", Arguments: args}
			retryParams.SetProgressToken("retry-" + useID)
			retry := callAsync(context.Background(), cs, retryParams)
			progress.waiting(t, "retry-"+useID)
			if n := len(pending(t, srv, session, 1)); n != 1 {
				t.Fatalf("%s: %d pending asks after retry", c.name, n)
			}
			answer(t, srv, a.ID, &c.ans)
			for _, ch := range []<-chan outcome{first, retry} {
				res := await(t, ch)
				if got := text(t, res); got != c.want || res.StructuredContent != nil || res.IsError {
					t.Fatalf("%s: result %s (structured %v, isError %v), want %s", c.name, got, res.StructuredContent, res.IsError, c.want)
				}
			}
		}
		// AskUserQuestion through the permission tool: a question ask, answered
		// as Claude expects (multi-select joined with ", ").
		qin := map[string]any{"questions": []map[string]any{
			{"question": "Which checks?", "header": "Checks", "multiSelect": true, "options": []map[string]any{{"label": "lint"}, {"label": "tests"}}}}}
		ch := callAsync(context.Background(), cs, &mcp.CallToolParams{Name: "permission_prompt", Arguments: map[string]any{"tool_name": "AskUserQuestion", "input": qin, "tool_use_id": "toolu_q_" + tr.name}})
		a := pending(t, srv, session, 1)[0]
		if a.Kind != askd.KindQuestion {
			t.Fatalf("AskUserQuestion made a %s ask", a.Kind)
		}
		answer(t, srv, a.ID, &askd.Answer{Answers: map[string]askd.Choice{"Which checks?": {Values: []string{"lint", "tests"}, Multi: true}}})
		want := `{"behavior":"allow","updatedInput":{"questions":[{"header":"Checks","multiSelect":true,"options":[{"label":"lint"},{"label":"tests"}],"question":"Which checks?"}],"answers":{"Which checks?":"lint, tests"}}}`
		if got := text(t, await(t, ch)); got != want {
			t.Fatalf("AskUserQuestion decision %s, want %s", got, want)
		}
	})
}

func TestPermissionPromptTimeout(t *testing.T) {
	srv := start(t, app.Config{ApprovalTimeout: 300 * time.Millisecond})
	forEach(t, func(t *testing.T, tr transport) {
		cs := connect(t, srv, tr, "permto-"+tr.name, nil)
		res := call(t, cs, "permission_prompt", map[string]any{"tool_name": "Write", "input": map[string]any{"file_path": "a.txt"}})
		var d struct{ Behavior, Message string }
		if err := json.Unmarshal([]byte(text(t, res)), &d); err != nil || d.Behavior != "deny" || !strings.Contains(d.Message, "No one decided within") {
			t.Fatalf("timeout decision %s", text(t, res))
		}
	})
}

func TestCheckAskScopesAndLists(t *testing.T) {
	srv := start(t, app.Config{})
	forEach(t, func(t *testing.T, tr transport) {
		mine := connect(t, srv, tr, "mine-"+tr.name, nil)
		other := connect(t, srv, tr, "other-"+tr.name, nil)
		var a struct{ ID int64 }
		structured(t, call(t, mine, "ask", map[string]any{"kind": "ready", "title": "PR ready for review"}), &a)

		res := call(t, other, "check_ask", map[string]any{"id": a.ID})
		var v struct {
			ID     int64
			Status string
		}
		structured(t, res, &v)
		if !res.IsError || v.Status != "unknown" || v.ID != a.ID {
			t.Fatalf("another session's id: %s (isError %v)", text(t, res), res.IsError)
		}
		res = call(t, other, "cancel_ask", map[string]any{"id": a.ID})
		if !res.IsError || !strings.Contains(text(t, res), `"unknown"`) {
			t.Fatalf("cancel of another session's ask: %s", text(t, res))
		}
		res = call(t, mine, "check_ask", map[string]any{})
		var list struct {
			Session string
			Asks    []struct {
				ID     int64
				Status string
			}
		}
		structured(t, res, &list)
		if len(list.Asks) != 1 || list.Asks[0].ID != a.ID || list.Asks[0].Status != "pending" {
			t.Fatalf("check_ask {}: %s", text(t, res))
		}
		res = call(t, mine, "cancel_ask", map[string]any{"id": a.ID})
		if res.IsError || !strings.Contains(text(t, res), `"reason":"withdrawn"`) {
			t.Fatalf("cancel_ask: %s", text(t, res))
		}
		settledAs(t, srv, a.ID, askd.StatusCancelled, askd.ReasonWithdrawn)
	})
}

func TestCheckAskWait(t *testing.T) {
	srv := start(t, app.Config{})
	forEach(t, func(t *testing.T, tr transport) {
		session := "wait-" + tr.name
		var progress progressLog
		cs := connect(t, srv, tr, session, progress.options())
		var a struct{ ID int64 }
		structured(t, call(t, cs, "ask", map[string]any{"kind": "blocked", "title": "Need the staging password"}), &a)
		params := &mcp.CallToolParams{Name: "check_ask", Arguments: map[string]any{"id": a.ID, "wait_seconds": 60}}
		params.SetProgressToken("check")
		ch := callAsync(context.Background(), cs, params)
		progress.waiting(t, "check") // answered while check_ask waits
		answer(t, srv, a.ID, &askd.Answer{Answer: "it is in the vault"})
		var v struct{ Status, Answer string }
		structured(t, await(t, ch), &v)
		if v.Status != "answered" || v.Answer != "it is in the vault" {
			t.Fatalf("check_ask wait: %+v", v)
		}
	})
}

// TestInvalidInput covers SPEC §7's refusals: each is a tool error naming the
// field and the rule, and nothing is stored.
func TestInvalidInput(t *testing.T) {
	srv := start(t, app.Config{})
	opt := func(labels ...string) []map[string]any {
		var o []map[string]any
		for _, l := range labels {
			o = append(o, map[string]any{"label": l})
		}
		return o
	}
	q := func(mod func(q map[string]any)) map[string]any {
		qq := map[string]any{"question": "Which?", "header": "Pick", "options": opt("a", "b")}
		mod(qq)
		return map[string]any{"questions": []map[string]any{qq}}
	}
	long := func(n int) string { return strings.Repeat("x", n) }
	cases := []struct {
		name, tool string
		args       any
		want       string
	}{
		{"unknown top-level field", "ask_user_question", map[string]any{"questions": []any{}, "bogus": 1}, "bogus: unknown field"},
		{"unknown nested field", "ask_user_question", q(func(q map[string]any) { q["colour"] = "red" }), "questions[0].colour: unknown field"},
		{"header too long", "ask_user_question", map[string]any{"questions": []map[string]any{
			{"question": "A?", "header": "ok", "options": opt("a", "b")},
			{"question": "B?", "header": "Fourteen chars", "options": opt("a", "b")}}}, "questions[1].header: 14 characters, at most 12"},
		{"header in characters", "ask_user_question", q(func(q map[string]any) { q["header"] = "ÄÖÜäöüßÄÖÜäöü" }), "questions[0].header: 13 characters, at most 12"},
		{"no questions", "ask_user_question", map[string]any{"questions": []any{}}, "questions: required, 1 to 4 items"},
		{"five questions", "ask_user_question", map[string]any{"questions": []any{
			q(func(map[string]any) {})["questions"].([]map[string]any)[0], map[string]any{"question": "2?", "header": "h", "options": opt("a", "b")},
			map[string]any{"question": "3?", "header": "h", "options": opt("a", "b")}, map[string]any{"question": "4?", "header": "h", "options": opt("a", "b")},
			map[string]any{"question": "5?", "header": "h", "options": opt("a", "b")}}}, "questions: 5 items, at most 4"},
		{"one option", "ask_user_question", q(func(q map[string]any) { q["options"] = opt("a") }), "questions[0].options: 1 item, at least 2"},
		{"five options", "ask_user_question", q(func(q map[string]any) { q["options"] = opt("a", "b", "c", "d", "e") }), "questions[0].options: 5 items, at most 4"},
		{"duplicate labels", "ask_user_question", q(func(q map[string]any) { q["options"] = opt("a", "a") }), "questions[0].options[1].label: same label as questions[0].options[0]"},
		{"duplicate questions", "ask_user_question", map[string]any{"questions": []map[string]any{
			{"question": "Same?", "header": "a", "options": opt("a", "b")}, {"question": "Same?", "header": "b", "options": opt("a", "b")}}}, "questions[1].question: same text as questions[0]"},
		{"question too long", "ask_user_question", q(func(q map[string]any) { q["question"] = long(1001) }), "questions[0].question: 1001 characters, at most 1000"},
		{"label too long", "ask_user_question", q(func(q map[string]any) { q["options"] = opt("a", long(101)) }), "questions[0].options[1].label: 101 characters, at most 100"},
		{"description too long", "ask_user_question", q(func(q map[string]any) {
			q["options"] = []map[string]any{{"label": "a", "description": long(501)}, {"label": "b"}}
		}), "questions[0].options[0].description: 501 characters, at most 500"},
		{"preview too big", "ask_user_question", q(func(q map[string]any) {
			q["options"] = []map[string]any{{"label": "a", "preview": long(64<<10 + 1)}, {"label": "b"}}
		}), "questions[0].options[0].preview: 65537 bytes, at most 65536"},
		{"wrong type", "ask_user_question", q(func(q map[string]any) { q["multiSelect"] = "yes" }), "questions[0].multiSelect: a string, want true or false"},
		{"ask kind", "ask", map[string]any{"kind": "urgent", "title": "x"}, `kind: "urgent" is not one of`},
		{"ask question kind", "ask", map[string]any{"kind": "question", "title": "x"}, `kind: "question" is not one of decision, action, ready, blocked`},
		{"ask title too long", "ask", map[string]any{"kind": "ready", "title": long(201)}, "title: 201 characters, at most 200"},
		{"ask details too big", "ask", map[string]any{"kind": "ready", "title": "t", "details": long(16<<10 + 1)}, "details: 16385 bytes, at most 16384"},
		{"options on action", "ask", map[string]any{"kind": "action", "title": "t", "options": opt("a", "b")}, "options: only on decision asks"},
		{"recommended not an option", "ask", map[string]any{"kind": "decision", "title": "t", "options": opt("a", "b"), "recommended": "c"}, `recommended: "c" is not one of the options' labels`},
		{"seven decision options", "ask", map[string]any{"kind": "decision", "title": "t", "options": opt("a", "b", "c", "d", "e", "f", "g")}, "options: 7 items, at most 6"},
		{"approval without title", "request_approval", map[string]any{"details": "x"}, "title: required"},
		{"payload not an object", "request_approval", map[string]any{"title": "t", "payload": []int{1}}, "payload: must be a JSON object"},
		{"grace too long", "request_approval", map[string]any{"title": "t", "grace_seconds": 121}, "grace_seconds: 121, must be 0 to 120"},
		{"payload too big", "request_approval", map[string]any{"title": "t", "payload": map[string]any{"x": long(256 << 10)}}, "payload: "},
		{"permission without input", "permission_prompt", map[string]any{"tool_name": "Bash"}, "input: required"},
		{"permission unknown field", "permission_prompt", map[string]any{"tool_name": "Bash", "input": map[string]any{}, "extra": true}, "extra: unknown field"},
		{"permission bad question", "permission_prompt", map[string]any{"tool_name": "AskUserQuestion", "input": map[string]any{"questions": []map[string]any{{"question": "Q?", "header": "Far too long a header", "options": opt("a", "b")}}}}, "input.questions[0].header: 21 characters, at most 12"},
		{"check wait too long", "check_ask", map[string]any{"id": 1, "wait_seconds": 61}, "wait_seconds: 61, must be 0 to 60"},
		{"check unknown field", "check_ask", map[string]any{"ask_id": 1}, "ask_id: unknown field"},
		{"cancel without id", "cancel_ask", map[string]any{}, "id: required"},
	}
	forEach(t, func(t *testing.T, tr transport) {
		cs := connect(t, srv, tr, "invalid-"+tr.name, nil)
		before := countAsks(t, srv)
		for _, c := range cases {
			res := call(t, cs, c.tool, c.args)
			if !res.IsError || !strings.Contains(text(t, res), c.want) {
				t.Errorf("%s: %s (isError %v), want an error containing %q", c.name, text(t, res), res.IsError, c.want)
			}
		}
		if after := countAsks(t, srv); after != before {
			t.Errorf("refused calls stored %d asks", after-before)
		}
	})
}

func TestShutdownTellsAgentToCheck(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			srv := start(t, app.Config{})
			cs := connect(t, srv, tr, "shutdown", nil)
			ch := callAsync(context.Background(), cs, &mcp.CallToolParams{Name: "ask_user_question", Arguments: threeQuestions})
			a := pending(t, srv, "shutdown", 1)[0]
			srv.App.Close()
			res := await(t, ch)
			want := fmt.Sprintf("server shutting down, call check_ask with id %d", a.ID)
			if !res.IsError || !strings.Contains(text(t, res), want) {
				t.Fatalf("result %s (isError %v), want %q", text(t, res), res.IsError, want)
			}
		})
	}
}
