package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
)

func ctxT(t *testing.T) context.Context {
	t.Helper()
	// A safety net against a hung test, not a bound on anything it checks:
	// generous, for a busy machine.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func question(multi bool, texts ...string) *askd.AskInput {
	in := &askd.AskInput{Kind: askd.KindQuestion}
	for i, q := range texts {
		in.Questions = append(in.Questions, askd.Question{
			Question: q, Header: fmt.Sprintf("Q%d", i+1), MultiSelect: multi,
			Options: []askd.Option{{Label: "lint", Description: "static checks"}, {Label: "tests"}, {Label: "docs"}},
		})
	}
	return in
}

// result is what a goroutine waiting on an ask got.
type result struct {
	ask *askd.Ask
	err error
}

// createWaiting creates an ask with ?wait= in a goroutine and returns the
// pending ask's id (read by the human) and the channel of the waiting result.
func createWaiting(t *testing.T, s *testserver.Server, agent *client.Client, in *askd.AskInput, wait time.Duration) (int64, <-chan result) {
	t.Helper()
	ctx := ctxT(t)
	ch := make(chan result, 1)
	go func() {
		a, err := agent.Create(ctx, in, wait)
		ch <- result{a, err}
	}()
	return s.Pending(t, agent.Session, 1)[0].ID, ch
}

func get(t *testing.T, ch <-chan result) *askd.Ask {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("waiting request: %v", r.err)
		}
		return r.ask
	case <-time.After(20 * time.Second):
		t.Fatal("waiting request never returned")
		return nil
	}
}

func TestQuestionAnsweredWhileAgentWaits(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	agent := s.Agent("build-42")

	tests := []struct {
		name  string
		in    *askd.AskInput
		ans   map[string]askd.Choice
		check func(t *testing.T, got map[string]askd.Choice)
	}{
		{
			name: "single choice",
			in:   question(false, "Which check first?"),
			ans:  map[string]askd.Choice{"Which check first?": {Values: []string{"tests"}}},
			check: func(t *testing.T, got map[string]askd.Choice) {
				if c := got["Which check first?"]; c.Multi || !reflect.DeepEqual(c.Values, []string{"tests"}) {
					t.Errorf("got %+v, want the single label tests", c)
				}
			},
		},
		{
			name: "multi-select is a list",
			in:   question(true, "Which checks?"),
			ans:  map[string]askd.Choice{"Which checks?": {Values: []string{"lint", "tests"}, Multi: true}},
			check: func(t *testing.T, got map[string]askd.Choice) {
				if c := got["Which checks?"]; !c.Multi || !reflect.DeepEqual(c.Values, []string{"lint", "tests"}) {
					t.Errorf("got %+v, want [lint tests]", c)
				}
			},
		},
		{
			name: "own words",
			in:   question(false, "What else?"),
			ans:  map[string]askd.Choice{"What else?": {Values: []string{"benchmarks, please"}}},
			check: func(t *testing.T, got map[string]askd.Choice) {
				if c := got["What else?"]; c.Values[0] != "benchmarks, please" {
					t.Errorf("got %+v, want the person's words", c)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ch := createWaiting(t, s, agent, tt.in, 20*time.Second)
			if _, err := s.Human().Answer(ctx, id, &askd.Answer{Answers: tt.ans}); err != nil {
				t.Fatal(err)
			}
			a := get(t, ch)
			if a.Status != askd.StatusAnswered || a.SettledBy != "alice" {
				t.Fatalf("status %s by %q, want answered by alice", a.Status, a.SettledBy)
			}
			tt.check(t, a.Answer.Answers)
			// The wire form: a multi-select answer is a JSON list.
			raw, _ := json.Marshal(a.Answer)
			if tt.in.Questions[0].MultiSelect != bytes.Contains(raw, []byte(`:["`)) {
				t.Errorf("answer JSON %s: list form does not match multiSelect", raw)
			}
		})
	}
}

func TestDismissWithReply(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	id, ch := createWaiting(t, s, s.Agent("s1"), question(false, "Ship it?"), 20*time.Second)
	if _, err := s.Human().Dismiss(ctx, id, "not today, the release is frozen"); err != nil {
		t.Fatal(err)
	}
	a := get(t, ch)
	if a.Status != askd.StatusCancelled || a.CancelReason != askd.ReasonDismissed {
		t.Fatalf("got %s/%s, want cancelled/dismissed", a.Status, a.CancelReason)
	}
	if a.Answer == nil || a.Answer.Response != "not today, the release is frozen" || len(a.Answer.Answers) != 0 {
		t.Fatalf("answer %+v, want only the reply", a.Answer)
	}
}

func TestQuestionTimesOut(t *testing.T) {
	cfg := app.DefaultConfig()
	cfg.QuestionTimeout = 300 * time.Millisecond
	s := testserver.Start(t, testserver.Options{Config: cfg})
	ctx := ctxT(t)
	start := time.Now()
	a, err := s.Agent("s1").Create(ctx, question(false, "Anyone there?"), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != askd.StatusCancelled || a.CancelReason != askd.ReasonTimeout {
		t.Fatalf("got %s/%s, want cancelled/timeout", a.Status, a.CancelReason)
	}
	// Well short of the 10 minutes asked for: the ask's deadline ended the
	// wait (a minute is room for a busy machine).
	if el := time.Since(start); el > time.Minute {
		t.Fatalf("returned after %s; the deadline should have ended the wait", el)
	}
	d, err := s.Human().Show(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	var timedOut *askd.Event
	for _, e := range d.History {
		if e.Action == askd.ActionTimedOut {
			timedOut = e
		}
	}
	if timedOut == nil || timedOut.Actor != "askd" {
		t.Fatalf("history %+v has no timed_out row by askd", d.History)
	}
	// A late answer is a conflict, not an answer.
	_, err = s.Human().Answer(ctx, a.ID, &askd.Answer{Answers: map[string]askd.Choice{"Anyone there?": {Values: []string{"lint"}}}})
	if status(err) != http.StatusConflict {
		t.Fatalf("late answer: %v, want 409", err)
	}
}

func TestAttentionAskReplacedTwiceIsOneItem(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	agent := s.Agent("deploy")
	var last *askd.Ask
	for i, title := range []string{"PR #1 is ready", "PR #1 is ready (rebased)", "PR #1 is ready (CI green)"} {
		a, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: title}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if a.Revision != i+1 || (last != nil && a.ID != last.ID) {
			t.Fatalf("ask %d revision %d, want the same id with revision %d", a.ID, a.Revision, i+1)
		}
		last = a
	}
	asks, err := s.Human().List(ctx, client.ListOptions{Session: "deploy"})
	if err != nil {
		t.Fatal(err)
	}
	if len(asks) != 1 || asks[0].Revision != 3 || asks[0].Title != "PR #1 is ready (CI green)" {
		t.Fatalf("inbox has %d items (first %+v), want one at revision 3", len(asks), asks[0])
	}
	// A decision in the same session takes the same slot.
	a, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindDecision, Title: "Merge now?", Options: []askd.Option{{Label: "yes"}, {Label: "no"}}, Recommended: "yes"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != last.ID || a.Revision != 4 || a.Kind != askd.KindDecision {
		t.Fatalf("got id %d revision %d kind %s, want the slot replaced", a.ID, a.Revision, a.Kind)
	}
}

func TestApprovalModifiedReturnsEditedPayload(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	in := &askd.AskInput{Kind: askd.KindApproval, Title: "Run the migration?", Details: "ALTER TABLE users ...", Payload: json.RawMessage(`{"batch": 1000, "dry_run": false}`)}
	id, ch := createWaiting(t, s, s.Agent("db"), in, 20*time.Second)
	edited := json.RawMessage(`{"batch":100,"dry_run":true}`)
	if _, err := s.Human().Answer(ctx, id, &askd.Answer{Decision: askd.DecisionModified, Payload: edited, Comment: "smaller batches first"}); err != nil {
		t.Fatal(err)
	}
	a := get(t, ch)
	if a.Answer.Decision != askd.DecisionModified || string(a.Answer.Payload) != string(edited) || a.Answer.Comment != "smaller batches first" {
		t.Fatalf("answer %+v payload %s", a.Answer, a.Answer.Payload)
	}
}

func TestApprovalGraceReturnsPendingThenTells(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	agent := s.Agent("db")
	a, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "Drop the cache?"}, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != askd.StatusPending || !a.ToBeTold {
		t.Fatalf("got %s tell=%v, want pending and marked to be told", a.Status, a.ToBeTold)
	}
	if _, err := s.Human().Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionRejected, Comment: "not in business hours"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ { // every check returns the outcome
		got, err := agent.Check(ctx, a.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.Answer == nil || got.Answer.Decision != askd.DecisionRejected || got.ToldAt == nil {
			t.Fatalf("check %d: %+v", i, got)
		}
	}
	d, _ := s.Human().Show(ctx, a.ID)
	told := 0
	for _, e := range d.History {
		if e.Action == askd.ActionTold {
			told++
		}
	}
	if told != 1 {
		t.Fatalf("%d told rows, want exactly 1", told)
	}
}

func status(err error) int {
	var ce *client.Error
	if errors.As(err, &ce) {
		return ce.Status
	}
	return 0
}

func TestSecondAnswerConflicts(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	a, err := s.Agent("s").Create(ctx, &askd.AskInput{Kind: askd.KindBlocked, Title: "Need the staging password"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	bob := client.New(s.URL, s.Token(t, "bob", askd.RoleHuman))
	if _, err := s.Human().Answer(ctx, a.ID, &askd.Answer{Answer: "it is in the vault"}); err != nil {
		t.Fatal(err)
	}
	_, err = bob.Answer(ctx, a.ID, &askd.Answer{Answer: "ask ops"})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusConflict {
		t.Fatalf("second answer: %v, want 409", err)
	}
	if ce.Ask == nil || ce.Ask.SettledBy != "alice" || ce.Ask.Answer.Answer != "it is in the vault" {
		t.Fatalf("conflict carries %+v, want alice's answer", ce.Ask)
	}
	if !strings.Contains(ce.Message, "answered by alice") {
		t.Fatalf("message %q does not say who answered", ce.Message)
	}
}

func TestRolesAndTokens(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	a, err := s.Agent("s").Create(ctx, &askd.AskInput{Kind: askd.KindAction, Title: "Rotate the key"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	agentAsHuman := client.New(s.URL, s.AgentToken)
	tests := []struct {
		name string
		call func() error
		want int
	}{
		{"agent answering", func() error { _, err := agentAsHuman.Answer(ctx, a.ID, &askd.Answer{Answer: "done"}); return err }, 403},
		{"agent listing sessions", func() error { _, err := agentAsHuman.Sessions(ctx); return err }, 403},
		{"human creating", func() error {
			_, err := s.Human().Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "x"}, 0)
			return err
		}, 403},
		{"no token", func() error { _, err := client.New(s.URL, "").List(ctx, client.ListOptions{}); return err }, 401},
		{"unknown token", func() error { _, err := client.New(s.URL, "askd_h_nope").List(ctx, client.ListOptions{}); return err }, 401},
		{"another session's ask", func() error { _, err := s.Agent("other").Check(ctx, a.ID, 0); return err }, 404},
		{"another session withdrawing", func() error { _, err := s.Agent("other").Withdraw(ctx, a.ID); return err }, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := status(tt.call()); got != tt.want {
				t.Fatalf("status %d, want %d", got, tt.want)
			}
		})
	}
	got, err := s.Human().Show(ctx, a.ID)
	if err != nil || got.Status != askd.StatusPending {
		t.Fatalf("after refused calls the ask is %v (%v), want still pending", got.Status, err)
	}
}

func TestPendingCapPerSession(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	agent := s.Agent("busy")
	for i := 0; i < 20; i++ {
		if _, err := agent.Create(ctx, question(false, fmt.Sprintf("Question %d?", i)), 0); err != nil {
			t.Fatalf("ask %d: %v", i, err)
		}
	}
	before := snapshot(t, s)
	_, err := agent.Create(ctx, question(false, "One too many?"), 0)
	if status(err) != http.StatusTooManyRequests || !strings.Contains(err.Error(), "at most 20") {
		t.Fatalf("21st ask: %v, want 429 naming the limit", err)
	}
	if after := snapshot(t, s); after != before {
		t.Fatal("the refused ask changed the store")
	}
	// Another session is not affected.
	if _, err := s.Agent("calm").Create(ctx, question(false, "Fine?"), 0); err != nil {
		t.Fatal(err)
	}
}

// snapshot is the whole inbox and every history, as JSON, to compare.
func snapshot(t *testing.T, s *testserver.Server) string {
	t.Helper()
	ctx := ctxT(t)
	asks, err := s.Human().List(ctx, client.ListOptions{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, a := range asks {
		d, err := s.Human().Show(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		j, _ := json.Marshal(d)
		b.Write(j)
	}
	return b.String()
}

func rawRequest(t *testing.T, s *testserver.Server, method, path, token, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.String()
}

func TestBadInputIsRefusedAndChangesNothing(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	q, err := s.Agent("s").Create(ctx, question(true, "Which checks?"), 0)
	if err != nil {
		t.Fatal(err)
	}
	ap, err := s.Agent("t").Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "Go?"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, s)
	long := strings.Repeat("x", askd.MaxBodyBytes+10)
	tests := []struct {
		name, method, path, token, body string
		hdr                             map[string]string
		want                            int
		msg                             string
	}{
		{"header too long", "POST", "/api/asks", s.AgentToken, `{"kind":"question","questions":[{"question":"Q?","header":"Fourteen chars","options":[{"label":"a"},{"label":"b"}]}]}`, nil, 400, "questions[0].header: 14 characters, at most 12"},
		{"unknown field", "POST", "/api/asks", s.AgentToken, `{"kind":"ready","title":"x","colour":"red"}`, nil, 400, "colour: unknown field"},
		{"nested unknown field", "POST", "/api/asks", s.AgentToken, `{"kind":"question","questions":[{"question":"Q?","header":"H","options":[{"label":"a","url":"x"},{"label":"b"}]}]}`, nil, 400, "questions[0].options[0].url: unknown field"},
		{"wrong type", "POST", "/api/asks", s.AgentToken, `{"kind":"ready","title":5}`, nil, 400, "title"},
		{"not JSON", "POST", "/api/asks", s.AgentToken, `{"kind":`, nil, 400, "not valid JSON"},
		{"body over 1 MiB", "POST", "/api/asks", s.AgentToken, `{"kind":"ready","title":"` + long + `"}`, nil, 400, "larger than"},
		{"title too long", "POST", "/api/asks", s.AgentToken, `{"kind":"ready","title":"` + strings.Repeat("é", 201) + `"}`, nil, 400, "title: 201 characters, at most 200"},
		{"bad wait", "POST", "/api/asks?wait=forever", s.AgentToken, `{"kind":"ready","title":"x"}`, nil, 400, "wait"},
		{"answer unknown question", "POST", fmt.Sprintf("/api/asks/%d/answer", q.ID), s.HumanToken, `{"answers":{"Nope?":"lint"}}`, nil, 422, "no such question in this ask"},
		{"answer two own words", "POST", fmt.Sprintf("/api/asks/%d/answer", q.ID), s.HumanToken, `{"answers":{"Which checks?":["mine","yours"]}}`, nil, 422, "at most one"},
		{"answer field of another kind", "POST", fmt.Sprintf("/api/asks/%d/answer", q.ID), s.HumanToken, `{"answer":"lint"}`, nil, 422, "answer: not for question asks"},
		{"modified without payload", "POST", fmt.Sprintf("/api/asks/%d/answer", ap.ID), s.HumanToken, `{"decision":"modified"}`, nil, 422, "payload: required with decision modified"},
		{"unknown decision", "POST", fmt.Sprintf("/api/asks/%d/answer", ap.ID), s.HumanToken, `{"decision":"maybe"}`, nil, 422, "decision"},
		{"answer unknown field", "POST", fmt.Sprintf("/api/asks/%d/answer", ap.ID), s.HumanToken, `{"decision":"approved","why":"x"}`, nil, 400, "why: unknown field"},
		{"foreign origin", "POST", fmt.Sprintf("/api/asks/%d/answer", ap.ID), s.HumanToken, `{"decision":"approved"}`, map[string]string{"Origin": "https://evil.example"}, 403, "cross-origin"},
		{"snooze in the past", "POST", fmt.Sprintf("/api/asks/%d/snooze", ap.ID), s.HumanToken, `{"until":"2001-01-01T00:00:00Z"}`, nil, 400, "until"},
		{"no such ask", "POST", "/api/asks/99999/answer", s.HumanToken, `{"decision":"approved"}`, nil, 404, "not found"},
		{"bad id", "GET", "/api/asks/abc", s.HumanToken, ``, nil, 400, "id"},
		{"bad session header", "POST", "/api/asks", s.AgentToken, `{"kind":"ready","title":"x"}`, map[string]string{"Askd-Session": strings.Repeat("s", 129)}, 400, "Askd-Session"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := rawRequest(t, s, tt.method, tt.path, tt.token, tt.body, tt.hdr)
			if code != tt.want || !strings.Contains(body, tt.msg) {
				t.Fatalf("got %d %s, want %d containing %q", code, body, tt.want, tt.msg)
			}
		})
	}
	if after := snapshot(t, s); after != before {
		t.Fatal("a refused request changed the store")
	}
}

func TestCookieRequestsNeedSameOrigin(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	a, err := s.Agent("s").Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "Ready"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ck := s.BrowserCookie(t, s.HumanName)
	cookie := map[string]string{"Cookie": ck.Name + "=" + ck.Value}
	path := fmt.Sprintf("/api/asks/%d/answer", a.ID)
	if code, _ := rawRequest(t, s, "POST", path, "", `{"answer":"ok"}`, cookie); code != 403 {
		t.Fatalf("cookie POST without Origin: %d, want 403", code)
	}
	cookie["Origin"] = s.URL
	if code, body := rawRequest(t, s, "POST", path, "", `{"answer":"ok"}`, cookie); code != 200 {
		t.Fatalf("same-origin cookie POST: %d %s", code, body)
	}
	agentCookie := map[string]string{"Cookie": app.BrowserCookie + "=" + s.AgentToken}
	if code, _ := rawRequest(t, s, "GET", "/api/asks", "", "", agentCookie); code != 401 {
		t.Fatalf("agent token as the cookie: %d, want 401", code)
	}
}

func TestPendingAskSurvivesRestart(t *testing.T) {
	db := t.TempDir() + "/askd.db"
	ctx := ctxT(t)
	s1 := testserver.Start(t, testserver.Options{DBPath: db})
	a, err := s1.Agent("long").Create(ctx, &askd.AskInput{Kind: askd.KindDecision, Title: "Which region?", Options: []askd.Option{{Label: "eu"}, {Label: "us"}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	s1.App.Close()
	s1.HTTP.Close()
	if err := s1.Store.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := testserver.StartAgain(t, db)
	got, err := s2.Human().Answer(ctx, a.ID, &askd.Answer{Answer: "eu"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != askd.StatusAnswered || got.Title != "Which region?" {
		t.Fatalf("after restart: %+v", got)
	}
}

func TestEventsStreamAndResume(t *testing.T) {
	s := testserver.Start(t, testserver.Options{Heartbeat: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(ctxT(t))
	evs, err := s.Human().Events(ctx, -1)
	if err != nil {
		t.Fatal(err)
	}
	agent := s.Agent("sse")
	a, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "Watch me"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Human().Answer(ctx, a.ID, &askd.Answer{Answer: "seen"}); err != nil {
		t.Fatal(err)
	}
	next := func(ch <-chan client.Event) client.Event {
		t.Helper()
		select {
		case e, ok := <-ch:
			if !ok {
				t.Fatal("stream closed")
			}
			return e
		case <-time.After(30 * time.Second):
			t.Fatal("no event within 30 s")
		}
		return client.Event{}
	}
	e1, e2 := next(evs), next(evs)
	if e1.Type != "ask.created" || e2.Type != "ask.settled" || e1.Event.AskID != a.ID || e2.Event.Ask.Answer.Answer != "seen" {
		t.Fatalf("got %s %s, want ask.created then ask.settled with the answer", e1.Type, e2.Type)
	}
	cancel() // disconnect, then miss three events
	for i := 0; i < 3; i++ {
		if _, err := agent.Create(ctxT(t), &askd.AskInput{Kind: askd.KindReady, Title: fmt.Sprintf("Missed %d", i)}, 0); err != nil {
			t.Fatal(err)
		}
	}
	ctx2, cancel2 := context.WithCancel(ctxT(t))
	defer cancel2()
	evs2, err := s.Human().Events(ctx2, e2.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"created", "replaced", "replaced"}
	for i, w := range want {
		e := next(evs2)
		if e.Event.Action != w || e.ID <= e2.ID {
			t.Fatalf("resumed event %d: %s id %d, want %s after %d", i, e.Event.Action, e.ID, w, e2.ID)
		}
	}
	// Nothing more before the next new event: the stream sent no extra one.
	last, err := s.Agent("sse-after").Create(ctxT(t), &askd.AskInput{Kind: askd.KindReady, Title: "After the resume"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if e := next(evs2); e.Event.AskID != last.ID || e.Event.Action != "created" {
		t.Fatalf("unexpected extra event %+v before the next ask's creation", e)
	}
}

func TestHealthAndMetrics(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	a, _ := s.Agent("m").Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "x"}, 0)
	s.Human().Answer(ctx, a.ID, &askd.Answer{Answer: "ok"})
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, _ := rawRequest(t, s, "GET", p, "", "", nil); code != 200 {
			t.Fatalf("%s: %d", p, code)
		}
	}
	_, body := rawRequest(t, s, "GET", "/metrics", "", "", nil)
	for _, want := range []string{`askd_asks_created_total{kind="ready"} 1`, `askd_asks_settled_total{kind="ready",outcome="answered"} 1`, "askd_time_to_answer_seconds_bucket", "askd_asks_pending 0", "askd_sse_clients 0"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// An agent cut off while the person answered asks the same again: it gets
// that answer instead of a second ask; once it has seen it, the same
// question is a new ask.
func TestSameQuestionAfterCutOffReturnsTheAnswer(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	agent := s.Agent("cut")
	first, err := agent.Create(ctx, question(false, "Which check first?"), 0) // the call that was cut off
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Human().Answer(ctx, first.ID, &askd.Answer{Answers: map[string]askd.Choice{"Which check first?": {Values: []string{"lint"}}}}); err != nil {
		t.Fatal(err)
	}
	again, err := agent.Create(ctx, question(false, "Which check first?"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || again.Status != askd.StatusAnswered || again.Answer.Answers["Which check first?"].Values[0] != "lint" || again.ToldAt == nil {
		t.Fatalf("asking again: %+v, want ask %d answered lint and now told", again, first.ID)
	}
	third, err := agent.Create(ctx, question(false, "Which check first?"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if third.ID == first.ID || third.Status != askd.StatusPending {
		t.Fatalf("after the agent saw the answer, the same question is %+v, want a new pending ask", third)
	}
}

func TestListIsCompressedWhenAccepted(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	for i := 0; i < 10; i++ {
		if _, err := s.Agent(fmt.Sprintf("z%d", i)).Create(ctx, question(true, "Which checks should run before we merge this?"), 0); err != nil {
			t.Fatal(err)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/asks", nil)
	req.Header.Set("Authorization", "Bearer "+s.HumanToken)
	req.Header.Set("Accept-Encoding", "gzip") // set by hand: the transport then leaves the body compressed
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip", resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Asks []*askd.Ask }
	if err := json.NewDecoder(zr).Decode(&out); err != nil || len(out.Asks) != 10 {
		t.Fatalf("decoded %d asks (%v), want 10", len(out.Asks), err)
	}
	// A client that does not ask for gzip gets plain JSON (the Go client's transport decompresses transparently).
	asks, err := s.Human().List(ctx, client.ListOptions{})
	if err != nil || len(asks) != 10 {
		t.Fatalf("plain list: %d asks, %v", len(asks), err)
	}
}

// An approval's grace_seconds over HTTP is its grace window, as over MCP: a
// decision inside it is the reply; past it the reply is pending and the
// decision is told later.
func TestApprovalGraceOverHTTP(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	agent := s.Agent("grace")
	three := 30
	id, ch := createWaiting(t, s, agent, &askd.AskInput{Kind: askd.KindApproval, Title: "Run the migration", GraceSeconds: &three}, 0)
	if _, err := s.Human().Answer(ctx, id, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	if got := get(t, ch); got.Status != askd.StatusAnswered || got.Answer.Decision != askd.DecisionApproved || got.ToldAt == nil {
		t.Fatalf("reply within the grace: %+v, want approved and told", got)
	}
	zero := 0
	past, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "Drop the cache", GraceSeconds: &zero}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if past.Status != askd.StatusPending || !past.ToBeTold {
		t.Fatalf("reply past the grace: %s, tell %v; want pending, to be told", past.Status, past.ToBeTold)
	}
}
