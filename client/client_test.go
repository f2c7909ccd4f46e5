package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/testserver"
)

// An external test package: testserver imports client.

// apiError returns err as a *client.Error with status, code and words in
// its message, failing the test otherwise.
func apiError(t *testing.T, err error, status int, code, words string) *client.Error {
	t.Helper()
	var ce *client.Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T), want a *client.Error", err, err)
	}
	if ce.Status != status || ce.Code != code || !strings.Contains(ce.Message, words) {
		t.Fatalf("error %d %s %q, want %d %s saying %q", ce.Status, ce.Code, ce.Message, status, code, words)
	}
	return ce
}

// result is what a call made on another goroutine returned.
type result[T any] struct {
	v   T
	err error
}

// async runs f on a goroutine and hands its result over a channel.
func async[T any](f func() (T, error)) <-chan result[T] {
	ch := make(chan result[T], 1)
	go func() {
		v, err := f()
		ch <- result[T]{v, err}
	}()
	return ch
}

// await returns what ch yields, failing the test after a generous minute.
func await[T any](t *testing.T, ch <-chan result[T]) T {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.v
	case <-time.After(time.Minute):
		t.Fatal("the call did not return")
	}
	var zero T
	return zero
}

func decision(title string) *askd.AskInput {
	return &askd.AskInput{Kind: askd.KindDecision, Title: title, Options: []askd.Option{{Label: "Monday"}, {Label: "Friday"}}}
}

func TestAgentCalls(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := t.Context()
	agent := srv.Agent("deploys")

	me, err := agent.Me(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if me["name"] != srv.AgentName || me["role"] != string(askd.RoleAgent) || me["session"] != "deploys" {
		t.Errorf("Me = %v, want the agent token in session deploys", me)
	}

	a, err := agent.Create(ctx, decision("Ship on Friday?"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if a.ID == 0 || a.Status != askd.StatusPending || a.Session != "deploys" || a.Title != "Ship on Friday?" {
		t.Fatalf("Create = %+v, want a pending ask in deploys", a)
	}
	if got, err := agent.Check(ctx, a.ID, 0); err != nil || got.ID != a.ID || got.Status != askd.StatusPending {
		t.Fatalf("Check = %+v, %v; want ask %d pending", got, err, a.ID)
	}
	open, err := agent.Open(ctx)
	if err != nil || len(open) != 1 || open[0].ID != a.ID {
		t.Fatalf("Open = %v, %v; want ask %d", open, err, a.ID)
	}
	w, err := agent.Withdraw(ctx, a.ID)
	if err != nil || w.Status != askd.StatusCancelled || w.CancelReason != askd.ReasonWithdrawn {
		t.Fatalf("Withdraw = %+v, %v; want cancelled, withdrawn", w, err)
	}

	// With a wait, Create returns the ask as the person settled it; Check
	// with a wait returns it at once, settled.
	created := async(func() (*askd.Ask, error) { return agent.Create(ctx, decision("Which day?"), time.Minute) })
	b := srv.Pending(t, "deploys", 1)[0]
	if _, err := srv.Human().Answer(ctx, b.ID, &askd.Answer{Answer: "Friday"}); err != nil {
		t.Fatal(err)
	}
	if got := await(t, created); got.ID != b.ID || got.Status != askd.StatusAnswered || got.Answer == nil || got.Answer.Answer != "Friday" {
		t.Fatalf("Create with a wait = %+v, want ask %d answered Friday", got, b.ID)
	}
	if got, err := agent.Check(ctx, b.ID, time.Minute); err != nil || got.Status != askd.StatusAnswered {
		t.Fatalf("Check with a wait = %+v, %v; want answered", got, err)
	}

	// A wait that runs out returns the ask still pending.
	c, err := agent.Create(ctx, decision("Roll back?"), 50*time.Millisecond)
	if err != nil || c.Status != askd.StatusPending {
		t.Fatalf("Create with a short wait = %+v, %v; want pending", c, err)
	}

	ch, err := agent.SetChannel(ctx, "deploys", askd.Channel{Type: askd.ChannelHook})
	if err != nil || ch.Type != askd.ChannelHook {
		t.Fatalf("SetChannel = %+v, %v; want the hook channel", ch, err)
	}
}

// TestUntoldCalls: CreateUntold and CheckUntold return a decided ask
// untold, with or without a wait; MarkTold marks it, told true, and says
// told false, with no error, for one told already.
func TestUntoldCalls(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := t.Context()
	agent := srv.Agent("untold")
	in := &askd.AskInput{Kind: askd.KindApproval, Title: "Deploy", Key: "deploy 1"}
	created := async(func() (*askd.Ask, error) { return agent.CreateUntold(ctx, in, time.Minute) })
	a := srv.Pending(t, "untold", 1)[0]
	if _, err := srv.Human().Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	if got := await(t, created); got.ID != a.ID || got.Status != askd.StatusAnswered || got.ToldAt != nil {
		t.Fatalf("CreateUntold with a wait = %+v, want ask %d answered, untold", got, a.ID)
	}
	for _, wait := range []time.Duration{0, time.Minute} {
		if got, err := agent.CheckUntold(ctx, a.ID, wait); err != nil || got.Status != askd.StatusAnswered || got.ToldAt != nil {
			t.Fatalf("CheckUntold(wait %s) = %+v, %v; want answered, untold", wait, got, err)
		}
	}
	if got, told, err := agent.MarkTold(ctx, a.ID); err != nil || !told || got.ToldAt == nil {
		t.Fatalf("MarkTold = %+v, %v, %v; want told by it", got, told, err)
	}
	if got, told, err := agent.MarkTold(ctx, a.ID); err != nil || told || got.ToldAt == nil {
		t.Fatalf("MarkTold again = %+v, %v, %v; want the ask told, not by it, no error", got, told, err)
	}
	b, err := agent.Create(ctx, decision("Which day?"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := agent.MarkTold(ctx, b.ID); askd.ErrorCode(err) != askd.ECONFLICT {
		t.Fatalf("MarkTold of a pending ask: %v, want ECONFLICT", err)
	}
}

func TestHumanCalls(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := t.Context()
	human := srv.Human()
	// A session holds one pending attention ask (a newer one replaces it)
	// beside any number of approvals.
	var asks []*askd.Ask
	for i, in := range []struct {
		session string
		kind    askd.Kind
	}{{"web", askd.KindDecision}, {"web", askd.KindApproval}, {"api", askd.KindDecision}} {
		ask := decision(fmt.Sprintf("Question %d?", i))
		if in.kind == askd.KindApproval {
			ask = &askd.AskInput{Kind: askd.KindApproval, Title: ask.Title}
		}
		a, err := srv.Agent(in.session).Create(ctx, ask, 0)
		if err != nil {
			t.Fatal(err)
		}
		asks = append(asks, a)
	}

	if me, err := human.Me(ctx); err != nil || me["name"] != srv.HumanName || me["role"] != string(askd.RoleHuman) {
		t.Errorf("Me = %v, %v; want the human token", me, err)
	}
	list, err := human.List(ctx, client.ListOptions{Status: askd.StatusPending, Session: "web", Agent: srv.AgentName})
	if err != nil || len(list) != 2 {
		t.Fatalf("List of web = %v, %v; want its two asks", list, err)
	}
	if list, err = human.List(ctx, client.ListOptions{Session: "web", Kind: askd.KindApproval}); err != nil || len(list) != 1 || list[0].ID != asks[1].ID {
		t.Fatalf("List of web's approvals = %v, %v; want ask %d", list, err, asks[1].ID)
	}
	if list, err := human.List(ctx, client.ListOptions{Status: askd.StatusPending, Limit: 1}); err != nil || len(list) != 1 {
		t.Fatalf("List with limit 1 = %v, %v; want one ask", list, err)
	}

	// Pages: one ask each, the whole list counted, the last without a next.
	seen := map[int64]bool{}
	cursor := ""
	for range len(asks) {
		page, info, err := human.ListPage(ctx, client.ListOptions{Cursor: cursor, Limit: 1})
		if err != nil || len(page) != 1 || info.Total != len(asks) {
			t.Fatalf("ListPage(%q) = %v, %+v, %v; want one ask of %d", cursor, page, info, err, len(asks))
		}
		seen[page[0].ID] = true
		cursor = info.Next
	}
	if len(seen) != len(asks) || cursor != "" {
		t.Errorf("pages held %d asks and ended with cursor %q, want %d and none", len(seen), cursor, len(asks))
	}

	sessions, err := human.Sessions(ctx)
	if err != nil || len(sessions) != 2 {
		t.Fatalf("Sessions = %v, %v; want api and web", sessions, err)
	}
	page, info, err := human.SessionsPage(ctx, client.PageOptions{Limit: 1})
	if err != nil || len(page) != 1 || page[0].Name != "api" || info.Total != 2 || info.Next == "" {
		t.Fatalf("SessionsPage = %v, %+v, %v; want api, one of two", page, info, err)
	}
	if page, info, err = human.SessionsPage(ctx, client.PageOptions{Cursor: info.Next, Limit: 1}); err != nil || len(page) != 1 || page[0].Name != "web" || info.Next != "" {
		t.Fatalf("SessionsPage's second page = %v, %+v, %v; want web, the last", page, info, err)
	}

	if _, err := human.Answer(ctx, asks[0].ID, &askd.Answer{Answer: "Monday"}); err != nil {
		t.Fatal(err)
	}
	d, err := human.Dismiss(ctx, asks[1].ID, "not this week")
	if err != nil || d.CancelReason != askd.ReasonDismissed || d.Answer == nil || d.Answer.Response != "not this week" {
		t.Fatalf("Dismiss = %+v, %v; want dismissed saying why", d, err)
	}
	if d, err = human.Dismiss(ctx, asks[2].ID, ""); err != nil || d.CancelReason != askd.ReasonDismissed {
		t.Fatalf("Dismiss without words = %+v, %v", d, err)
	}
	detail, err := human.Show(ctx, asks[0].ID)
	if err != nil || detail.Status != askd.StatusAnswered || len(detail.History) != 2 ||
		detail.History[0].Action != askd.ActionCreated || detail.History[1].Action != askd.ActionAnswered {
		t.Fatalf("Show = %+v, %v; want answered with its history", detail, err)
	}

	hist, info, err := human.History(ctx, client.HistoryOptions{Outcome: askd.OutcomeDismissed, Session: "web", Query: "Quest"})
	if err != nil || len(hist) != 1 || hist[0].ID != asks[1].ID || info.Total != 1 {
		t.Fatalf("History of dismissed web asks = %v, %+v, %v; want ask %d", hist, info, err, asks[1].ID)
	}
	if hist, _, err = human.History(ctx, client.HistoryOptions{By: srv.HumanName, PageOptions: client.PageOptions{Limit: 2}}); err != nil || len(hist) != 2 {
		t.Fatalf("History by %s, limit 2 = %v, %v; want two", srv.HumanName, hist, err)
	}

	s, err := srv.Agent("web").Create(ctx, decision("Later?"), 0)
	if err != nil {
		t.Fatal(err)
	}
	snoozed, err := human.Snooze(ctx, s.ID, time.Hour)
	if err != nil || snoozed.SnoozedUntil == nil || time.Until(*snoozed.SnoozedUntil) < 50*time.Minute {
		t.Fatalf("Snooze = %+v, %v; want snoozed for an hour", snoozed, err)
	}
}

func TestRules(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := t.Context()
	human := srv.Human()
	a, err := srv.Agent("ops").Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "Restart the cache?"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := human.CreateRule(ctx, &askd.RuleInput{AskID: a.ID, Match: askd.MatchTitle, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "1h"}})
	if err != nil || r.Title != "Restart the cache?" || r.Session != "ops" || r.Effect != askd.EffectAllow {
		t.Fatalf("CreateRule = %+v, %v", r, err)
	}
	for _, tt := range []struct {
		name           string
		agent, session string
		want           int
	}{
		{"all", "", "", 1},
		{"the agent's", srv.AgentName, "", 1},
		{"its session", srv.AgentName, "ops", 1},
		{"another session", "", "web", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rules, err := human.Rules(ctx, tt.agent, tt.session)
			if err != nil || len(rules) != tt.want {
				t.Fatalf("Rules(%q, %q) = %v, %v; want %d", tt.agent, tt.session, rules, err, tt.want)
			}
		})
	}
	changed, err := human.ChangeRule(ctx, r.ID, askd.RuleLife{For: "7d"})
	if err != nil || !changed.ExpiresAt.After(r.ExpiresAt.Add(24*time.Hour)) {
		t.Fatalf("ChangeRule to 7d = %+v, %v; want it to expire days later than %v", changed, err, r.ExpiresAt)
	}
	revoked, err := human.RevokeRule(ctx, r.ID)
	if err != nil || revoked.RevokedAt == nil {
		t.Fatalf("RevokeRule = %+v, %v; want revoked", revoked, err)
	}
	if rules, err := human.Rules(ctx, "", ""); err != nil || len(rules) != 0 {
		t.Fatalf("Rules after the revoke = %v, %v; want none", rules, err)
	}
}

// Error responses come back as *client.Error, whose Status, Code and
// Message are the server's, and which unwraps to an *askd.Error.
func TestErrors(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := t.Context()
	a, err := srv.Agent("s").Create(ctx, decision("Deploy?"), 0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		call   func() error
		status int
		code   string
		words  string
	}{
		{"no such ask", func() error { _, err := srv.Human().Show(ctx, 99999); return err }, http.StatusNotFound, askd.ENOTFOUND, "not found"},
		{"bad token", func() error { _, err := client.New(srv.URL, "nope").Me(ctx); return err }, http.StatusUnauthorized, askd.EUNAUTHORIZED, ""},
		{"agent answers", func() error {
			_, err := srv.Agent("s").Answer(ctx, a.ID, &askd.Answer{Answer: "Monday"})
			return err
		}, http.StatusForbidden, askd.EFORBIDDEN, ""},
		{"invalid ask", func() error {
			_, err := srv.Agent("s").Create(ctx, &askd.AskInput{Kind: askd.KindReady}, 0)
			return err
		}, http.StatusBadRequest, askd.EINVALID, "title"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			apiError(t, err, tt.status, tt.code, tt.words)
			var ae *askd.Error
			if !errors.As(err, &ae) || ae.Code != tt.code {
				t.Errorf("unwrapped to %v, want an *askd.Error with code %s", ae, tt.code)
			}
			if askd.ErrorCode(err) != tt.code {
				t.Errorf("askd.ErrorCode = %s, want %s", askd.ErrorCode(err), tt.code)
			}
		})
	}

	t.Run("conflict carries the ask", func(t *testing.T) {
		if _, err := srv.Human().Answer(ctx, a.ID, &askd.Answer{Answer: "Monday"}); err != nil {
			t.Fatal(err)
		}
		_, err := srv.Human().Answer(ctx, a.ID, &askd.Answer{Answer: "Friday"})
		ce := apiError(t, err, http.StatusConflict, askd.ECONFLICT, "")
		if ce.Ask == nil || ce.Ask.ID != a.ID || ce.Ask.Status != askd.StatusAnswered || ce.Ask.Answer.Answer != "Monday" {
			t.Fatalf("409 carries %+v, want ask %d as answered (Monday)", ce.Ask, a.ID)
		}
		var ae *askd.Error
		if !errors.As(err, &ae) || ae.Ask == nil || ae.Ask.ID != a.ID {
			t.Errorf("unwrapped to %+v, want the ask too", ae)
		}
	})

	t.Run("not askd's words", func(t *testing.T) {
		// A proxy in front of askd answers for it.
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "upstream gone", http.StatusBadGateway)
		}))
		defer proxy.Close()
		c := client.New(proxy.URL, srv.HumanToken)
		_, err := c.Show(ctx, a.ID)
		apiError(t, err, http.StatusBadGateway, askd.EINTERNAL, "askd at "+proxy.URL+": 502 Bad Gateway: upstream gone")
		_, err = c.Events(ctx, -1)
		apiError(t, err, http.StatusBadGateway, askd.EINTERNAL, "askd at "+proxy.URL+": 502 Bad Gateway: upstream gone")
	})
}

// Requests that get no response say why in a person's words, and keep the
// cause in the chain.
func TestTransportErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close() // nothing answers there now
	tests := []struct {
		name  string
		call  func(c *client.Client) error
		url   string
		words string
		cause func(error) bool
	}{
		{"nothing answering", func(c *client.Client) error { _, err := c.Me(ctx); return err }, closed,
			"nothing answers there (is askd serve running? check --url or ASKD_URL)",
			func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }},
		{"nothing answering the event stream", func(c *client.Client) error { _, err := c.Events(ctx, -1); return err }, closed,
			"nothing answers there",
			func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }},
		{"nothing answering a bridge", func(c *client.Client) error { _, err := c.Attach(ctx, "s"); return err }, closed,
			"nothing answers there",
			func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }},
		{"bad host", func(c *client.Client) error { _, err := c.Me(ctx); return err }, "http://askd.invalid",
			`no such host "askd.invalid" (check --url or ASKD_URL)`,
			func(err error) bool { var dns *net.DNSError; return errors.As(err, &dns) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(client.New(tt.url, "token"))
			if err == nil {
				t.Fatal("no error")
			}
			want := "askd at " + tt.url + ": " + tt.words
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q, want %q", err, want)
			}
			if !tt.cause(err) {
				t.Errorf("error %v lost its cause", err)
			}
			if strings.Contains(err.Error(), `Get "`) {
				t.Errorf("error %q repeats Go's request wording", err)
			}
		})
	}
}

// nextEvent returns the next event from ch, failing the test after a minute.
func nextEvent(t *testing.T, ch <-chan client.Event) client.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("the event stream ended")
		}
		return ev
	case <-time.After(time.Minute):
		t.Fatal("no event")
	}
	return client.Event{}
}

func TestEventsResume(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := t.Context()
	agent := srv.Agent("feed")
	sctx, stop := context.WithCancel(ctx)
	events, err := srv.Human().Events(sctx, -1)
	if err != nil {
		t.Fatal(err)
	}
	first, err := agent.Create(ctx, decision("First?"), 0)
	if err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, events)
	if ev.ID <= 0 || ev.Type != "ask.created" || ev.Event.AskID != first.ID || ev.Event.Ask == nil || ev.Event.Ask.Title != "First?" {
		t.Fatalf("event %+v, want ask.created of ask %d", ev, first.ID)
	}
	stop()
	for range events { // the stream closes once its context ends
	}

	// Missed while away: the stream resumes after the last event seen.
	second, err := srv.Agent("feed-2").Create(ctx, decision("Second?"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Human().Answer(ctx, first.ID, &askd.Answer{Answer: "Monday"}); err != nil {
		t.Fatal(err)
	}
	events, err = srv.Human().Events(ctx, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		typ string
		id  int64
	}{{"ask.created", second.ID}, {"ask.settled", first.ID}} {
		got := nextEvent(t, events)
		if got.ID <= ev.ID || got.Type != want.typ || got.Event.AskID != want.id {
			t.Fatalf("event %d %s of ask %d after resuming at %d, want %s of ask %d", got.ID, got.Type, got.Event.AskID, ev.ID, want.typ, want.id)
		}
	}

	_, err = srv.Agent("feed").Events(ctx, -1)
	apiError(t, err, http.StatusForbidden, askd.EFORBIDDEN, "")
}

// A channel bridge: told texts stream to Attach and are reported with
// ChannelTold; relayed permission prompts become cards, closed by CloseRelay.
func TestBridge(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := t.Context()
	agent := srv.Agent("bridged")
	tells, err := agent.Attach(ctx, "bridged")
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.Create(ctx, decision("Merge?"), 0)
	if err != nil {
		t.Fatal(err)
	}
	answered, err := srv.Human().Answer(ctx, a.ID, &askd.Answer{Answer: "Friday"})
	if err != nil {
		t.Fatal(err)
	}
	var told askd.ChannelTell
	select {
	case told = <-tells:
	case <-time.After(time.Minute):
		t.Fatal("nothing told to the bridge")
	}
	if told.AskID != a.ID || told.Key != askd.TellKey(answered) || told.Text == "" {
		t.Fatalf("told %+v, want ask %d's outcome under key %s", told, a.ID, askd.TellKey(answered))
	}
	got, err := agent.ChannelTold(ctx, "bridged", told.Key)
	if err != nil || got.ID != a.ID || got.ToldAt == nil {
		t.Fatalf("ChannelTold = %+v, %v; want ask %d told", got, err, a.ID)
	}

	card, err := agent.RelayPermission(ctx, "bridged", &askd.PermissionRelay{RequestID: "abcde", ToolName: "Bash", InputPreview: `{"command":"make"}`})
	if err != nil || card.Kind != askd.KindApproval || card.Status != askd.StatusPending {
		t.Fatalf("RelayPermission = %+v, %v; want a pending approval card", card, err)
	}
	if again, err := agent.RelayPermission(ctx, "bridged", &askd.PermissionRelay{RequestID: "abcde", ToolName: "Bash", InputPreview: `{"command":"make"}`}); err != nil || again.ID != card.ID {
		t.Fatalf("RelayPermission again = %+v, %v; want card %d found again", again, err, card.ID)
	}
	closed, err := agent.CloseRelay(ctx, "bridged", "abcde", "terminal")
	if err != nil || closed.ID != card.ID || closed.Status != askd.StatusCancelled {
		t.Fatalf("CloseRelay = %+v, %v; want card %d closed", closed, err, card.ID)
	}

	_, err = srv.Human().Attach(ctx, "bridged")
	apiError(t, err, http.StatusForbidden, askd.EFORBIDDEN, "")
}

func TestHook(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := t.Context()
	agent := client.New(srv.URL, srv.AgentToken) // the session comes from the hook's session_id
	input := json.RawMessage(`{"session_id":"hooked","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"npm test"}}`)
	out := async(func() (json.RawMessage, error) { return agent.Hook(ctx, input, 0) })
	a := srv.Pending(t, "hooked", 1)[0]
	if _, err := srv.Human().Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	var reply struct {
		HookSpecificOutput struct {
			HookEventName string `json:"hookEventName"`
			Decision      struct {
				Behavior string `json:"behavior"`
			} `json:"decision"`
		} `json:"hookSpecificOutput"`
	}
	raw := await(t, out)
	if err := json.Unmarshal(raw, &reply); err != nil || reply.HookSpecificOutput.HookEventName != "PermissionRequest" || reply.HookSpecificOutput.Decision.Behavior != "allow" {
		t.Fatalf("hook output %s (%v), want PermissionRequest allowed", raw, err)
	}

	// A Stop hook with nothing pending and nothing to tell lets the agent stop.
	stop := json.RawMessage(`{"session_id":"hooked","hook_event_name":"Stop","stop_hook_active":false}`)
	if raw, err := agent.Hook(ctx, stop, time.Second); err != nil || string(raw) != "{}" {
		t.Fatalf("Stop hook = %s, %v; want {}", raw, err)
	}
}

// Transport adds the token and session to another HTTP client's requests.
func TestTransport(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	hc := &http.Client{Transport: client.Transport{Token: srv.AgentToken, Session: "via-transport"}}
	resp, err := hc.Get(srv.URL + "/api/me")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var me map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&me); err != nil || resp.StatusCode != http.StatusOK || me["session"] != "via-transport" {
		t.Fatalf("GET /api/me through Transport: %s %v, %v", resp.Status, me, err)
	}
}
