package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// createFor creates an ask in session directly through the app layer, as the
// test server's agent token, with the given timeout (0: its kind's default).
func createFor(t *testing.T, srv *testserver.Server, session string, in *askd.AskInput, timeout time.Duration) *askd.Ask {
	t.Helper()
	c := askd.Caller{Name: srv.AgentName, Role: askd.RoleAgent, Session: session}
	a, err := srv.App.Create(context.Background(), c, in, app.CreateOptions{Timeout: timeout})
	if err != nil {
		t.Fatalf("create in %s: %v", session, err)
	}
	return a
}

// permission is a permission prompt's ask for tool with input (JSON).
func permission(t *testing.T, tool, input string) *askd.AskInput {
	t.Helper()
	in, err := app.PermissionAsk(&askd.PermissionInput{ToolName: tool, Input: []byte(input)})
	if err != nil {
		t.Fatalf("permission ask for %s: %v", tool, err)
	}
	return in
}

// pageWords is every text node and every human-readable attribute in the
// page's main column and sidebar, one a line, for the checks that no value
// leaked into the page as a word. (Text nodes one by one: in textContent a
// stray "null" runs into the words beside it.)
const pageWords = `[...document.querySelectorAll('main, #sessions')].flatMap(root => {
	const out = [];
	const w = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
	while (w.nextNode()) out.push(w.currentNode.data);
	for (const e of root.querySelectorAll('*')) {
		for (const n of ['aria-label', 'title', 'placeholder', 'datetime', 'data-id', 'data-key', 'data-session', 'data-agent']) {
			if (e.hasAttribute(n)) out.push(n + '=' + e.getAttribute(n));
		}
	}
	return out;
}).join('\n')`

var leaked = regexp.MustCompile(`\b(null|undefined|NaN)\b|\[object |Invalid Date`)

// TestEveryKindRenders renders a card of every kind and shape and checks that
// no card shows a value that was missing or not text ("null", "undefined",
// "NaN", "[object Object]", "Invalid Date").
func TestEveryKindRenders(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	q := func(session string, qs ...askd.Question) *askd.Ask {
		return createFor(t, srv, session, &askd.AskInput{Kind: askd.KindQuestion, Questions: qs}, 0)
	}
	withPreviews := askd.Question{Question: "Which layout?", Header: "Layout", Options: []askd.Option{
		{Label: "Tabs", Description: "one per area", Preview: "**Tabs**\n\n| a | b |\n|---|---|\n| 1 | 2 |"},
		{Label: "One page", Preview: "- everything\n- at once"},
		{Label: "Wizard", Description: "no preview"},
	}}
	q("q-single", question("Which database?", "Database", false, "SQLite: embedded", "Postgres"))
	q("q-multi", question("Which checks?", "Checks", true, "lint", "tests: go test -race", "fuzz"))
	q("q-previews", withPreviews, question("Which license?", "License", false, "MIT", "Apache-2.0"))
	createFor(t, srv, "decision", &askd.AskInput{Kind: askd.KindDecision, Title: "Split the store?", Details: "It is *long*.",
		Recommended: "Split", Options: []askd.Option{{Label: "Keep"}, {Label: "Split", Description: "per table"}}}, 0)
	createFor(t, srv, "decision-bare", &askd.AskInput{Kind: askd.KindDecision, Title: "Anything to add?"}, 0)
	createFor(t, srv, "action", &askd.AskInput{Kind: askd.KindAction, Title: "Rotate the key"}, 0)
	createFor(t, srv, "ready", &askd.AskInput{Kind: askd.KindReady, Title: "Build is green", Details: "Ready for review."}, 0)
	createFor(t, srv, "blocked", &askd.AskInput{Kind: askd.KindBlocked, Title: "No credentials"}, 0)
	createFor(t, srv, "appr-both", &askd.AskInput{Kind: askd.KindApproval, Title: "Deploy", Details: "```\n$ make deploy\n```",
		Payload: []byte(`{"env":"staging","replicas":2,"flags":[],"opts":{}}`)}, 0)
	createFor(t, srv, "appr-none", &askd.AskInput{Kind: askd.KindApproval, Title: "Go ahead?"}, 0)
	createFor(t, srv, "appr-details", &askd.AskInput{Kind: askd.KindApproval, Title: "Merge it?", Details: "All green."}, 0)
	createFor(t, srv, "appr-payload", &askd.AskInput{Kind: askd.KindApproval, Title: "Tag it?", Payload: []byte(`{"tag":"v1.2.0"}`)}, 0)
	createFor(t, srv, "perm-bash", permission(t, "Bash", `{"command":"make test","description":"Run the tests"}`), 0)
	createFor(t, srv, "perm-edit", permission(t, "Edit", `{"file_path":"internal/app/x.go","old_string":"a","new_string":"b"}`), 0)
	createFor(t, srv, "perm-fetch", permission(t, "WebFetch", `{"url":"https://example.com/docs","prompt":"summarize"}`), 0)
	createFor(t, srv, "perm-other", permission(t, "mcp__db__query", `{"limit":5,"sql":"select 1"}`), 0)
	createFor(t, srv, "perm-empty", permission(t, "Task", `{}`), 0)
	createFor(t, srv, "replaced", &askd.AskInput{Kind: askd.KindAction, Title: "First version"}, 0)
	replaced := createFor(t, srv, "replaced", &askd.AskInput{Kind: askd.KindReady, Title: "Second version", Details: "Replaces the first."}, 0)
	if replaced.Revision < 2 {
		t.Fatalf("replacement has revision %d", replaced.Revision)
	}
	human, _ := srv.App.Authenticate(context.Background(), srv.HumanToken)
	sn := createFor(t, srv, "snoozed", &askd.AskInput{Kind: askd.KindAction, Title: "Later, please"}, 0)
	if _, err := srv.App.Snooze(context.Background(), human, sn.ID, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	const cards = 18 // the replaced one is one card, the snoozed one none

	p := openInbox(t, srv, "/")
	p.waitFor(fmt.Sprintf(`document.querySelectorAll('#pending .card').length === %d && !document.querySelector('#snoozed').hidden`, cards))
	// Every details box has its rendered Markdown.
	p.waitFor(`[...document.querySelectorAll('#pending .details')].every(d => d.querySelector('.md'))`)
	if got := p.text(card(replaced.ID) + " .rev"); got != "rev 2" {
		t.Errorf("replaced ask says %q, want rev 2", got)
	}
	check := func(when string) {
		t.Helper()
		words := eval[string](p, pageWords)
		if m := leaked.FindAllString(words, -1); m != nil {
			for _, line := range strings.Split(words, "\n") {
				if leaked.MatchString(line) {
					t.Errorf("%s: the page shows %q", when, line)
				}
			}
		}
	}
	check("loaded")

	// Open every pane there is, and settle some asks of each kind so their
	// outcomes reach Recent.
	eval[bool](p, `document.querySelectorAll('#pending .close-toggle, #pending .reject, #pending .edit').forEach(b => b.click()), true`)
	p.waitFor(`document.querySelectorAll('#pending .diff-box p').length > 0`)
	check("panes open")
	hc := srv.Human()
	ctx := context.Background()
	var settled []int64
	for _, s := range []struct {
		session string
		answer  *askd.Answer
	}{
		{"q-multi", &askd.Answer{Answers: map[string]askd.Choice{"Which checks?": {Values: []string{"lint"}, Multi: true}}}},
		{"ready", &askd.Answer{Answer: "Done"}},
		{"appr-both", &askd.Answer{Decision: "modified", Payload: []byte(`{"env":"prod","replicas":2,"flags":[],"opts":{}}`)}},
		{"perm-bash", &askd.Answer{Decision: "rejected"}},
	} {
		a := srv.Pending(t, s.session, 1)[0]
		if _, err := hc.Answer(ctx, a.ID, s.answer); err != nil {
			t.Fatalf("answer %s: %v", s.session, err)
		}
		settled = append(settled, a.ID)
	}
	a := srv.Pending(t, "action", 1)[0]
	if _, err := hc.Dismiss(ctx, a.ID, ""); err != nil {
		t.Fatal(err)
	}
	settled = append(settled, a.ID)
	for _, id := range settled {
		p.waitFor(fmt.Sprintf(`document.querySelector('#recent .recent-item[data-id="%d"]') !== null`, id))
	}
	check("settled")

	// A rule of each match and effect, and asks they answered.
	rule := func(session, match, prefix, effect string) {
		t.Helper()
		a := srv.Pending(t, session, 1)[0]
		if _, err := hc.CreateRule(ctx, &askd.RuleInput{AskID: a.ID, Match: askd.RuleMatch(match), Prefix: prefix,
			Effect: askd.RuleEffect(effect), RuleLife: askd.RuleLife{For: "8h"}}); err != nil {
			t.Fatalf("rule from %s: %v", session, err)
		}
	}
	rule("perm-edit", "tool", "", "allow")
	rule("perm-fetch", "tool", "", "deny")
	rule("appr-details", "title", "", "allow")
	createFor(t, srv, "perm-edit", permission(t, "Edit", `{"file_path":"internal/app/y.go","old_string":"c","new_string":"d"}`), 0)
	createFor(t, srv, "perm-fetch", permission(t, "WebFetch", `{"url":"https://example.com/other","prompt":"read"}`), 0)
	// Every record opened, in Recent and in History.
	openRecords := func(list string) {
		t.Helper()
		eval[bool](p, fmt.Sprintf(`document.querySelectorAll('%s details.record').forEach(d => d.open = true), true`, list))
		p.waitFor(fmt.Sprintf(`[...document.querySelectorAll('%s .record-body')].every(b => b.querySelector('.timeline'))`, list))
	}
	p.waitFor(`document.querySelectorAll('#recent .recent-item').length === 7`)
	openRecords("#recent")
	check("Recent's records open")
	p.do(chromedp.Click(chromedp.CSS(`#views .view-link[data-view="history"]`)))
	p.waitFor(`document.querySelectorAll('#history .recent-item').length === 7`)
	openRecords("#history")
	check("History's records open")
	p.do(chromedp.Click(chromedp.CSS(`#views .view-link[data-view="rules"]`)))
	p.waitFor(`document.querySelectorAll('#rules .rule-item').length === 3`)
	check("Rules")
}

// TestUrgencyOrder: asks with a deadline come first, the soonest first, each
// counting down; then the rest, newest first. Asks arriving live take their
// place in that order.
func TestUrgencyOrder(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	ask := func(session string, kind askd.Kind) *askd.AskInput {
		if kind == askd.KindQuestion {
			return &askd.AskInput{Kind: kind, Questions: []askd.Question{question(session+"?", "Q", false, "yes", "no")}}
		}
		return &askd.AskInput{Kind: kind, Title: session}
	}
	action := createFor(t, srv, "action", ask("action", askd.KindAction), 0)
	hour := createFor(t, srv, "hour", ask("hour", askd.KindQuestion), time.Hour)
	approval := createFor(t, srv, "approval", ask("approval", askd.KindApproval), 0)
	perm := createFor(t, srv, "perm", permission(t, "Bash", `{"command":"make"}`), 10*time.Minute)
	p := openInbox(t, srv, "/")
	p.waitFor(`document.querySelectorAll('#pending .card').length === 4`)
	// Live: the soonest of all, the newest without a deadline, one between.
	soon := createFor(t, srv, "soon", ask("soon", askd.KindQuestion), 3*time.Minute)
	ready := createFor(t, srv, "ready", ask("ready", askd.KindReady), 0)
	half := createFor(t, srv, "half", ask("half", askd.KindQuestion), 30*time.Minute)
	p.waitFor(`document.querySelectorAll('#pending .card').length === 7`)
	want := []int64{soon.ID, perm.ID, half.ID, hour.ID, ready.ID, approval.ID, action.ID}
	if got := eval[[]int64](p, `[...document.querySelectorAll('#pending .card')].map(c => Number(c.dataset.id))`); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("cards in order %v, want %v", got, want)
	}
	if title := eval[string](p, `document.title`); title != "(7) askd inbox" {
		t.Errorf("title %q", title)
	}
	countdown := func(id int64) (string, bool) {
		t.Helper()
		v := eval[[]any](p, fmt.Sprintf(`(c => [c.textContent, c.classList.contains('soon') && c.closest('.card').classList.contains('due')])(document.querySelector('%s .countdown'))`, card(id)))
		return v[0].(string), v[1].(bool)
	}
	for _, c := range []struct {
		id   int64
		want string
	}{{soon.ID, `^[23]:\d\d left$`}, {perm.ID, `^(10 min|9:\d\d) left$`}, {half.ID, `^(29|30) min left$`}, {hour.ID, `^(59 min|1 h) left$`}} {
		if text, urgent := countdown(c.id); !regexp.MustCompile(c.want).MatchString(text) || urgent {
			t.Errorf("ask %d counts down %q (urgent %v), want %s", c.id, text, urgent, c.want)
		}
	}
	for _, id := range []int64{ready.ID, approval.ID, action.ID} {
		if n := eval[int](p, fmt.Sprintf(`document.querySelectorAll('%s .countdown').length`, card(id))); n != 0 {
			t.Errorf("ask %d without a deadline has a countdown", id)
		}
	}
	// The page's clock moved to 30 s before the first deadline: that card
	// turns urgent, the next does not.
	eval[bool](p, fmt.Sprintf(`askdClock.set(%d), true`, soon.Deadline.Add(-30*time.Second).UnixMilli()))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s').classList.contains('due')`, card(soon.ID)))
	if text, urgent := countdown(soon.ID); !regexp.MustCompile(`^0:(30|2\d) left$`).MatchString(text) || !urgent {
		t.Errorf("30 s before its deadline: %q (urgent %v)", text, urgent)
	}
	if text, urgent := countdown(perm.ID); urgent || !strings.HasPrefix(text, "7:") {
		t.Errorf("the next ask, 7 minutes later: %q (urgent %v)", text, urgent)
	}
	eval[bool](p, fmt.Sprintf(`askdClock.set(%d), true`, soon.Deadline.Add(time.Second).UnixMilli()))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s .countdown').textContent === 'time is up'`, card(soon.ID)))
}

// visibleButtons lists the labels of the buttons a card offers to answer
// with (outside its footer and its claim line), as a person sees them.
func visibleButtons(p *tab, id int64) []string {
	p.t.Helper()
	return eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll('%s button')].filter(b => !b.closest('.card-foot, .claim-row') && b.getClientRects().length > 0).map(b => b.textContent.replace(/^\d/, ''))`, card(id)))
}

func TestPermissionPrompt(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	bash := createFor(t, srv, "s-bash", permission(t, "Bash", `{"command":"rm -rf ./build && make","description":"Rebuild from scratch"}`), 0)
	edit := createFor(t, srv, "s-edit", permission(t, "Edit", `{"file_path":"internal/app/create.go","old_string":"x := 1","new_string":"x := 2","replace_all":false}`), 0)
	nb := createFor(t, srv, "s-nb", permission(t, "NotebookEdit", `{"notebook_path":"analysis.ipynb","new_source":"print(1)"}`), 0)
	fetch := createFor(t, srv, "s-fetch", permission(t, "WebFetch", `{"prompt":"summarize it","url":"https://example.com/changelog"}`), 0)
	other := createFor(t, srv, "s-other", permission(t, "mcp__db__query", `{"limit":5,"sql":"select count(*) from asks"}`), 0)
	p := openInbox(t, srv, "/")
	p.waitFor(`document.querySelectorAll('#pending .card').length === 5`)

	for _, c := range []struct {
		id           int64
		tool, target string
		subtitle     string
		inputOpen    bool // the headline does not say all of it
	}{
		{bash.ID, "Bash", "rm -rf ./build && make", "Rebuild from scratch", false},
		{edit.ID, "Edit", "internal/app/create.go", "", true},
		{nb.ID, "NotebookEdit", "analysis.ipynb", "", true},
		{fetch.ID, "WebFetch", "https://example.com/changelog", "", true},
		{other.ID, "mcp__db__query", "select count(*) from asks", "", true},
	} {
		if got := p.text(card(c.id) + " .tool-name"); got != c.tool {
			t.Errorf("ask %d headlines tool %q, want %q", c.id, got, c.tool)
		}
		if got := p.text(card(c.id) + " .tool-target"); got != c.target {
			t.Errorf("%s headlines %q, want %q", c.tool, got, c.target)
		}
		sub := eval[string](p, fmt.Sprintf(`[...document.querySelectorAll('%s .subtitle')].map(e => e.textContent).join('|')`, card(c.id)))
		if sub != c.subtitle {
			t.Errorf("%s: subtitle %q, want %q", c.tool, sub, c.subtitle)
		}
		// The whole input is there, folded when the headline says it all.
		if open := eval[bool](p, fmt.Sprintf(`document.querySelector('%s details.input-box').open`, card(c.id))); open != c.inputOpen {
			t.Errorf("%s: full input open %v, want %v", c.tool, open, c.inputOpen)
		}
		if got := eval[string](p, fmt.Sprintf(`document.querySelector('%s .meta .kind').textContent`, card(c.id))); got != "Permission" {
			t.Errorf("%s: kind chip %q", c.tool, got)
		}
	}
	if n := eval[int](p, `document.querySelectorAll('main a').length`); n != 0 {
		t.Errorf("%d links in the page: agent text became clickable", n)
	}

	// Editing: the editor takes the payload's place, and only Approve with
	// edits and Cancel edit are offered; the edits show as a coloured diff.
	if got := visibleButtons(p, edit.ID); fmt.Sprint(got) != "[Approve Edit… Reject…]" {
		t.Errorf("buttons before editing %q", got)
	}
	p.do(chromedp.Click(button(edit.ID, "Edit…")), chromedp.WaitVisible(chromedp.CSS(card(edit.ID)+" textarea.json-editor")))
	if got := visibleButtons(p, edit.ID); fmt.Sprint(got) != "[Approve with edits Cancel edit]" {
		t.Errorf("buttons while editing %q", got)
	}
	if n := eval[int](p, fmt.Sprintf(`[...document.querySelectorAll('%s pre.payload')].filter(e => e.getClientRects().length > 0).length`, card(edit.ID))); n != 0 {
		t.Errorf("the payload is shown beside its editor (%d times)", n)
	}
	if !eval[bool](p, fmt.Sprintf(`document.querySelector('%s .edit-pane button.primary').disabled`, card(edit.ID))) {
		t.Error("Approve with edits enabled before any edit")
	}
	eval[bool](p, fmt.Sprintf(`(e => { e.focus(); e.setSelectionRange(e.value.indexOf('x := 2') + 5, e.value.indexOf('x := 2') + 6); return true })(document.querySelector('%s textarea.json-editor'))`, card(edit.ID)))
	p.do(chromedp.KeyEvent("3"))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s .diff-box ins') !== null`, card(edit.ID)))
	diff := eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll('%s .diff-box ins, %s .diff-box del')].map(e => e.tagName + ' ' + e.textContent.trim())`, card(edit.ID), card(edit.ID)))
	if strings.Join(diff, "|") != `DEL -   "new_string": "x := 2",|INS +   "new_string": "x := 3",` {
		t.Errorf("diff %q", diff)
	}
	colours := eval[[]string](p, fmt.Sprintf(`['ins', 'del', '.same'].map(s => getComputedStyle(document.querySelector('%s .diff-box ' + s) || document.body).backgroundColor)`, card(edit.ID)))
	if colours[0] == colours[1] || colours[0] == "rgba(0, 0, 0, 0)" || colours[1] == "rgba(0, 0, 0, 0)" {
		t.Errorf("additions and deletions are not told apart by colour: %q", colours)
	}
	// Cancel edit brings the payload and the three choices back, unchanged.
	p.do(chromedp.Click(button(edit.ID, "Cancel edit")))
	if got := visibleButtons(p, edit.ID); fmt.Sprint(got) != "[Approve Edit… Reject…]" {
		t.Errorf("buttons after cancelling the edit %q", got)
	}
	// Edit again and approve with edits, by the submit key.
	p.do(chromedp.Click(button(edit.ID, "Edit…")))
	eval[bool](p, fmt.Sprintf(`(e => { e.focus(); e.setSelectionRange(e.value.indexOf('x := 2') + 5, e.value.indexOf('x := 2') + 6); return true })(document.querySelector('%s textarea.json-editor'))`, card(edit.ID)))
	p.do(chromedp.KeyEvent("4"), chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') === null`, card(edit.ID)))
	got, err := srv.Human().Show(context.Background(), edit.ID)
	if err != nil {
		t.Fatal(err)
	}
	var edited map[string]any
	json.Unmarshal(got.Answer.Payload, &edited)
	if got.Answer.Decision != "modified" || edited["new_string"] != "x := 4" {
		t.Fatalf("answered %s with %s, want modified with x := 4", got.Answer.Decision, got.Answer.Payload)
	}
	// Recent shows the edits as a coloured diff too.
	recent := fmt.Sprintf(`#recent .recent-item[data-id="%d"]`, edit.ID)
	p.waitFor(fmt.Sprintf(`document.querySelector('%s .recent-edits del') !== null`, recent))
	eval[bool](p, fmt.Sprintf(`document.querySelector('%s .recent-edits').open = true`, recent))
	if got := p.text(recent + " .recent-edits ins"); !strings.Contains(got, `"x := 4"`) {
		t.Errorf("Recent's diff adds %q", got)
	}

	// Approve allows the input as it was.
	p.do(chromedp.Click(button(bash.ID, "Approve")))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') === null`, card(bash.ID)))
	if got, _ := srv.Human().Show(context.Background(), bash.ID); got.Answer == nil || got.Answer.Decision != "approved" {
		t.Errorf("Approve gave %+v", got.Answer)
	}
}

// Ready and action asks answer with one tap: "Done", or "Can't", by click or
// by their number key.
func TestOneTapAnswers(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	ready := create(t, srv.Agent("r"), &askd.AskInput{Kind: askd.KindReady, Title: "Review the docs preview"})
	action := create(t, srv.Agent("a"), &askd.AskInput{Kind: askd.KindAction, Title: "Plug in the security key"})
	blocked := create(t, srv.Agent("b"), &askd.AskInput{Kind: askd.KindBlocked, Title: "No token for the registry"})
	p := openInbox(t, srv, "/")
	p.waitFor(`document.querySelectorAll('#pending .card').length === 3`)
	for _, c := range []struct {
		id   int64
		want string
	}{{ready.ID, "[Done Send]"}, {action.ID, "[Done Can't Send]"}, {blocked.ID, "[Send]"}} {
		if got := visibleButtons(p, c.id); fmt.Sprint(got) != c.want {
			t.Errorf("ask %d offers %q, want %s", c.id, got, c.want)
		}
	}
	ch := agentWaits(srv.Agent("r"), ready.ID)
	p.do(chromedp.Click(button(ready.ID, "Done")))
	wantAnswer(t, receive(t, ch), askd.StatusAnswered, `{"answer":"Done"}`)
	ch = agentWaits(srv.Agent("a"), action.ID)
	p.do(chromedp.Focus(chromedp.CSS(card(action.ID))), chromedp.KeyEvent("2"))
	wantAnswer(t, receive(t, ch), askd.StatusAnswered, `{"answer":"Can't"}`)
}

// The preview pane shows the option pointed at, in focus or chosen; before
// any of that, a hint, never the first option's preview as if chosen.
func TestPreviewOnlyForThePickedOption(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	a := create(t, srv.Agent("layout"), &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{{
		Question: "Which layout?", Header: "Layout", Options: []askd.Option{
			{Label: "Tabs", Preview: "**tabs preview**"},
			{Label: "Single page", Preview: "**single preview**"},
			{Label: "Wizard"},
		}}}})
	p := openInbox(t, srv, "/")
	pane := card(a.ID) + " .preview"
	p.do(chromedp.WaitVisible(chromedp.CSS(pane)))
	shows := func() string { return p.text(pane) }
	if got := shows(); !strings.Contains(got, "to see its preview") || strings.Contains(got, "preview ·") {
		t.Errorf("before anything is picked the pane shows %q", got)
	}
	// Point at an option, then away.
	center := func(label string) (float64, float64) {
		v := eval[[]float64](p, fmt.Sprintf(`(r => [r.x + r.width / 2, r.y + r.height / 2])(document.evaluate(%q, document, null, 9, null).singleNodeValue.getBoundingClientRect())`, option(a.ID, label)))
		return v[0], v[1]
	}
	x, y := center("Single page")
	p.do(chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s').textContent.includes('single preview')`, pane))
	p.do(chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, 2, 2))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s').textContent.includes('to see its preview')`, pane))
	// Chosen: it stays when the pointer passes over another and leaves.
	p.do(chromedp.Click(option(a.ID, "Tabs")))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s').textContent.includes('tabs preview')`, pane))
	x, y = center("Wizard")
	p.do(chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s').textContent.includes('No preview for this option')`, pane))
	p.do(chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, 2, 2))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s').textContent.includes('tabs preview')`, pane))
}

// Submit says what is missing while it cannot be pressed, and Ctrl+Enter
// submits the focused card.
func TestSubmitSaysWhatIsMissing(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	agent := srv.Agent("plan")
	a := create(t, agent, &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{
		question("Which database?", "Database", false, "SQLite", "Postgres"),
		question("Which checks?", "Checks", true, "lint", "tests"),
		question("Which license?", "License", false, "MIT", "Apache-2.0"),
	}})
	ch := agentWaits(agent, a.ID)
	p := openInbox(t, srv, "/")
	hint := card(a.ID) + " .submit-hint"
	p.do(chromedp.WaitVisible(chromedp.CSS(card(a.ID))))
	if got := p.text(hint); got != "Answer Database, Checks and License to submit" {
		t.Errorf("hint %q", got)
	}
	p.do(chromedp.Click(option(a.ID, "Postgres")), chromedp.Click(option(a.ID, "tests")))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s').textContent === 'Answer License to submit'`, hint))
	// Ctrl+Enter with an answer missing sends nothing.
	p.do(chromedp.Focus(chromedp.CSS(card(a.ID))), chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	if cur, _ := srv.Human().Show(context.Background(), a.ID); cur.Status != askd.StatusPending {
		t.Fatalf("Ctrl+Enter with License unanswered settled the ask: %s", cur.Status)
	}
	// The last answer typed in Other, then Ctrl+Enter from that field.
	p.do(chromedp.SendKeys(chromedp.CSS(card(a.ID)+" section.q:nth-of-type(3) input.other"), "BSD-3-Clause"))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s').textContent === ''`, hint))
	p.do(chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	wantAnswer(t, receive(t, ch), askd.StatusAnswered,
		`{"answers":{"Which database?":"Postgres","Which checks?":["tests"],"Which license?":"BSD-3-Clause"}}`)

	// On an approval, Ctrl+Enter in the Reject… pane rejects with the comment.
	ap := create(t, agent, &askd.AskInput{Kind: askd.KindApproval, Title: "Drop the old table?"})
	ch = agentWaits(agent, ap.ID)
	p.do(chromedp.WaitVisible(chromedp.CSS(card(ap.ID))), chromedp.Click(button(ap.ID, "Reject…")),
		chromedp.SendKeys(chromedp.CSS(card(ap.ID)+" textarea.comment"), "keep it a week"),
		chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	wantAnswer(t, receive(t, ch), askd.StatusAnswered, `{"decision":"rejected","comment":"keep it a week"}`)
}
