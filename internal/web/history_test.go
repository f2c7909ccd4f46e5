package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/chromedp/chromedp"
)

// historyIDs reads the History view's rows, top to bottom.
const historyIDs = `[...document.querySelectorAll('#history .recent-item')].map(r => Number(r.dataset.id))`

// waitHistory waits until the History view lists exactly ids, in order.
func (p *tab) waitHistory(ids ...int64) {
	p.t.Helper()
	p.waitFor(fmt.Sprintf(`JSON.stringify(%s) === %q && !document.querySelector('#history-view').hidden`, historyIDs, fmt.Sprintf("[%s]", joinIDs(ids))))
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ",")
}

// typeFilter replaces the text of the History filter named name, as typing
// does.
func (p *tab) typeFilter(name, text string) {
	p.t.Helper()
	sel := fmt.Sprintf(`#history-filters [name=%s]`, name)
	eval[bool](p, fmt.Sprintf(`(e => { e.focus(); e.select?.(); return true })(document.querySelector('%s'))`, sel))
	if text == "" {
		p.do(chromedp.KeyEvent("\b"))
		return
	}
	p.do(chromedp.KeyEvent(text))
}

// TestHistorySearch: the History view finds a settled ask by a word of its
// answer (the person's own words, a rejection comment), filters by kind,
// outcome, who answered, agent and session, keeps it all in the URL, and
// opens an ask onto its whole record: what was asked, every event, and an
// edited approval's edits as a diff.
func TestHistorySearch(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	ctx := context.Background()
	alice, dave := srv.Human(), client.New(srv.URL, srv.Token(t, "dave", askd.RoleHuman))
	q := createFor(t, srv, "build", &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{
		question("Name the release branch?", "Branch", false, "main", "dev")}}, 0)
	if _, err := alice.Answer(ctx, q.ID, &askd.Answer{Answers: map[string]askd.Choice{"Name the release branch?": {Values: []string{"zeppelin"}}}}); err != nil {
		t.Fatal(err)
	}
	ap := createFor(t, srv, "deploy", &askd.AskInput{Kind: askd.KindApproval, Title: "Ship the hotfix",
		Payload: []byte(`{"env":"prod","replicas":3}`)}, 0)
	if _, err := alice.Answer(ctx, ap.ID, &askd.Answer{Decision: "rejected", Comment: "not on a Friday"}); err != nil {
		t.Fatal(err)
	}
	ed := createFor(t, srv, "deploy", &askd.AskInput{Kind: askd.KindApproval, Title: "Scale the workers",
		Payload: []byte(`{"env":"prod","replicas":3}`)}, 0)
	if _, err := dave.Answer(ctx, ed.ID, &askd.Answer{Decision: "modified", Payload: []byte(`{"env":"prod","replicas":5}`)}); err != nil {
		t.Fatal(err)
	}
	act := createFor(t, srv, "build", &askd.AskInput{Kind: askd.KindAction, Title: "Renew the certificate"}, 0)
	if _, err := alice.Dismiss(ctx, act.ID, "done by hand"); err != nil {
		t.Fatal(err)
	}
	other := client.New(srv.URL, srv.Token(t, "builder", askd.RoleAgent))
	other.Session = "build"
	oa := create(t, other, &askd.AskInput{Kind: askd.KindReady, Title: "The other agent's build is green"})
	if _, err := alice.Answer(ctx, oa.ID, &askd.Answer{Answer: "Done"}); err != nil {
		t.Fatal(err)
	}

	p := openInbox(t, srv, "/")
	// Recent leads to it; the view is in the URL.
	p.do(chromedp.Click(chromedp.CSS("#all-history")))
	p.waitHistory(oa.ID, act.ID, ed.ID, ap.ID, q.ID)
	if loc := eval[string](p, `location.search`); loc != "?view=history" {
		t.Errorf("URL %q", loc)
	}
	if got := p.text("#history-count"); got != "5" {
		t.Errorf("count %q, want 5", got)
	}

	// Words of the answer: the person's own, a rejection's comment (the
	// last word also as a prefix).
	p.typeFilter("q", "zeppelin")
	p.waitHistory(q.ID)
	p.typeFilter("q", "fri")
	p.waitHistory(ap.ID)
	if loc := eval[string](p, `location.search`); loc != "?view=history&q=fri" {
		t.Errorf("URL %q, want the search in it", loc)
	}
	// A reload keeps it.
	p.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("body.ready")))
	p.waitHistory(ap.ID)
	if v := eval[string](p, `document.querySelector('#history-filters [name=q]').value`); v != "fri" {
		t.Errorf("search field %q after reload", v)
	}
	p.typeFilter("q", "")
	p.waitHistory(oa.ID, act.ID, ed.ID, ap.ID, q.ID)

	// Filters: kind, outcome, who, agent.
	sel := func(name, value string) {
		t.Helper()
		eval[bool](p, fmt.Sprintf(`(s => { s.value = %q; s.dispatchEvent(new Event('input', { bubbles: true })); return true })(document.querySelector('#history-filters [name=%s]'))`, value, name))
	}
	sel("kind", "approval")
	p.waitHistory(ed.ID, ap.ID)
	sel("kind", "")
	sel("outcome", "dismissed")
	p.waitHistory(act.ID)
	sel("outcome", "")
	p.typeFilter("by", "dave")
	p.waitHistory(ed.ID)
	p.typeFilter("by", "")
	p.typeFilter("agent", "builder")
	p.waitHistory(oa.ID)
	if loc := eval[string](p, `location.search`); loc != "?view=history&agent=builder" {
		t.Errorf("URL %q", loc)
	}
	p.typeFilter("agent", "")
	p.waitHistory(oa.ID, act.ID, ed.ID, ap.ID, q.ID)
	// A session chosen in the sidebar: its asks only, and no agent field.
	p.do(chromedp.Click(chromedp.CSS(`#sessions [data-agent="agent-1"][data-session="build"]`)))
	p.waitHistory(act.ID, q.ID)
	if loc := eval[string](p, `location.search`); loc != "?view=history&agent=agent-1&session=build" {
		t.Errorf("URL %q", loc)
	}
	if !eval[bool](p, `document.querySelector('#history-filters [name=agent]').closest('label').hidden`) {
		t.Error("the agent field is offered with a session chosen")
	}
	p.do(chromedp.Click(chromedp.CSS(`#sessions .session-link[data-session=""]`)))
	p.waitHistory(oa.ID, act.ID, ed.ID, ap.ID, q.ID)

	// Opened: the whole record.
	row := func(id int64) string { return fmt.Sprintf(`#history .recent-item[data-id="%d"]`, id) }
	p.do(chromedp.Click(chromedp.CSS(row(ed.ID) + " details.record summary")))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s .timeline li') !== null`, row(ed.ID)))
	events := eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll('%s .timeline li .ev')].map(e => e.textContent)`, row(ed.ID)))
	if len(events) != 2 || events[0] != "Asked by agent-1" || events[1] != "Answered by dave" {
		t.Errorf("history of the edited approval: %q", events)
	}
	if got := p.text(row(ed.ID) + " .record-diff del"); !strings.Contains(got, `"replicas": 3`) {
		t.Errorf("the diff removes %q", got)
	}
	if got := p.text(row(ed.ID) + " .record-diff ins"); !strings.Contains(got, `"replicas": 5`) {
		t.Errorf("the diff adds %q", got)
	}
	if got := eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll('%s .record-diff ins, %s .record-diff del')].map(e => getComputedStyle(e).color)`, row(ed.ID), row(ed.ID))); len(got) != 2 || got[0] == got[1] {
		t.Errorf("additions and deletions coloured %q: want two colours", got)
	}
	p.do(chromedp.Click(chromedp.CSS(row(q.ID) + " details.record summary")))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s .timeline li') !== null`, row(q.ID)))
	if got := p.text(row(q.ID) + " .record-outcome"); got != "Answered by alice — zeppelin" {
		t.Errorf("the question's outcome reads %q", got)
	}

	// Live: an ask settled meanwhile comes to the top of an unsearched list.
	live := createFor(t, srv, "build", &askd.AskInput{Kind: askd.KindBlocked, Title: "No disk space"}, 0)
	if _, err := alice.Dismiss(ctx, live.ID, ""); err != nil {
		t.Fatal(err)
	}
	p.waitHistory(live.ID, oa.ID, act.ID, ed.ID, ap.ID, q.ID)
	p.waitFor(`document.querySelector('#history-count').textContent === '6'`)
}

// TestHistoryPaging: the History view loads a page at a time, the next as
// the end of the list scrolls near, in the server's order, none twice.
func TestHistoryPaging(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{MaxPending: 1000, MaxPendingPerToken: 100000})
	ctx := context.Background()
	human, _ := srv.App.Authenticate(ctx, srv.HumanToken)
	const n = 130
	for i := range n {
		a := createFor(t, srv, fmt.Sprintf("s%d", i%3), &askd.AskInput{Kind: askd.KindAction, Title: fmt.Sprintf("Task %d", i)}, 0)
		if _, err := srv.App.Dismiss(ctx, human, a.ID, ""); err != nil {
			t.Fatal(err)
		}
	}
	var want []int64
	for cursor := ""; ; {
		page, info, err := srv.Human().History(ctx, client.HistoryOptions{PageOptions: client.PageOptions{Cursor: cursor, Limit: 200}})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range page {
			want = append(want, a.ID)
		}
		if cursor = info.Next; cursor == "" {
			break
		}
	}
	if len(want) != n {
		t.Fatalf("the server's history holds %d asks, want %d", len(want), n)
	}

	p := openInbox(t, srv, "/?view=history")
	p.waitFor(`document.querySelectorAll('#history .recent-item').length === 50`)
	if got := p.text("#history-count"); got != fmt.Sprint(n) {
		t.Errorf("count %q, want %d", got, n)
	}
	for _, rows := range []int{100, n} {
		eval[bool](p, `window.scrollTo(0, document.documentElement.scrollHeight), true`)
		p.waitFor(fmt.Sprintf(`document.querySelectorAll('#history .recent-item').length === %d`, rows))
	}
	p.waitFor(`document.querySelector('#history-more').hidden`)
	got := eval[[]int64](p, historyIDs)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows\n%v\nwant the server's order\n%v", got, want)
	}
}
