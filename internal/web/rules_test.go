package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/chromedp/chromedp"
)

// cardsSeen installs a record of every card that enters the pending list,
// read by cardsEverSeen: a card shown for a moment counts too.
const cardsSeen = `(() => {
	window.__cards = new Set([...document.querySelectorAll('#pending .card')].map(c => c.dataset.id));
	new MutationObserver(ms => { for (const m of ms) for (const n of m.addedNodes) if (n.dataset && n.dataset.id) window.__cards.add(n.dataset.id); })
		.observe(document.querySelector('#pending'), { childList: true });
	return true;
})()`

// TestRules: a rule made on one permission prompt (Approve with "always
// allow commands starting with") answers the next matching prompt without a
// card, and its history says which rule; a deny rule from Reject… on an
// approval without a tool; a rule the server refuses says why; the Rules
// view lists the rules, extends one and revokes one, after which the next
// matching prompt comes as a card.
func TestRules(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	ctx := context.Background()
	agent := srv.Agent("rules")
	bash := func(cmd string) *askd.Ask {
		t.Helper()
		a, err := agent.Create(ctx, permission(t, "Bash", fmt.Sprintf(`{"command":%q}`, cmd)), 0)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	p := openInbox(t, srv, "/")
	eval[bool](p, cardsSeen)

	// Approve, always allowing commands starting with the prefilled "npm
	// test", for a day.
	first := bash("npm test -- --ci")
	ch := agentWaits(agent, first.ID)
	c := card(first.ID)
	p.do(chromedp.WaitVisible(chromedp.CSS(c)))
	if v := eval[string](p, fmt.Sprintf(`document.querySelector('%s .rule-prefix').value`, c)); v != "npm test" {
		t.Errorf("prefix prefilled %q, want npm test", v)
	}
	p.do(chromedp.Click(chromedp.CSS(c+` .rule-box[data-match="prefix"]`)),
		chromedp.SetValue(chromedp.CSS(c+" select.rule-life"), "1d"),
		chromedp.Click(button(first.ID, "Approve")))
	wantAnswer(t, receive(t, ch), askd.StatusAnswered, `{"decision":"approved"}`)
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') === null`, c))
	rules, err := srv.Human().Rules(ctx, "", "")
	if err != nil || len(rules) != 1 {
		t.Fatalf("rules %v (%v), want the one made", rules, err)
	}
	r := rules[0]
	if r.Match != askd.MatchPrefix || r.Prefix != "npm test" || r.Effect != askd.EffectAllow || r.Session != "rules" || r.CreatedBy != "alice" || r.AskID != first.ID {
		t.Errorf("rule %+v", r)
	}
	if life := time.Until(r.ExpiresAt); life < 23*time.Hour || life > 25*time.Hour {
		t.Errorf("rule lives %v, want a day", life)
	}

	// The next matching prompt is answered at once: no card, and Recent
	// and its history say by which rule.
	second := bash("npm test -- --watch=false")
	if second.Status != askd.StatusAnswered || second.SettledBy != fmt.Sprintf("rule %d", r.ID) {
		t.Fatalf("the next prompt is %s, settled by %q; want answered by the rule", second.Status, second.SettledBy)
	}
	rec := fmt.Sprintf(`#recent .recent-item[data-id="%d"]`, second.ID)
	note := fmt.Sprintf("allowed by rule %d (made by alice)", r.ID)
	p.waitFor(fmt.Sprintf(`(document.querySelector('%s')?.textContent || '').includes(%q)`, rec, note))
	p.do(chromedp.Click(chromedp.CSS(rec + " details.record summary")))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s .timeline li:nth-child(2)') !== null`, rec))
	if got := p.text(rec + " .timeline li:nth-child(2) .ev"); got != fmt.Sprintf("Answered by rule %d — %s", r.ID, note) {
		t.Errorf("its history says %q", got)
	}
	if eval[bool](p, fmt.Sprintf(`window.__cards.has('%d')`, second.ID)) {
		t.Error("the prompt the rule answered was shown as a card")
	}

	// A rule the server refuses: the ask is answered, the card says why
	// the rule was not made, until OK.
	third := bash("npm run build")
	ch = agentWaits(agent, third.ID)
	c = card(third.ID)
	p.do(chromedp.WaitVisible(chromedp.CSS(c)))
	eval[bool](p, fmt.Sprintf(`(e => { e.focus(); e.select(); return true })(document.querySelector('%s .rule-prefix'))`, c))
	p.do(chromedp.KeyEvent("npm runs"))
	if !eval[bool](p, fmt.Sprintf(`document.querySelector('%s .rule-box[data-match="prefix"]').checked`, c)) {
		t.Error("typing a prefix does not tick its rule")
	}
	p.do(chromedp.Click(button(third.ID, "Approve")))
	wantAnswer(t, receive(t, ch), askd.StatusAnswered, `{"decision":"approved"}`)
	p.waitFor(fmt.Sprintf(`!document.querySelector('%s .banner').hidden`, c))
	if got := p.text(c + " .banner-text"); !strings.HasPrefix(got, "Approved, but the rule was not made: prefix:") || !strings.Contains(got, `"npm runs"`) {
		t.Errorf("the card says %q", got)
	}
	p.do(chromedp.Click(button(third.ID, "OK")))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') === null`, c))

	// Reject…, always denying an approval's title (no tool) for an hour.
	deploy := func() *askd.Ask {
		t.Helper()
		return create(t, agent, &askd.AskInput{Kind: askd.KindApproval, Title: "Deploy to production", Payload: []byte(`{"env":"prod"}`)})
	}
	d1 := deploy()
	ch = agentWaits(agent, d1.ID)
	c = card(d1.ID)
	p.do(chromedp.WaitVisible(chromedp.CSS(c)), chromedp.Click(button(d1.ID, "Reject…")))
	if got := eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll('%s .rule-choice')].filter(e => e.checkVisibility()).map(e => e.textContent)`, c)); len(got) != 1 || !strings.HasPrefix(got[0], "Always deny this title in this session") {
		t.Errorf("Reject… offers %q, want the deny rule alone", got)
	}
	p.do(chromedp.Click(chromedp.CSS(c+` .reject-pane .rule-box[data-match="title"]`)),
		chromedp.SetValue(chromedp.CSS(c+" .reject-pane select.rule-life"), "1h"),
		chromedp.SendKeys(chromedp.CSS(c+" textarea.comment"), "not today"),
		chromedp.Click(button(d1.ID, "Reject")))
	wantAnswer(t, receive(t, ch), askd.StatusAnswered, `{"decision":"rejected","comment":"not today"}`)
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') === null`, c))
	d2 := deploy()
	if d2.Status != askd.StatusAnswered || d2.Answer == nil || d2.Answer.Decision != "rejected" {
		t.Fatalf("the next deploy approval is %s %+v, want rejected by the rule", d2.Status, d2.Answer)
	}
	p.waitFor(fmt.Sprintf(`(document.querySelector('#recent .recent-item[data-id="%d"]')?.textContent || '').includes('denied by rule')`, d2.ID))

	// The Rules view: both, oldest first, with what they match, their
	// session, who made them and when they expire.
	p.do(chromedp.Click(chromedp.CSS(`#views .view-link[data-view="rules"]`)))
	p.waitFor(`document.querySelectorAll('#rules .rule-item').length === 2`)
	if loc := eval[string](p, `location.search`); loc != "?view=rules" {
		t.Errorf("URL %q", loc)
	}
	row := fmt.Sprintf(`#rules .rule-item[data-id="%d"]`, r.ID)
	got := p.text(row)
	for _, want := range []string{"allow", "Bash commands starting with npm test", "rules", fmt.Sprintf("rule %d, made by alice", r.ID), "expires in"} {
		if !strings.Contains(got, want) {
			t.Errorf("the rule's row %q lacks %q", got, want)
		}
	}
	if got := p.text(`#rules .rule-item:nth-child(2) .rule-what`); got != "Approvals titled “Deploy to production”" {
		t.Errorf("the deny rule matches %q", got)
	}
	if got := p.text(`#rules .rule-item:nth-child(2) .chip`); got != "deny" {
		t.Errorf("the deny rule's effect reads %q", got)
	}

	// Extend: seven days from now.
	p.do(chromedp.SetValue(chromedp.CSS(row+" select.rule-life"), "7d"),
		chromedp.Click(chromedp.CSS(row+" .rule-actions button:not(.revoke)")))
	testserver.Eventually(t, "the rule to be extended to seven days", func() bool {
		rules, err := srv.Human().Rules(ctx, "", "")
		if err != nil {
			t.Fatal(err)
		}
		return time.Until(rules[0].ExpiresAt) > 6*24*time.Hour
	})
	// And the page shows it: the list is drawn anew with the extended rule,
	// so the next click finds the new row, not the one it replaced.
	p.waitFor(fmt.Sprintf(`(t => t !== null && Date.parse(t.getAttribute('datetime')) - Date.now() > 6*24*3600*1000)(document.querySelector('%s time.expires'))`, row))

	// Revoke: gone from the list; the next matching prompt is a card.
	p.do(chromedp.Click(chromedp.CSS(row + " button.revoke")))
	p.waitFor(fmt.Sprintf(`document.querySelectorAll('#rules .rule-item').length === 1 && document.querySelector('%s') === null`, row))
	if rules, _ := srv.Human().Rules(ctx, "", ""); len(rules) != 1 || rules[0].ID == r.ID {
		t.Errorf("after revoking, the live rules are %v", rules)
	}
	p.do(chromedp.Click(chromedp.CSS(`#views .view-link[data-view=""]`)))
	next := bash("npm test")
	if next.Status != askd.StatusPending {
		t.Fatalf("after the revoke the prompt is %s, want pending", next.Status)
	}
	p.do(chromedp.WaitVisible(chromedp.CSS(card(next.ID))))
}
