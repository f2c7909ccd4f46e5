package web_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// buttonsAlone lists the visible buttons that sit on a line of their own in
// a row that has wrapped (their row's other items on other lines), and those
// whose own words wrap, each as "label (where)". Options are left out: they
// are a column by design on a phone.
const buttonsAlone = `(() => {
	const shown = e => e.getClientRects().length > 0;
	const flex = e => /flex/.test(getComputedStyle(e).display);
	const out = [];
	for (const b of document.querySelectorAll('button')) {
		if (!shown(b) || b.closest('.opts')) continue;
		const name = b.textContent.trim() + ' (' + (b.closest('[data-id]') ? 'card ' + b.closest('[data-id]').dataset.id : b.parentElement.className) + ')';
		const range = document.createRange();
		range.selectNodeContents(b);
		const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.bottom)));
		if (lines.size > 1) out.push(name + ' wraps its words');
		let item = b, row = b.parentElement;
		while (row && !flex(row)) { item = row; row = row.parentElement; }
		if (!row) continue;
		const items = [...row.children].filter(shown);
		if (items.length < 2) continue;
		const box = item.getBoundingClientRect();
		const beside = items.filter(o => o !== item && (r => r.top < box.bottom - 1 && r.bottom > box.top + 1)(o.getBoundingClientRect()));
		if (beside.length === 0) out.push(name + ' is alone on its line');
	}
	return out;
})()`

// TestPhoneLayout checks the inbox at a phone's width (390×844): no button
// wraps onto a line of its own (nor its words onto two lines), with every
// pane open too; Recent's titles are whole; the notifications control is
// visible and not covered; nothing is wider than the screen.
func TestPhoneLayout(t *testing.T) {
	t.Parallel()
	clk := &testserver.Clock{}
	srv := startServer(t, app.Config{Now: clk.Now})
	scene(t, srv, clk)
	p := newTab(t, srv)
	// The browser has not been asked about notifications yet: the page offers
	// to enable them.
	if _, err := chromedp.Call(p.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.Notification = class { static permission = 'default'; static requestPermission() { return Promise.resolve('default'); } };`,
	}); err != nil {
		t.Fatal(err)
	}
	p.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch))
	p.signIn(srv.HumanName, "/")
	p.waitFor(`document.querySelectorAll('#pending .card').length === 7 && [...document.querySelectorAll('#pending .details')].every(d => d.querySelector('.md'))`)
	// Every card laid out, on screen or not (off-screen ones skip layout).
	eval[bool](p, `document.querySelectorAll('.card').forEach(c => c.style.contentVisibility = 'visible'), true`)

	check := func(when string) {
		t.Helper()
		for _, b := range eval[[]string](p, buttonsAlone) {
			t.Errorf("%s: %s", when, b)
		}
		if w := eval[int](p, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("%s: the page is %d px wide on a 390 px screen", when, w)
		}
	}
	check("loaded")

	// The notifications control: on screen, not covered, whole.
	box := eval[[]float64](p, `(b => { const r = b.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom, b.scrollWidth - b.clientWidth]; })(document.querySelector('#notify'))`)
	if box[2]-box[0] <= 0 || box[0] < 0 || box[2] > 390 || box[1] < 0 || box[3] > 844 || box[4] > 0 {
		t.Errorf("notifications control at %v (left, top, right, bottom, overflow): not wholly on a 390×844 screen", box)
	}
	if !eval[bool](p, `(r => document.querySelector('#notify').contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2)))(document.querySelector('#notify').getBoundingClientRect())`) {
		t.Error("the notifications control is covered by another element")
	}
	if got := eval[string](p, `document.querySelector('#notify').innerText.trim()`); got == "" {
		t.Error("the notifications control shows no words")
	}

	// Recent's titles are whole: not cut, not overflowing.
	cut := eval[[]string](p, `[...document.querySelectorAll('#recent .recent-summary')].filter(e => e.scrollWidth > e.clientWidth + 1 || getComputedStyle(e).textOverflow === 'ellipsis').map(e => e.textContent)`)
	if len(cut) > 0 {
		t.Errorf("Recent titles cut: %q", cut)
	}

	// Every pane open: Close… everywhere, Reject… on approvals, then the
	// editor of one (it hides that card's other choices).
	eval[bool](p, `document.querySelectorAll('#pending .close-toggle, #pending .reject').forEach(b => b.click()), true`)
	check("Close… and Reject… open")
	eval[bool](p, `document.querySelector('#pending .edit').click(), true`)
	p.waitFor(`document.querySelector('#pending .edit-pane:not([hidden])') !== null`)
	check("editing")
	// And the same with a long reply and comment typed (fields give way to
	// their buttons).
	eval[bool](p, fmt.Sprintf(`document.querySelectorAll('#pending input.reply, #pending input.answer-text').forEach(i => { i.value = %q; i.dispatchEvent(new Event('input', { bubbles: true })); }), true`,
		"a long reply to the agent that goes on for longer than the field is wide"))
	check("typed")

	// The History view, every record open, a search typed.
	p.do(chromedp.Click(chromedp.CSS(`#views .view-link[data-view="history"]`)))
	p.waitFor(`document.querySelectorAll('#history .recent-item').length === 5`)
	eval[bool](p, `document.querySelectorAll('#history details').forEach(d => d.open = true), true`)
	p.waitFor(`[...document.querySelectorAll('#history .record-body')].every(b => b.querySelector('.timeline'))`)
	check("History, records open")
	cut = eval[[]string](p, `[...document.querySelectorAll('#history-filters input, #history-filters select')].filter(e => e.getBoundingClientRect().right > 390 || e.getBoundingClientRect().width < 60).map(e => e.name)`)
	if len(cut) > 0 {
		t.Errorf("History filters cut or squeezed: %q", cut)
	}
	// The Rules view, with a rule of each kind. (The scene's agents asked
	// through the app: rules need their tokens.)
	ctx := context.Background()
	srv.Token(t, "claude-code", askd.RoleAgent)
	srv.Token(t, "codex", askd.RoleAgent)
	for _, session := range []string{"api-refactor", "infra"} {
		var a *askd.Ask
		for _, x := range srv.Pending(t, session, 1) {
			if x.Kind == askd.KindApproval {
				a = x
			}
		}
		in := &askd.RuleInput{AskID: a.ID, Match: askd.MatchTitle, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "7d"}}
		if a.ToolName == "Bash" {
			in.Match, in.Prefix = askd.MatchPrefix, "go test -race ./internal/..."
		}
		if _, err := srv.Human().CreateRule(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	p.do(chromedp.Click(chromedp.CSS(`#views .view-link[data-view="rules"]`)))
	p.waitFor(`document.querySelectorAll('#rules .rule-item').length === 2`)
	check("Rules")
}

// TestFormPhoneLayout checks form cards at a phone's width: no button
// alone on its line or wrapping its words, nothing wider than the screen,
// with every field's problem shown and Close… open too.
func TestFormPhoneLayout(t *testing.T) {
	t.Parallel()
	clk := &testserver.Clock{}
	srv := startServer(t, app.Config{Now: clk.Now})
	formScene(t, srv, clk)
	a := createForm(t, srv, "s-every", everyField)
	createFor(t, srv, "s-url", &askd.AskInput{Kind: askd.KindForm, Title: "Open it", Source: "github",
		URL: "http://github.com@evil.example/login/device?user_code=WDJB-MJHT&next=%2Fsettings%2Fa-very-long-path-that-goes-on-and-on#top"}, 0)
	p := newTab(t, srv)
	p.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch))
	p.signIn(srv.HumanName, "/")
	p.waitFor(`document.querySelectorAll('#pending .card').length === 4`)
	eval[bool](p, `document.querySelectorAll('.card').forEach(c => c.style.contentVisibility = 'visible'), true`)
	check := func(when string) {
		t.Helper()
		for _, b := range eval[[]string](p, buttonsAlone) {
			t.Errorf("%s: %s", when, b)
		}
		if w := eval[int](p, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("%s: the page is %d px wide on a 390 px screen", when, w)
		}
	}
	check("loaded")
	// Every field refused: the name too short, the rest emptied.
	setValue(p, field(a.ID, "name")+" input", "A")
	eval[bool](p, fmt.Sprintf(`document.querySelector('%s input[value="1"]').click(), true`, field(a.ID, "pets")))
	p.do(chromedp.Click(button(a.ID, "Submit")))
	p.waitFor(fmt.Sprintf(`document.querySelectorAll('%s .field-error:not([hidden])').length === 2`, card(a.ID)))
	check("problems shown")
	eval[bool](p, `document.querySelectorAll('#pending .close-toggle').forEach(b => b.click()), true`)
	check("Close… open")
}
