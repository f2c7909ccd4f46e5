package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

func TestSingleChoice(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	p := openInbox(t, srv, "/")
	agent := srv.Agent("db-work")

	// The agent's call blocks until the person clicks.
	done := make(chan result, 1)
	go func() {
		a, err := agent.Create(context.Background(), &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{
			question("Which database?", "Database", false, "SQLite: embedded, zero setup", "Postgres: shared, scales out"),
		}}, 10*time.Minute)
		done <- result{a, err}
	}()
	p.do(chromedp.WaitVisible(chromedp.CSS(card(1))))
	if got := p.text(card(1) + " .opt-desc"); got != "embedded, zero setup" {
		t.Errorf("first description %q", got)
	}
	p.do(chromedp.Click(option(1, "Postgres")))
	a := receive(t, done)
	wantAnswer(t, a, askd.StatusAnswered, `{"answers":{"Which database?":"Postgres"}}`)
	// It moves to Recent, saying who answered and what.
	p.waitFor(`!document.querySelector('#pending .card') && document.querySelector('#recent .recent-item[data-id="1"]') !== null`)
	if got := p.text(`#recent .recent-item[data-id="1"]`); !strings.Contains(got, "by alice") || !strings.Contains(got, "Postgres") {
		t.Errorf("recent item %q lacks who and what", got)
	}
}

func TestMultiSelectAndOther(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	p := openInbox(t, srv, "/")
	agent := srv.Agent("checks")

	multi := create(t, agent, &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{
		question("Which checks?", "Checks", true, "lint: go vet and staticcheck", "tests: go test -race", "fuzz: ten minutes"),
	}})
	ch := agentWaits(agent, multi.ID)
	p.do(chromedp.WaitVisible(chromedp.CSS(card(multi.ID))),
		chromedp.Click(option(multi.ID, "lint")),
		chromedp.Click(option(multi.ID, "tests")),
		chromedp.SendKeys(chromedp.CSS(card(multi.ID)+" input.other"), "benchmarks"),
		chromedp.Click(button(multi.ID, "Submit")))
	wantAnswer(t, receive(t, ch), askd.StatusAnswered, `{"answers":{"Which checks?":["lint","tests","benchmarks"]}}`)

	// Other on a single-select question: the person's words are the answer.
	single := create(t, agent, &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{
		question("Name the branch?", "Branch", false, "main", "dev"),
	}})
	ch = agentWaits(agent, single.ID)
	p.do(chromedp.WaitVisible(chromedp.CSS(card(single.ID))),
		chromedp.SendKeys(chromedp.CSS(card(single.ID)+" input.other"), "release/2.0"),
		chromedp.Click(button(single.ID, "Send")))
	wantAnswer(t, receive(t, ch), askd.StatusAnswered, `{"answers":{"Name the branch?":"release/2.0"}}`)
}

// Close… takes an optional reply: the ask is dismissed, the reply is the
// agent's response.
func TestCloseWithReply(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	p := openInbox(t, srv, "/")
	agent := srv.Agent("s1")
	a := create(t, agent, &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{
		question("Deploy now?", "Deploy", false, "yes", "no"),
	}})
	ch := agentWaits(agent, a.ID)
	p.do(chromedp.WaitVisible(chromedp.CSS(card(a.ID))),
		chromedp.Click(button(a.ID, "Close…")),
		chromedp.SendKeys(chromedp.CSS(card(a.ID)+" input.reply"), "wait for the freeze to end"),
		chromedp.Click(button(a.ID, "Close")))
	got := receive(t, ch)
	if got.CancelReason != askd.ReasonDismissed || got.SettledBy != "alice" {
		t.Fatalf("got %s/%s by %q, want dismissed by alice", got.Status, got.CancelReason, got.SettledBy)
	}
	wantAnswer(t, got, askd.StatusCancelled, `{"response":"wait for the freeze to end"}`)
	p.waitFor(`(document.querySelector('#recent .recent-item[data-id="1"]')?.textContent || '').includes('closed')`)
}

func TestThreeQuestions(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	p := openInbox(t, srv, "/")
	agent := srv.Agent("plan")
	a := create(t, agent, &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{
		question("Which database?", "Database", false, "SQLite", "Postgres"),
		question("Which checks?", "Checks", true, "lint", "tests", "fuzz"),
		question("Which license?", "License", false, "MIT", "Apache-2.0"),
	}})
	ch := agentWaits(agent, a.ID)
	p.do(chromedp.WaitVisible(chromedp.CSS(card(a.ID))))
	// Nothing is sent until every question has an answer.
	p.do(chromedp.Click(option(a.ID, "SQLite")))
	if !eval[bool](p, fmt.Sprintf(`document.evaluate(%q, document, null, 9, null).singleNodeValue.disabled`, button(a.ID, "Submit answers"))) {
		t.Fatal("Submit enabled before every question is answered")
	}
	p.do(chromedp.Click(option(a.ID, "Postgres")), // changes the first answer
		chromedp.Click(option(a.ID, "tests")),
		chromedp.Click(option(a.ID, "fuzz")),
		chromedp.SendKeys(chromedp.CSS(card(a.ID)+" section.q:nth-of-type(3) input.other"), "BSD-3-Clause"),
		chromedp.Click(button(a.ID, "Submit answers")))
	wantAnswer(t, receive(t, ch), askd.StatusAnswered,
		`{"answers":{"Which database?":"Postgres","Which checks?":["tests","fuzz"],"Which license?":"BSD-3-Clause"}}`)
}

func TestDecisionAndAttention(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	p := openInbox(t, srv, "/")
	agent := srv.Agent("refactor")
	a := create(t, agent, &askd.AskInput{Kind: askd.KindDecision, Title: "Split the store package?",
		Details: "It is 2,000 lines.", Recommended: "Split",
		Options: []askd.Option{{Label: "Keep", Description: "one package"}, {Label: "Split", Description: "one per table"}}})
	ch := agentWaits(agent, a.ID)
	p.do(chromedp.WaitVisible(chromedp.CSS(card(a.ID))))
	rec := eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll('%s .opt.recommended')].map(e => e.textContent)`, card(a.ID)))
	if len(rec) != 1 || !strings.Contains(rec[0], "Split") || !strings.Contains(rec[0], "Recommended") {
		t.Fatalf("recommended options %q, want Split marked Recommended", rec)
	}
	p.do(chromedp.Click(option(a.ID, "Keep")))
	wantAnswer(t, receive(t, ch), askd.StatusAnswered, `{"answer":"Keep"}`)

	// ready: an answer field; blocked: Close… without a reply.
	ready := create(t, srv.Agent("build"), &askd.AskInput{Kind: askd.KindReady, Title: "The build is green", Details: "Ready for review."})
	ch = agentWaits(srv.Agent("build"), ready.ID)
	p.do(chromedp.WaitVisible(chromedp.CSS(card(ready.ID))),
		chromedp.SendKeys(chromedp.CSS(card(ready.ID)+" input.answer-text"), "ship it"),
		chromedp.Click(button(ready.ID, "Send")))
	wantAnswer(t, receive(t, ch), askd.StatusAnswered, `{"answer":"ship it"}`)

	blocked := create(t, srv.Agent("infra"), &askd.AskInput{Kind: askd.KindBlocked, Title: "No credentials for the registry"})
	ch = agentWaits(srv.Agent("infra"), blocked.ID)
	p.do(chromedp.WaitVisible(chromedp.CSS(card(blocked.ID))), chromedp.Click(button(blocked.ID, "Close…")), chromedp.Click(button(blocked.ID, "Close")))
	got := receive(t, ch)
	if got.Status != askd.StatusCancelled || got.CancelReason != askd.ReasonDismissed {
		t.Fatalf("Close gave %s/%s, want cancelled/dismissed", got.Status, got.CancelReason)
	}
}

func TestApproval(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	p := openInbox(t, srv, "/")
	agent := srv.Agent("ops")
	approval := func(title string) *askd.Ask {
		return create(t, agent, &askd.AskInput{Kind: askd.KindApproval, Title: title,
			Details: "$ rm -rf ./build", Payload: []byte(`{"command":"rm -rf ./build","timeout":30}`)})
	}

	t.Run("approve", func(t *testing.T) {
		p := p.on(t)
		a := approval("Clean the build dir")
		ch := agentWaits(agent, a.ID)
		p.do(chromedp.WaitVisible(chromedp.CSS(card(a.ID))))
		if got := p.text(card(a.ID) + " pre.payload"); !strings.Contains(got, `"command": "rm -rf ./build"`) {
			t.Errorf("payload shown as %q", got)
		}
		p.steady(button(a.ID, "Approve"))
		p.do(chromedp.Click(button(a.ID, "Approve")))
		wantAnswer(t, receive(t, ch), askd.StatusAnswered, `{"decision":"approved"}`)
	})

	t.Run("edit then approve", func(t *testing.T) {
		p := p.on(t)
		a := approval("Clean again")
		ch := agentWaits(agent, a.ID)
		editor := chromedp.CSS(card(a.ID) + " textarea.json-editor")
		p.do(chromedp.WaitVisible(chromedp.CSS(card(a.ID))))
		// A card moves while its details are rendered and cards above it
		// settle; a click is aimed once it stands still.
		p.steady(button(a.ID, "Edit…"))
		p.do(chromedp.Click(button(a.ID, "Edit…")),
			chromedp.WaitVisible(editor))
		// Select the whole payload and type over it, as a person would.
		eval[bool](p, fmt.Sprintf(`(e => { e.focus(); e.select(); return true })(document.querySelector('%s textarea.json-editor'))`, card(a.ID)))
		p.do(chromedp.KeyEvent(`{"command": "rm -rf ./build/tmp", "timeout": 30`))
		// Invalid JSON: said so, and nothing can be sent.
		p.waitFor(fmt.Sprintf(`(document.querySelector('%s .field-error')?.textContent || '').startsWith('Invalid JSON')`, card(a.ID)))
		if !eval[bool](p, fmt.Sprintf(`document.evaluate(%q, document, null, 9, null).singleNodeValue.disabled`, button(a.ID, "Approve with edits"))) {
			t.Fatal("Approve with edits enabled with invalid JSON")
		}
		// Even a forced click sends nothing. The click handler would call
		// fetch before click() returns (nothing in send awaits before it), so
		// a fetch spied on around the click sees any request it makes.
		if sent := eval[bool](p, fmt.Sprintf(`(b => { const f = window.fetch; let sent = false; window.fetch = (...a) => { sent = true; return f(...a); }; try { b.disabled = false; b.click(); } finally { window.fetch = f; } return sent; })(document.evaluate(%q, document, null, 9, null).singleNodeValue)`, button(a.ID, "Approve with edits"))); sent {
			t.Fatal("a forced click on Approve with edits sent a request with invalid JSON")
		}
		if cur, err := srv.Human().Show(context.Background(), a.ID); err != nil || cur.Status != askd.StatusPending {
			t.Fatalf("after invalid JSON the ask is %v (%v), want still pending", cur.Status, err)
		}
		p.do(chromedp.Focus(editor), chromedp.KeyEvent(`}`))
		p.waitFor(fmt.Sprintf(`document.querySelector('%s .field-error').hidden`, card(a.ID)))
		p.do(chromedp.Click(button(a.ID, "Approve with edits")))
		wantAnswer(t, receive(t, ch), askd.StatusAnswered,
			`{"decision":"modified","payload":{"command":"rm -rf ./build/tmp","timeout":30}}`)
	})

	t.Run("reject with comment", func(t *testing.T) {
		p := p.on(t)
		a := approval("Clean once more")
		ch := agentWaits(agent, a.ID)
		p.do(chromedp.WaitVisible(chromedp.CSS(card(a.ID))))
		p.steady(button(a.ID, "Reject…"))
		p.do(chromedp.Click(button(a.ID, "Reject…")),
			chromedp.SendKeys(chromedp.CSS(card(a.ID)+" textarea.comment"), "not on a Friday"),
			chromedp.Click(button(a.ID, "Reject")))
		wantAnswer(t, receive(t, ch), askd.StatusAnswered, `{"decision":"rejected","comment":"not on a Friday"}`)
	})
}

// TestPayloadHiddenCharacters: a bidi control, a zero-width character and
// a C1 control in a payload's strings show as their \u escapes, in the
// payload and in the editor; the JSON is the same, so an edit elsewhere in
// it gives the agent back the very characters it sent.
func TestPayloadHiddenCharacters(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	agent := srv.Agent("ops")
	a := create(t, agent, &askd.AskInput{Kind: askd.KindApproval, Title: "Send the invoice",
		Payload: []byte(`{"file":"invoice\u202egpj.exe","to":"ops\u200b@example.com\u0085","copies":1}`)})
	ch := agentWaits(agent, a.ID)
	p := openInbox(t, srv, "/")
	want := `"file": "invoice\u202egpj.exe",` + "\n" + `  "to": "ops\u200b@example.com\u0085",`
	if got := p.text(card(a.ID) + " pre.payload"); !strings.Contains(got, want) {
		t.Errorf("payload shown as %q, want it to hold %q", got, want)
	}
	p.steady(button(a.ID, "Edit…"))
	p.do(chromedp.Click(button(a.ID, "Edit…")))
	editor := fmt.Sprintf(`document.querySelector('%s textarea.json-editor')`, card(a.ID))
	if got := eval[string](p, editor+`.value`); !strings.Contains(got, want) {
		t.Errorf("the editor holds %q, want it to hold %q", got, want)
	}
	eval[bool](p, fmt.Sprintf(`(e => { e.value = e.value.replace('"copies": 1', '"copies": 2'); e.dispatchEvent(new Event('input', { bubbles: true })); return true })(%s)`, editor))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s .diff-box ins') !== null`, card(a.ID)))
	p.do(chromedp.Click(button(a.ID, "Approve with edits")))
	wantAnswer(t, receive(t, ch), askd.StatusAnswered,
		`{"decision":"modified","payload":{"file":"invoice\u202egpj.exe","to":"ops\u200b@example.com\u0085","copies":2}}`)
}

func TestLiveAndReload(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	agent := srv.Agent("live")
	first := create(t, agent, &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{question("Old one?", "Old", false, "a", "b")}})
	p := openInbox(t, srv, "/")
	p.do(chromedp.WaitVisible(chromedp.CSS(card(first.ID))))
	if title := eval[string](p, `document.title`); title != "(1) askd inbox" {
		t.Errorf("title %q, want the pending count", title)
	}

	// A new ask appears without a reload: a mark set on this document is
	// still there when it does. (How long it took is a figure for the log:
	// on a busy machine it is no measure of the page.)
	eval[bool](p, `window.__sameDocument = true`)
	start := time.Now()
	second := create(t, agent, &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{question("New one?", "New", false, "c", "d")}})
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') !== null`, card(second.ID)))
	t.Logf("the new ask appeared %v after it was created", time.Since(start).Round(time.Millisecond))
	if !eval[bool](p, `window.__sameDocument === true`) {
		t.Error("the page reloaded to show the new ask")
	}
	p.waitFor(`document.title === '(2) askd inbox'`)

	// Settled elsewhere (the agent withdraws): it moves to Recent by itself.
	if _, err := agent.Withdraw(context.Background(), first.ID); err != nil {
		t.Fatal(err)
	}
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') === null && (document.querySelector('#recent [data-id="%d"]')?.textContent || '').includes('withdrawn')`, card(first.ID), first.ID))

	// A reload loses nothing. (Countdowns aside: they count on meanwhile.)
	const shown = `[...document.querySelectorAll('#pending, #recent')].map(e => { const c = e.cloneNode(true); c.querySelectorAll('.countdown').forEach(t => t.remove()); return c.textContent; }).join('|')`
	before := eval[string](p, shown)
	p.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("body.ready")))
	after := eval[string](p, shown)
	if before != after {
		t.Errorf("after reload the page shows\n%s\nbefore it showed\n%s", after, before)
	}
	// And it is still live.
	third := create(t, srv.Agent("other"), &askd.AskInput{Kind: askd.KindAction, Title: "Rotate the key"})
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') !== null`, card(third.ID)))

	// The connection drops; what happens before the page reconnects still
	// arrives (EventSource resumes with Last-Event-ID).
	srv.HTTP.CloseClientConnections()
	// Fresh connections for the agent too: its idle ones were just closed.
	agent, other := srv.Agent("live"), srv.Agent("other2")
	agent.HTTP, other.HTTP = &http.Client{Transport: &http.Transport{}}, &http.Client{Transport: &http.Transport{}}
	fourth := create(t, other, &askd.AskInput{Kind: askd.KindReady, Title: "Sent while the stream was down"})
	if _, err := agent.Withdraw(context.Background(), second.ID); err != nil {
		t.Fatal(err)
	}
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') !== null && document.querySelector('%s') === null`, card(fourth.ID), card(second.ID)))
	p.waitFor(`document.querySelector('#live').textContent === 'live'`)
}

func TestTwoPeopleAnswerAtOnce(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	srv.Token(t, "bob", askd.RoleHuman)
	agent := srv.Agent("race")
	a := create(t, agent, &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{
		question("Which database?", "Database", false, "SQLite", "Postgres"),
	}})
	ch := agentWaits(agent, a.ID)

	alice := openInbox(t, srv, "/")
	bob := newTab(t, srv)
	// Bob's event stream is held back, so his page still shows the ask as
	// pending when he clicks: his answer is the one that loses at the server.
	if _, err := chromedp.Call(bob.ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/api/events*"}}}); err != nil {
		t.Fatal(err)
	}
	bob.signIn("bob", "/")
	alice.do(chromedp.WaitVisible(chromedp.CSS(card(a.ID))))
	bob.do(chromedp.WaitVisible(chromedp.CSS(card(a.ID))))

	alice.do(chromedp.Click(option(a.ID, "SQLite")))
	wantAnswer(t, receive(t, ch), askd.StatusAnswered, `{"answers":{"Which database?":"SQLite"}}`)
	bob.do(chromedp.Click(option(a.ID, "Postgres")))
	bob.waitFor(fmt.Sprintf(`!document.querySelector('%s .banner').hidden`, card(a.ID)))
	if got := bob.text(card(a.ID) + " .banner-text"); got != "Already answered by alice — SQLite" {
		t.Errorf("loser sees %q", got)
	}
	if cur, _ := srv.Human().Show(context.Background(), a.ID); cur.SettledBy != "alice" {
		t.Errorf("settled by %q, want alice", cur.SettledBy)
	}
	// OK clears the card; Recent says who answered.
	bob.do(chromedp.Click(button(a.ID, "OK")))
	bob.waitFor(fmt.Sprintf(`document.querySelector('%s') === null && (document.querySelector('#recent [data-id="%d"]')?.textContent || '').includes('by alice')`, card(a.ID), a.ID))

	// With live updates: a person halfway through an answer keeps the card,
	// which says who answered first.
	b := create(t, agent, &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{
		question("Which checks?", "Checks", true, "lint", "tests"),
	}})
	carol := openInbox(t, srv, "/")
	carol.do(chromedp.WaitVisible(chromedp.CSS(card(b.ID))), chromedp.Click(option(b.ID, "lint")))
	if _, err := srv.Human().Answer(context.Background(), b.ID, &askd.Answer{Answers: map[string]askd.Choice{"Which checks?": {Values: []string{"tests"}, Multi: true}}}); err != nil {
		t.Fatal(err)
	}
	carol.waitFor(fmt.Sprintf(`(document.querySelector('%s .banner-text')?.textContent || '') === 'Already answered by alice — tests'`, card(b.ID)))
}

// sidebar reads the session list: each link's name, agent and count.
const sidebar = `[...document.querySelectorAll('#sessions .session-link')].map(a => ['.session-name', '.session-agent', '.badge-count']
	.map(c => a.querySelector(c)?.textContent).filter(Boolean).join(' ')).join('|')`

// Two agent tokens each with a session named s1: two sessions in the
// sidebar, each saying whose it is, each scoping to its own agent's asks.
func TestTwoAgentsOneSessionName(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	a := create(t, srv.Agent("s1"), &askd.AskInput{Kind: askd.KindAction, Title: "first agent's ask"})
	other := client.New(srv.URL, srv.Token(t, "builder", askd.RoleAgent))
	other.Session = "s1"
	b := create(t, other, &askd.AskInput{Kind: askd.KindAction, Title: "second agent's ask"})
	p := openInbox(t, srv, "/")
	p.waitFor(`document.querySelectorAll('#pending .card').length === 2`)
	if got := eval[string](p, sidebar); got != "All sessions 2|s1 agent-1 1|s1 builder 1" {
		t.Errorf("sidebar %q", got)
	}
	p.do(chromedp.Click(chromedp.CSS(`#sessions [data-agent="builder"][data-session="s1"]`)))
	p.waitFor(`document.querySelectorAll('#pending .card').length === 1`)
	if got := eval[string](p, `[...document.querySelectorAll('#pending .card')].map(c => c.dataset.id).join(',')`); got != fmt.Sprint(b.ID) {
		t.Errorf("scoped to builder's s1: cards %s, want %d (not %d)", got, b.ID, a.ID)
	}
	if loc := eval[string](p, `location.search`); loc != "?agent=builder&session=s1" {
		t.Errorf("URL %q", loc)
	}
	if got := p.text(card(b.ID) + " .meta .agent"); got != "builder" {
		t.Errorf("card says agent %q, want builder", got)
	}
}

func TestSessionScoping(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	alpha := create(t, srv.Agent("alpha"), &askd.AskInput{Kind: askd.KindAction, Title: "alpha needs you"})
	beta1 := create(t, srv.Agent("beta"), &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{question("beta one?", "B1", false, "x", "y")}})
	beta2 := create(t, srv.Agent("beta"), &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{question("beta two?", "B2", false, "x", "y")}})
	p := openInbox(t, srv, "/")
	ids := func() string {
		return eval[string](p, `[...document.querySelectorAll('#pending .card')].map(c => c.dataset.id).join(',')`)
	}
	p.waitFor(`document.querySelectorAll('#pending .card').length === 3`)
	// Sessions are listed as the server pages them: by agent, then name.
	counts := eval[string](p, sidebar)
	if counts != "All sessions 3|alpha agent-1 1|beta agent-1 2" {
		t.Errorf("sidebar %q", counts)
	}
	p.do(chromedp.Click(chromedp.CSS(`#sessions [data-session="beta"]`)))
	p.waitFor(`document.querySelectorAll('#pending .card').length === 2`)
	// Questions: the soonest deadline (the older one) first.
	if got, want := ids(), fmt.Sprintf("%d,%d", beta1.ID, beta2.ID); got != want {
		t.Errorf("scoped to beta: cards %s, want %s", got, want)
	}
	if loc := eval[string](p, `location.search`); loc != "?agent=agent-1&session=beta" {
		t.Errorf("URL %q keeps no selection", loc)
	}
	// New asks of other sessions stay out of the scoped list.
	create(t, srv.Agent("alpha"), &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{question("alpha q?", "A", false, "x", "y")}})
	p.waitFor(sidebar + ` === 'All sessions 4|alpha agent-1 2|beta agent-1 2'`)
	if got := ids(); got != fmt.Sprintf("%d,%d", beta1.ID, beta2.ID) {
		t.Errorf("after an alpha ask, beta shows %s", got)
	}
	// The selection survives a reload, and All comes back.
	p.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("body.ready")))
	p.waitFor(`document.querySelectorAll('#pending .card').length === 2`)
	p.do(chromedp.Click(chromedp.CSS(`#sessions .session-link[data-session=""]`)))
	p.waitFor(`document.querySelectorAll('#pending .card').length === 4`)
	_ = alpha
}

func TestKeyboard(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	agent := srv.Agent("keys")
	a := create(t, agent, &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{question("First?", "One", false, "a", "b")}})
	b := create(t, agent, &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{question("Second?", "Two", false, "c", "d", "e")}})
	p := openInbox(t, srv, "/")
	p.waitFor(`document.querySelectorAll('#pending .card').length === 2`)
	chA, chB := agentWaits(agent, a.ID), agentWaits(agent, b.ID)
	// Soonest deadline first: j focuses a, j again b, k back to a, j to b.
	p.do(chromedp.KeyEvent("j"))
	p.waitFor(fmt.Sprintf(`document.activeElement.dataset.id === '%d'`, a.ID))
	p.do(chromedp.KeyEvent("j"))
	p.waitFor(fmt.Sprintf(`document.activeElement.dataset.id === '%d'`, b.ID))
	p.do(chromedp.KeyEvent("k"))
	p.waitFor(fmt.Sprintf(`document.activeElement.dataset.id === '%d'`, a.ID))
	p.do(chromedp.KeyEvent("j"))
	p.waitFor(fmt.Sprintf(`document.activeElement.dataset.id === '%d'`, b.ID))
	p.do(chromedp.KeyEvent("3"))
	wantAnswer(t, receive(t, chB), askd.StatusAnswered, `{"answers":{"Second?":"e"}}`)
	p.waitFor(`document.querySelectorAll('#pending .card').length === 1`)
	p.do(chromedp.KeyEvent("j"), chromedp.KeyEvent("2"))
	wantAnswer(t, receive(t, chA), askd.StatusAnswered, `{"answers":{"First?":"b"}}`)
}

func TestSnooze(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	a := create(t, srv.Agent("later"), &askd.AskInput{Kind: askd.KindAction, Title: "Renew the certificate"})
	p := openInbox(t, srv, "/")
	p.do(chromedp.WaitVisible(chromedp.CSS(card(a.ID))), chromedp.Click(button(a.ID, "Snooze 1 h")))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') === null && !document.querySelector('#snoozed').hidden`, card(a.ID)))
	cur, err := srv.Human().Show(context.Background(), a.ID)
	if err != nil || cur.SnoozedUntil == nil || time.Until(*cur.SnoozedUntil) < 59*time.Minute {
		t.Fatalf("snoozed until %v (%v), want an hour from now", cur.SnoozedUntil, err)
	}
	if title := eval[string](p, `document.title`); title != "askd inbox" {
		t.Errorf("title %q: a snoozed ask is not waiting", title)
	}
}

func TestSignInAndOut(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	p := newTab(t, srv)
	p.do(chromedp.Navigate(srv.URL+"/?session=x"), chromedp.WaitVisible(chromedp.CSS("#token")))
	if loc := eval[string](p, `location.pathname`); loc != "/signin.html" {
		t.Fatalf("not signed in, landed on %s", loc)
	}
	// An agent token is refused with a message.
	p.do(chromedp.SendKeys(chromedp.CSS("#token"), srv.AgentToken), chromedp.Submit(chromedp.CSS("form")),
		chromedp.WaitVisible(chromedp.CSS(".error")))
	if got := p.text(".error"); !strings.Contains(got, "agent token") {
		t.Errorf("agent sign-in says %q", got)
	}
	// A human token signs in, to a clean URL.
	p.do(chromedp.SendKeys(chromedp.CSS("#token"), srv.HumanToken), chromedp.Submit(chromedp.CSS("form")),
		chromedp.WaitVisible(chromedp.CSS("body.ready")))
	if loc := eval[string](p, `location.href`); loc != srv.URL+"/" {
		t.Errorf("signed in at %s", loc)
	}
	if me := p.text("#me"); me != "alice" {
		t.Errorf("signed in as %q", me)
	}
	if c := eval[string](p, `document.cookie`); c != "" {
		t.Errorf("page scripts can read cookies: %q", c)
	}
	ck := p.browserCookie()
	if ck.Value == srv.HumanToken || !ck.HTTPOnly || ck.SameSite != network.CookieSameSiteStrict || ck.Path != "/" {
		t.Errorf("cookie %+v: want a browser session's id, HttpOnly, SameSite=Strict, Path=/", ck)
	}
	// Sign out: back to the form, and the inbox is closed again.
	p.do(chromedp.Click(chromedp.CSS(".signout button")), chromedp.WaitVisible(chromedp.CSS("#token")))
	p.do(chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#token")))
	// The browser session ended on the server: a copy of the cookie is refused.
	if resp := get(t, srv.URL+"/", ck.Value); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the signed-out cookie opened the inbox: %d", resp.StatusCode)
	}
	err := srv.Store.View(t.Context(), func(tx askd.Tx) error {
		_, err := tx.SignIns.BrowserSession(t.Context(), app.HashToken(ck.Value))
		return err
	})
	if askd.ErrorCode(err) != askd.ENOTFOUND {
		t.Errorf("browser session after signing out: %v, want ENOTFOUND", err)
	}
}

// TestSignInLink signs in with a link as askd signin-link prints it: it lands
// on a clean URL, and the link works only once.
func TestSignInLink(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	link := srv.SignInLink(t, srv.HumanName)
	p := newTab(t, srv)
	p.do(chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("body.ready")))
	if loc := eval[string](p, `location.href`); loc != srv.URL+"/" {
		t.Errorf("signed in at %s, want the clean %s/", loc, srv.URL)
	}
	if me := p.text("#me"); me != srv.HumanName {
		t.Errorf("signed in as %q", me)
	}
	code := link[strings.Index(link, "code=")+len("code="):]
	if ck := p.browserCookie(); ck.Value == srv.HumanToken || ck.Value == code {
		t.Errorf("the cookie holds %q, a token or the code", ck.Value)
	}

	again := newTab(t, srv)
	again.do(chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS(".error")))
	if got := again.text(".error"); !strings.Contains(got, "already used") {
		t.Errorf("the link used twice says %q", got)
	}
	again.do(chromedp.Navigate(srv.URL+"/signin?token="+srv.HumanToken), chromedp.WaitVisible(chromedp.CSS(".error")))
	if got := again.text(".error"); !strings.Contains(got, "askd signin-link") {
		t.Errorf("a link with a token says %q", got)
	}
	if loc := eval[string](again, `location.pathname`); loc != "/signin.html" {
		t.Errorf("a link with a token landed on %s", loc)
	}
}

func TestNotification(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	p := newTab(t, srv)
	// Stand-ins for a hidden tab and a granted permission, installed before
	// the page's scripts run.
	_, err := chromedp.Call(p.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `
		window.__notes = [];
		window.Notification = class { static permission = 'granted'; constructor(title, o) { window.__notes.push(title + ' | ' + o.body); } close() {} };
		Object.defineProperty(document, 'hidden', { get: () => window.__hidden === true });`})
	if err != nil {
		t.Fatal(err)
	}
	p.signIn(srv.HumanName, "/")
	eval[bool](p, `window.__hidden = false, true`)
	a := create(t, srv.Agent("seen"), &askd.AskInput{Kind: askd.KindAction, Title: "Visible tab: no notification"})
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') !== null`, card(a.ID)))
	eval[bool](p, `window.__hidden = true, true`)
	b := create(t, srv.Agent("away"), &askd.AskInput{Kind: askd.KindAction, Title: "Hidden tab: notify"})
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') !== null`, card(b.ID)))
	if got := eval[[]string](p, `window.__notes`); len(got) != 1 || got[0] != "askd · away | Hidden tab: notify" {
		t.Errorf("notifications %q", got)
	}
	p.waitFor(`document.title === '(2) askd inbox'`)
}

// A question whose agent stopped waiting (its call was cut off) says so on
// its card, live and after a reload, and can still be answered.
func TestCardSaysTheAgentStoppedWaiting(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	agent := srv.Agent("cut")
	p := openInbox(t, srv, "/")
	ctx, cut := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = agent.Create(ctx, &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{question("Ship it today?", "Ship", false, "yes", "no")}}, time.Minute)
	}()
	p.waitFor(`document.querySelectorAll('#pending .card').length === 1`)
	id := eval[int64](p, `Number(document.querySelector('#pending .card').dataset.id)`)
	if !eval[bool](p, fmt.Sprintf(`document.querySelector('%s .stopped').hidden`, card(id))) {
		t.Error("the card says the agent stopped waiting while it waits")
	}
	cut()
	<-done
	p.waitFor(fmt.Sprintf(`!document.querySelector('%s .stopped').hidden`, card(id)))
	p.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("body.ready")))
	p.waitFor(fmt.Sprintf(`!(document.querySelector('%s .stopped')?.hidden ?? true)`, card(id)))
	p.do(chromedp.Click(option(id, "yes")))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') === null`, card(id)))
	got, err := srv.Human().Show(context.Background(), id)
	if err != nil || got.Status != askd.StatusAnswered || !got.ToBeTold {
		t.Fatalf("after answering: %+v, %v; want answered and to be told", got, err)
	}
}
