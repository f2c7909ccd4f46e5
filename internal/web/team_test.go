package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// A team's inbox (SPEC §10) in the page: Mine and All, claims, a viewer's
// read-only page, the person's notification settings.

// person makes a human token named name with access.
func person(t *testing.T, srv *testserver.Server, name string, access askd.Access) askd.Caller {
	t.Helper()
	srv.TokenWith(t, app.TokenSpec{Name: name, Role: askd.RoleHuman, Access: access})
	return askd.Caller{Name: name, Role: askd.RoleHuman, Access: access}
}

// team makes a team of members, escalating to to after after (0: never).
func team(t *testing.T, srv *testserver.Server, name string, after time.Duration, to string, members ...string) {
	t.Helper()
	if _, err := srv.App.CreateTeam(context.Background(), app.Itself, app.TeamInput{Name: name, Members: members, EscalateAfter: after, EscalateTo: to}); err != nil {
		t.Fatalf("team %s: %v", name, err)
	}
}

// askAs creates an ask in session as agent owned by owner ("" for
// everyone's), through the app layer as that agent's token would.
func askAs(t *testing.T, srv *testserver.Server, agent, owner, session string, in *askd.AskInput) *askd.Ask {
	t.Helper()
	c := askd.Caller{Name: agent, Role: askd.RoleAgent, Session: session, Owner: owner}
	a, err := srv.App.Create(context.Background(), c, in, app.CreateOptions{})
	if err != nil {
		t.Fatalf("%s asks in %s: %v", agent, session, err)
	}
	return a
}

func action(title string) *askd.AskInput { return &askd.AskInput{Kind: askd.KindAction, Title: title} }

// cardIDs reads the ids of the pending cards, in order.
const cardIDs = `[...document.querySelectorAll('#pending .card')].map(c => Number(c.dataset.id))`

// whoseCount is the count the Mine or All button shows ("" for none).
func whoseCount(whose string) string {
	return fmt.Sprintf(`document.querySelector('#whose [data-whose=%q]').dataset.count`, whose)
}

// notesStub stands in for a hidden tab whose person allowed notifications:
// each notification raised is kept in window.__notes.
const notesStub = `
	window.__notes = [];
	window.Notification = class { static permission = 'granted'; constructor(title, o) { window.__notes.push(title + ' | ' + o.body); } close() {} };
	Object.defineProperty(document, 'hidden', { get: () => true });`

func TestMineAndAll(t *testing.T) {
	t.Parallel()
	clk := &testserver.Clock{}
	srv := startServer(t, app.Config{Now: clk.Now})
	person(t, srv, "bob", askd.AccessApprover)
	person(t, srv, "carol", askd.AccessApprover)
	team(t, srv, "platform", 0, "", "bob", "carol")
	team(t, srv, "ops", 10*time.Minute, "bob", "carol")
	team(t, srv, "infra", 0, "", "carol") // no asks yet: learnt live
	team(t, srv, "web", 0, "", "bob")     // likewise

	plat := askAs(t, srv, "deployer", "team:platform", "deploys", action("Roll out api v2.14"))
	ops := askAs(t, srv, "pager", "team:ops", "oncall", action("Fill the rotation gap"))
	bobs := askAs(t, srv, "helper", "bob", "certs", action("Renew the TLS certificate"))
	alices := askAs(t, srv, "scribe", "alice", "docs", action("Review the changelog"))
	nobodys := askAs(t, srv, "agent-1", "", "misc", action("Anyone: rotate the logs"))

	bob := newTab(t, srv)
	if _, err := chromedp.Call(bob.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: notesStub}); err != nil {
		t.Fatal(err)
	}
	bob.signIn("bob", "/")
	carol := newTab(t, srv)
	carol.signIn("carol", "/")

	// Mine opens first: routed to the person, a team of theirs, or nobody.
	ids := func(p *tab, want ...*askd.Ask) {
		t.Helper()
		var w []int64
		for _, a := range want {
			w = append(w, a.ID)
		}
		js := fmt.Sprintf(`JSON.stringify(%s.sort((x, y) => x - y)) === %q`, cardIDs, mustJSON(t, w))
		p.waitFor(js)
	}
	ids(bob, plat, bobs, nobodys)
	ids(carol, plat, ops, nobodys)
	bob.waitFor(whoseCount("mine") + ` === '3' && ` + whoseCount("all") + ` === '5' && document.title === '(3) askd inbox'`)
	if got := bob.text(card(plat.ID) + " .claim-row"); !strings.Contains(got, "for team:platform") {
		t.Errorf("platform's card says %q, want for team:platform", got)
	}
	if got := bob.text(card(bobs.ID) + " .claim-row"); !strings.Contains(got, "for bob") {
		t.Errorf("bob's card says %q, want for bob", got)
	}
	if !eval[bool](bob, fmt.Sprintf(`document.querySelector('%s .claim-row .owner') === null`, card(nobodys.ID))) {
		t.Error("an ask routed to nobody names an owner")
	}

	// All, one click away, and remembered.
	bob.do(chromedp.Click(chromedp.CSS(`#whose [data-whose="all"]`)))
	ids(bob, plat, ops, bobs, alices, nobodys)
	if got := bob.text(card(alices.ID) + " .claim-row"); !strings.Contains(got, "for alice") {
		t.Errorf("alice's card says %q, want for alice", got)
	}
	bob.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("body.ready")))
	ids(bob, plat, ops, bobs, alices, nobodys)
	bob.waitFor(`document.querySelector('#whose [data-whose="all"]').getAttribute('aria-pressed') === 'true'`)
	if title := eval[string](bob, `document.title`); title != "(3) askd inbox" {
		t.Errorf("on All the title is %q, want Mine's count", title)
	}
	bob.do(chromedp.Click(chromedp.CSS(`#whose [data-whose="mine"]`)))
	ids(bob, plat, bobs, nobodys)

	// Live: an ask of a team of bob's that he has not seen yet shows on his
	// Mine, counts, and notifies him; one of carol's team does none of that
	// on his page, but shows on hers.
	web := askAs(t, srv, "webbot", "team:web", "site", action("Approve the new landing page"))
	ids(bob, plat, bobs, nobodys, web)
	bob.waitFor(`document.title === '(4) askd inbox'`)
	infra := askAs(t, srv, "builder", "team:infra", "ci", action("Restart the runners"))
	ids(carol, plat, ops, nobodys, infra)
	bob.waitFor(whoseCount("all") + ` === '7'`)
	bob.do(chromedp.Click(chromedp.CSS(`#whose [data-whose="all"]`)))
	bob.waitFor(fmt.Sprintf(`document.querySelector('%s') !== null`, card(infra.ID)))
	bob.do(chromedp.Click(chromedp.CSS(`#whose [data-whose="mine"]`)))
	ids(bob, plat, bobs, nobodys, web)
	if got := eval[string](bob, `document.title + ' ' + `+whoseCount("mine")); got != "(4) askd inbox 4" {
		t.Errorf("after another team's ask bob's page counts %q, want 4", got)
	}

	// Escalation: ops' ask, waiting past its team's 10 minutes, is escalated
	// to bob: it joins his Mine, saying so, and notifies him.
	clk.Skip(11 * time.Minute)
	escalated(t, srv, ops.ID, "bob")
	ids(bob, plat, ops, bobs, nobodys, web)
	bob.waitFor(`document.title === '(5) askd inbox'`)
	if got := bob.text(card(ops.ID) + " .claim-row"); !strings.Contains(got, "for team:ops") || !strings.Contains(got, "escalated to bob") {
		t.Errorf("the escalated card says %q", got)
	}
	notes := eval[[]string](bob, `window.__notes`)
	want := []string{
		"askd · site | Approve the new landing page",
		"askd · oncall | Fill the rotation gap (escalated to bob)",
	}
	if fmt.Sprint(notes) != fmt.Sprint(want) {
		t.Errorf("bob's notifications\n%q\nwant\n%q", notes, want)
	}
	carol.waitFor(fmt.Sprintf(`(document.querySelector('%s .claim-row')?.textContent || '').includes('escalated to bob')`, card(ops.ID)))
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// claimLine is the text of ask id's claim line.
func claimLine(id int64) string {
	return fmt.Sprintf(`(document.querySelector('%s .claim-row')?.textContent || '')`, card(id))
}

// Bob takes an ask: everyone's page says so at once; carol (an approver)
// may not let his claim go, alice (an admin) may; then it can be taken
// again.
func TestClaimShowsLive(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	person(t, srv, "bob", askd.AccessApprover)
	person(t, srv, "carol", askd.AccessApprover)
	a := create(t, srv.Agent("deploys"), action("Roll out api v2.14"))
	alice := openInbox(t, srv, "/")
	bob := newTab(t, srv)
	bob.signIn("bob", "/")
	carol := newTab(t, srv)
	carol.signIn("carol", "/")
	for _, p := range []*tab{alice, bob, carol} {
		p.waitFor(fmt.Sprintf(`document.querySelector('%s button.claim:not([hidden])') !== null`, card(a.ID)))
	}

	bob.do(chromedp.Click(button(a.ID, "Take it")))
	bob.waitFor(claimLine(a.ID) + ` === 'You’re on itLet go'`)
	carol.waitFor(claimLine(a.ID) + ` === 'bob is on it'`)
	alice.waitFor(claimLine(a.ID) + ` === 'bob is on itLet go'`)
	if got, _ := srv.Human().Show(context.Background(), a.ID); got.ClaimedBy != "bob" {
		t.Fatalf("claimed by %q, want bob", got.ClaimedBy)
	}

	// An admin lets anyone's claim go.
	alice.do(chromedp.Click(button(a.ID, "Let go")))
	for _, p := range []*tab{alice, bob, carol} {
		p.waitFor(fmt.Sprintf(`document.querySelector('%s button.claim:not([hidden])') !== null && !%s.includes('on it')`, card(a.ID), claimLine(a.ID)))
	}
	// Carol takes it now; answering ends the claim, and the card goes.
	carol.do(chromedp.Click(button(a.ID, "Take it")))
	bob.waitFor(claimLine(a.ID) + ` === 'carol is on it'`)
	bob.do(chromedp.Click(button(a.ID, "Done")))
	carol.waitFor(fmt.Sprintf(`document.querySelector('%s') === null`, card(a.ID)))
	if got, _ := srv.Human().Show(context.Background(), a.ID); got.SettledBy != "bob" || got.ClaimedBy != "" {
		t.Errorf("settled by %q, claimed by %q; want bob's answer and no claim", got.SettledBy, got.ClaimedBy)
	}
	// The record says who took it and who let it go.
	rec := fmt.Sprintf(`#recent .recent-item[data-id="%d"]`, a.ID)
	carol.waitFor(fmt.Sprintf(`document.querySelector('%s details.record') !== null`, rec))
	eval[bool](carol, fmt.Sprintf(`document.querySelector('%s details.record').open = true`, rec))
	carol.waitFor(fmt.Sprintf(`document.querySelector('%s .timeline li') !== null`, rec))
	events := eval[[]string](carol, fmt.Sprintf(`[...document.querySelectorAll('%s .timeline li .ev')].map(e => e.textContent)`, rec))
	want := []string{"Asked by agent-1", "Taken by bob", "Let go by alice", "Taken by carol", "Answered by bob"}
	if fmt.Sprint(events) != fmt.Sprint(want) {
		t.Errorf("the record's events\n%q\nwant\n%q", events, want)
	}
}

// Two people take the same ask at once: one wins at the server, and the
// other's card says who.
func TestClaimRaceShowsTheWinner(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	person(t, srv, "bob", askd.AccessApprover)
	carol := person(t, srv, "carol", askd.AccessApprover)
	a := create(t, srv.Agent("deploys"), action("Roll out api v2.14"))
	bob := newTab(t, srv)
	// Bob's event stream is held back, so his page still shows the ask as
	// nobody's when he clicks.
	if _, err := chromedp.Call(bob.ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/api/events*"}}}); err != nil {
		t.Fatal(err)
	}
	bob.signIn("bob", "/")
	bob.waitFor(fmt.Sprintf(`document.querySelector('%s button.claim:not([hidden])') !== null`, card(a.ID)))
	if _, err := srv.App.Claim(context.Background(), carol, a.ID); err != nil {
		t.Fatal(err)
	}
	bob.do(chromedp.Click(button(a.ID, "Take it")))
	bob.waitFor(claimLine(a.ID) + ` === 'carol is on itcarol took it first'`)
	if !eval[bool](bob, fmt.Sprintf(`document.querySelector('%[1]s button.claim:not([hidden]), %[1]s button.release') === null`, card(a.ID))) {
		t.Error("bob's card still offers to take or let go carol's claim")
	}
	if got, _ := srv.Human().Show(context.Background(), a.ID); got.ClaimedBy != "carol" {
		t.Errorf("claimed by %q, want carol", got.ClaimedBy)
	}
}

// everyKind creates a pending ask of every kind and shape the inbox shows,
// as the test server's agent (owned by nobody), and returns them.
func everyKind(t *testing.T, srv *testserver.Server) []*askd.Ask {
	t.Helper()
	detail := &askd.AskInput{Kind: askd.KindBlocked, Title: "Blocked on the signing key", Details: "Upload a new key as `SIGNING_KEY`."}
	return []*askd.Ask{
		createFor(t, srv, "s-q", &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{question("Which database?", "Database", false, "SQLite: embedded", "Postgres: shared")}}, time.Hour),
		createFor(t, srv, "s-multi", &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{
			question("Which checks?", "Checks", true, "lint", "tests"),
			{Question: "Which layout?", Header: "Layout", Options: []askd.Option{{Label: "Tabs", Preview: "**Tabs**"}, {Label: "Page", Preview: "**Page**"}}},
		}}, time.Hour),
		createFor(t, srv, "s-decision", &askd.AskInput{Kind: askd.KindDecision, Title: "Publish now?", Recommended: "Wait",
			Options: []askd.Option{{Label: "Publish", Description: "today"}, {Label: "Wait", Description: "for the freeze"}}}, 0),
		createFor(t, srv, "s-action", action("Rotate the key"), 0),
		createFor(t, srv, "s-ready", &askd.AskInput{Kind: askd.KindReady, Title: "The preview is up"}, 0),
		createFor(t, srv, "s-blocked", detail, 0),
		createFor(t, srv, "s-approval", &askd.AskInput{Kind: askd.KindApproval, Title: "Apply the plan", Payload: []byte(`{"workspace":"staging"}`)}, 0),
		createFor(t, srv, "s-bash", permission(t, "Bash", `{"command":"go test ./...","description":"Run the tests"}`), 0),
		createForm(t, srv, "s-form", everyField),
		createFor(t, srv, "s-url", &askd.AskInput{Kind: askd.KindForm, Title: "Authorize the bot", Source: "github", URL: "https://github.com/login/device?user_code=WDJB-MJHT"}, 0),
	}
}

// controls lists what can be pressed, typed in or chosen in the part of the
// page sel names, each as "tag.class (card id)": buttons, fields, the digits
// that press options, forms, editable text. A details box's Show all is no
// control of the ask's.
func controls(p *tab, sel string) []string {
	p.t.Helper()
	return eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll(%q)].flatMap(root => [...root.querySelectorAll('button, input, textarea, select, form, [data-key], [contenteditable], [role=button], [tabindex="0"]:not(.card)')])
		.filter(e => !e.classList.contains('show-all'))
		.map(e => e.tagName.toLowerCase() + '.' + [...e.classList].join('.') + ' (' + (e.closest('[data-id]')?.dataset.id || '') + ')')`, sel))
}

// A viewer's page offers nothing to do with any ask: no options to press,
// no approve or reject, no form to submit, no close, snooze, claim or rule;
// it says what the role is. An approver's page, on the same asks, offers
// them all.
func TestViewerPageHasNoAnswerControls(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	person(t, srv, "eve", askd.AccessViewer)
	person(t, srv, "bob", askd.AccessApprover)
	asks := everyKind(t, srv)
	ctx := context.Background()
	alice, err := srv.App.Authenticate(ctx, srv.HumanToken)
	if err != nil {
		t.Fatal(err)
	}
	claimed := asks[3]
	if _, err := srv.App.Claim(ctx, alice, claimed.ID); err != nil {
		t.Fatal(err)
	}
	// A rule, so that the Rules view has one to show.
	bash := asks[7]
	if _, err := srv.Human().CreateRule(ctx, &askd.RuleInput{AskID: bash.ID, Match: askd.MatchTool, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "1h"}}); err != nil {
		t.Fatal(err)
	}

	eve := newTab(t, srv)
	eve.signIn("eve", "/")
	eve.waitFor(fmt.Sprintf(`document.querySelectorAll('#pending .card').length === %d && [...document.querySelectorAll('#pending .details')].every(d => d.querySelector('.md'))`, len(asks)))
	eval[bool](eve, `document.querySelectorAll('.card').forEach(c => c.style.contentVisibility = 'visible'), true`)
	if got := controls(eve, "#pending"); len(got) > 0 {
		t.Errorf("a viewer's cards offer %d controls: %q", len(got), got)
	}
	if got := controls(eve, "#whose"); len(got) != 2 {
		t.Errorf("a viewer's Mine and All: %q", got)
	}
	if note := eve.text("#viewer-note"); !strings.Contains(note, "viewer") || eval[bool](eve, `document.querySelector('#viewer-note').hidden`) {
		t.Errorf("the viewer's note %q (shown: %v)", note, !eval[bool](eve, `document.querySelector('#viewer-note').hidden`))
	}
	if got := eve.text("#me-role"); got != "viewer" {
		t.Errorf("the header's role %q, want viewer", got)
	}
	// What the asks say is there, as text: options, a payload, fields.
	page := eval[string](eve, `document.querySelector('#pending').textContent`)
	for _, want := range []string{"SQLite", "embedded", "Recommended", "Rotate the key", `"workspace": "staging"`, "go test ./...", "github.com", "alice is on it"} {
		if !strings.Contains(page, want) {
			t.Errorf("a viewer's cards lack %q", want)
		}
	}
	// Keys press nothing: every ask is still pending.
	eve.do(chromedp.Focus(chromedp.CSS(card(asks[0].ID))), chromedp.KeyEvent("1"), chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	for _, a := range asks {
		if got, _ := srv.Human().Show(ctx, a.ID); got.Status != askd.StatusPending {
			t.Errorf("ask %d is %s after a viewer's keys", a.ID, got.Status)
		}
	}
	// Rules are read, not changed.
	eve.do(chromedp.Click(chromedp.CSS(`#views .view-link[data-view="rules"]`)))
	eve.waitFor(`document.querySelectorAll('#rules .rule-item').length === 1`)
	if got := controls(eve, "#rules"); len(got) > 0 {
		t.Errorf("a viewer's Rules view offers %q", got)
	}

	// An approver's page, on the same asks: every card offers answers,
	// Close…, snoozing, and Take it (or Let go of nothing: alice holds one).
	bob := newTab(t, srv)
	bob.signIn("bob", "/")
	bob.waitFor(fmt.Sprintf(`document.querySelectorAll('#pending .card').length === %d`, len(asks)))
	for _, a := range asks {
		sel := card(a.ID)
		got := controls(bob, sel)
		if len(got) < 4 {
			t.Errorf("an approver's card of %s offers only %q", a.Session, got)
		}
		want := []string{".close-toggle", "Snooze 1 h"}
		if a.ID == claimed.ID {
			if line := bob.text(sel + " .claim-row"); line != "alice is on it" {
				t.Errorf("the claimed card says %q to bob", line)
			}
			if eval[bool](bob, fmt.Sprintf(`document.querySelector('%s button.claim:not([hidden]), %s button.release') !== null`, sel, sel)) {
				t.Error("bob is offered to take or let go alice's claim")
			}
		} else {
			want = append(want, ".claim")
		}
		for _, w := range want { // a class, or the words of a button
			js := fmt.Sprintf(`[...document.querySelectorAll('%s button:not([hidden])')].some(b => b.textContent === %q)`, sel, w)
			if strings.HasPrefix(w, ".") {
				js = fmt.Sprintf(`document.querySelector('%s button%s:not([hidden])') !== null`, sel, w)
			}
			if !eval[bool](bob, js) {
				t.Errorf("an approver's card of %s lacks %s", a.Session, w)
			}
		}
	}
	for _, sel := range []string{
		option(asks[0].ID, "SQLite"), button(asks[6].ID, "Approve"), button(asks[6].ID, "Reject…"), button(asks[8].ID, "Submit"), button(asks[9].ID, "Done"),
	} {
		if !eval[bool](bob, fmt.Sprintf(`document.evaluate(%q, document, null, 9, null).singleNodeValue !== null`, sel)) {
			t.Errorf("an approver's page lacks %s", sel)
		}
	}
	if eval[bool](bob, `!document.querySelector('#viewer-note').hidden`) {
		t.Error("an approver's page says the viewer's note")
	}
	bob.do(chromedp.Click(chromedp.CSS(`#views .view-link[data-view="rules"]`)))
	bob.waitFor(`document.querySelectorAll('#rules .rule-item').length === 1`)
	// The rule is alice's: bob, an approver, may not change it either.
	if got := controls(bob, "#rules"); len(got) > 0 {
		t.Errorf("an approver's Rules view offers %q on an admin's rule", got)
	}
}

// The person's own ntfy topic and webhook (GET and PUT /api/me/notify): the
// server's refusal shows beside its field; what is saved is read back.
func TestNotifySettings(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	p := openInbox(t, srv, "/?view=settings")
	p.waitFor(`document.querySelector('#settings-who').textContent !== ''`)
	if got := p.text("#settings-who"); !strings.HasPrefix(got, "You are alice, an admin") {
		t.Errorf("settings say %q", got)
	}
	p.waitFor(`document.querySelector('#notify-status').textContent !== '' || !document.querySelector('#notify-save').disabled`)
	if status := p.text("#notify-status"); strings.Contains(status, "keeps no notification settings") {
		// This server has no /api/me/notify yet: the panel says so and
		// offers nothing to save.
		if !eval[bool](p, `document.querySelector('#notify-save').disabled`) {
			t.Error("Save offered with nowhere to save")
		}
		t.Skip("GET /api/me/notify is not served here yet: the panel's saving is checked once it is")
	}
	set := func(name, v string) {
		t.Helper()
		setValue(p, fmt.Sprintf(`#notify-form input[name=%q]`, name), v)
	}
	set("ntfy", "ftp://ntfy.example/topic")
	set("webhook", "https://hooks.example/askd")
	p.do(chromedp.Click(chromedp.CSS("#notify-save")))
	p.waitFor(`!document.querySelector('#notify-ntfy-error').hidden`)
	if got := p.text("#notify-ntfy-error"); !strings.HasPrefix(got, "ntfy") {
		t.Errorf("beside ntfy: %q", got)
	}
	if !eval[bool](p, `document.querySelector('#notify-webhook-error').hidden`) {
		t.Error("the webhook field shows a problem too")
	}
	set("ntfy", "https://ntfy.example/alice-askd")
	p.do(chromedp.Click(chromedp.CSS("#notify-save")))
	p.waitFor(`document.querySelector('#notify-status').textContent === 'Saved.'`)
	p.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("body.ready")))
	p.waitFor(`document.querySelector('#notify-form input[name="ntfy"]').value === 'https://ntfy.example/alice-askd' && document.querySelector('#notify-form input[name="webhook"]').value === 'https://hooks.example/askd'`)

	// A webhook secret set through the API is never shown, and the page's
	// Save keeps it: it sends back the "******" it read in its place.
	const secret = "alice's secret"
	if _, err := srv.Human().SetMyNotify(t.Context(), askd.PersonNotify{Ntfy: "https://ntfy.example/alice-askd", Webhook: "https://hooks.example/askd", WebhookSecret: secret}); err != nil {
		t.Fatal(err)
	}
	p.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("body.ready")))
	p.waitFor(`document.querySelector('#notify-form input[name="ntfy"]').value === 'https://ntfy.example/alice-askd' && !document.querySelector('#notify-save').disabled`)
	set("ntfy", "https://ntfy.example/alice-elsewhere")
	p.do(chromedp.Click(chromedp.CSS("#notify-save")))
	p.waitFor(`document.querySelector('#notify-status').textContent === 'Saved.'`)
	var stored *askd.PersonNotify
	if err := srv.Store.View(t.Context(), func(tx askd.Tx) (err error) {
		stored, err = tx.Teams.Notify(t.Context(), srv.HumanName)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if stored.Ntfy != "https://ntfy.example/alice-elsewhere" || stored.WebhookSecret != secret {
		t.Errorf("stored after the page's Save: %+v, want the new topic and the secret kept", stored)
	}
	if html := eval[string](p, `document.body.innerHTML`); strings.Contains(html, secret) {
		t.Error("the page holds the secret")
	}

	// An email address (SPEC §16): not one mailbox is refused beside its
	// field, and nothing is stored; one is saved, and the secret kept.
	set("email", "Alice <alice@example.com>")
	p.do(chromedp.Click(chromedp.CSS("#notify-save")))
	p.waitFor(`!document.querySelector('#notify-email-error').hidden`)
	if got := p.text("#notify-email-error"); !strings.HasPrefix(got, "email: ") {
		t.Errorf("beside email: %q", got)
	}
	if n := storedNotify(t, srv); n.Email != nil {
		t.Errorf("a refused address changed the store: %q", *n.Email)
	}
	set("email", "alice@example.com")
	p.do(chromedp.Click(chromedp.CSS("#notify-save")))
	p.waitFor(`document.querySelector('#notify-status').textContent === 'Saved.'`)
	if n := storedNotify(t, srv); n.Email == nil || *n.Email != "alice@example.com" || n.WebhookSecret != secret || n.Ntfy != "https://ntfy.example/alice-elsewhere" {
		t.Errorf("stored after saving an address: %+v", n)
	}
	// Emptied, it is a choice of none, which the page then says.
	set("email", "")
	p.do(chromedp.Click(chromedp.CSS("#notify-save")))
	p.waitFor(`document.querySelector('#notify-status').textContent === 'Saved.' && !document.querySelector('#notify-email-note').hidden`)
	if n := storedNotify(t, srv); n.Email == nil || *n.Email != "" {
		t.Errorf("stored after emptying the address: %+v, want a choice of none", n)
	}
	if got := p.text("#notify-email-note"); !strings.Contains(got, "You chose no email") {
		t.Errorf("the note says %q", got)
	}
	// This server mails no one (no --notify-smtp): the page says so.
	if got := p.text("#notify-email-note"); !strings.Contains(got, "This askd sends no mail yet") {
		t.Errorf("the note says %q, want it to say this askd sends no mail", got)
	}
}

// storedNotify reads the test server's human's notification setting.
func storedNotify(t *testing.T, srv *testserver.Server) *askd.PersonNotify {
	t.Helper()
	var n *askd.PersonNotify
	if err := srv.Store.View(t.Context(), func(tx askd.Tx) (err error) {
		n, err = tx.Teams.Notify(t.Context(), srv.HumanName)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTeamPhoneLayout checks the team's inbox at a phone's width (390×844),
// as an approver on Mine and as a viewer on All: no button alone on its
// line or wrapping its words (Take it and Let go among them), nothing wider
// than the screen.
func TestTeamPhoneLayout(t *testing.T) {
	t.Parallel()
	clk := &testserver.Clock{}
	srv := startServer(t, app.Config{Now: clk.Now})
	teamScene(t, srv, clk)
	for _, c := range []struct{ who, whose string }{{"bob", "mine"}, {"eve", "all"}} {
		t.Run(c.who, func(t *testing.T) {
			p := newTab(t, srv)
			p.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch))
			p.signIn(c.who, "/")
			p.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`#whose [data-whose=%q]`, c.whose))))
			n := map[string]int{"mine": 5, "all": 7}[c.whose]
			p.waitFor(fmt.Sprintf(`document.querySelectorAll('#pending .card').length === %d`, n))
			eval[bool](p, `document.querySelectorAll('.card').forEach(c => c.style.contentVisibility = 'visible'), true`)
			for _, b := range eval[[]string](p, buttonsAlone) {
				t.Error(b)
			}
			if w := eval[int](p, `document.documentElement.scrollWidth`); w > 390 {
				t.Errorf("the page is %d px wide on a 390 px screen", w)
			}
		})
	}
}

// escalated runs the escalation sweep now, the clock having passed ask id's
// time, and checks from the ask's record that it was escalated to the person
// or team named by to. The server's own sweep, each second, may have been
// first, so the count this sweep returns proves nothing.
func escalated(t *testing.T, srv *testserver.Server, id int64, to string) {
	t.Helper()
	ctx := context.Background()
	if _, err := srv.App.EscalateDue(ctx); err != nil {
		t.Fatalf("escalate: %v", err)
	}
	a, err := srv.Store.ReadAsk(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if a.EscalatedTo != to || a.EscalatedAt == nil {
		t.Fatalf("ask %d escalated to %q at %v, want to %s", id, a.EscalatedTo, a.EscalatedAt, to)
	}
}
