package web_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// coldTab opens a tab whose browser context has the sign-in cookie and an
// empty cache, so the next navigation is a first load.
func coldTab(t *testing.T, srv *testserver.Server) *tab {
	t.Helper()
	p := newTab(t, srv)
	if _, err := chromedp.Call(p.ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	_, err := chromedp.Call(p.ctx, network.SetCookie, network.SetCookieParams{
		Name: app.BrowserCookie, Value: srv.BrowserCookie(t, srv.HumanName).Value, URL: srv.URL + "/", HTTPOnly: ptr(true), SameSite: network.CookieSameSiteStrict,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ptr[T any](v T) *T { return &v }

// firstLoad loads the inbox cold and returns the bytes transferred (headers
// and bodies as they came over the wire) and the number of requests, up to
// the page being ready and idle: loaded, the cards of its first page built,
// its event stream opened, and every other request it made finished. The event stream's few bytes are not
// counted: it never finishes loading.
func firstLoad(t *testing.T, p *tab) (bytes float64, requests int) {
	t.Helper()
	var (
		mu       sync.Mutex
		open     = map[network.RequestID]string{} // started, not finished: by URL
		finished = map[network.RequestID]bool{}
		stream   bool                     // the event stream was requested
		changed  = make(chan struct{}, 1) // a network event was recorded
	)
	lctx, stop := context.WithCancel(p.ctx)
	defer stop()
	// Listen sees the events in the order the browser sent them.
	err := chromedp.Listen(lctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		defer func() {
			select {
			case changed <- struct{}{}:
			default: // one is pending already: the loop below reads the state anew
			}
		}()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			if strings.Contains(ev.Request.URL, "/api/events") {
				stream = true
				return
			}
			if !finished[ev.RequestID] {
				open[ev.RequestID] = ev.Request.URL
			}
		case *network.EventLoadingFinished:
			if _, ok := open[ev.RequestID]; ok {
				bytes += ev.EncodedDataLength
				requests++
				delete(open, ev.RequestID)
				finished[ev.RequestID] = true
			}
		case *network.EventLoadingFailed:
			delete(open, ev.RequestID)
			finished[ev.RequestID] = true
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	p.do(chromedp.Navigate(p.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("body.ready")))
	// Every card of the first page built (their details requested), after
	// the first were painted.
	p.waitFor(`document.readyState === 'complete' && (!document.querySelector('#pending .card') || performance.getEntriesByName('askd-cards-built').length > 0)`)
	idle := func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return stream && len(open) == 0, fmt.Sprintf("event stream requested %v, still loading %v", stream, open)
	}
	// Only a network event changes what idle reads: look again after each.
	timeout := time.After(stepTimeout)
	for ok, state := idle(); !ok; ok, state = idle() {
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("the page never went idle: %s", state)
		}
	}
	stop()
	mu.Lock()
	defer mu.Unlock()
	return bytes, requests
}

// seed creates n pending questions across sessions directly through the app
// layer, and settles every settleEvery-th one.
func seed(t *testing.T, srv *testserver.Server, n, settleEvery int) {
	t.Helper()
	ctx := context.Background()
	human, err := srv.App.Authenticate(ctx, srv.HumanToken)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		c := askd.Caller{Name: "agent-1", Role: askd.RoleAgent, Session: fmt.Sprintf("session-%02d", i%20)}
		a, err := srv.App.Create(ctx, c, &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{
			question(fmt.Sprintf("Question %d: which way should the migration go?", i), "Migration", i%3 == 0,
				"Forward: apply the new schema now", "Backward: keep the old schema a week", "Both: dual-write for a while"),
		}}, app.CreateOptions{Timeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if settleEvery > 0 && i%settleEvery == 0 {
			v := askd.Choice{Values: []string{"Forward"}, Multi: i%3 == 0}
			if _, err := srv.App.Answer(ctx, human, a.ID, &askd.Answer{Answers: map[string]askd.Choice{a.Questions[0].Question: v}}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestPageWeight(t *testing.T) {
	t.Run("empty inbox", func(t *testing.T) {
		srv := startServer(t, app.Config{})
		bytes, n := firstLoad(t, coldTab(t, srv))
		t.Logf("first load, empty inbox: %.1f KB in %d requests", bytes/1024, n)
		if bytes > 100*1024 {
			t.Errorf("first load %.1f KB, over 100 KB", bytes/1024)
		}
	})
	t.Run("20 pending, 50 settled", func(t *testing.T) {
		srv := startServer(t, app.Config{MaxPending: 100, MaxPendingPerToken: 100000, MaxNewSessions: 100000})
		seed(t, srv, 70, 0)
		ctx := context.Background()
		human, _ := srv.App.Authenticate(ctx, srv.HumanToken)
		for id := int64(1); id <= 50; id++ {
			if _, err := srv.App.Dismiss(ctx, human, id, "not now"); err != nil {
				t.Fatal(err)
			}
		}
		bytes, n := firstLoad(t, coldTab(t, srv))
		t.Logf("first load, 20 pending and 50 settled asks: %.1f KB in %d requests", bytes/1024, n)
		if bytes > 100*1024 {
			t.Errorf("first load %.1f KB, over 100 KB", bytes/1024)
		}
	})
}

// seedInbox inserts n pending asks across sessions sessions (n/sessions
// each) of the test server's agent, straight through the store in one
// transaction: a fifth of them questions and a fifth permission prompts,
// with deadlines an hour or more away (the soonest first in urgency
// order), the rest approvals and attention asks without one, some with
// details.
func seedInbox(t *testing.T, srv *testserver.Server, n, sessions int) {
	t.Helper()
	now := time.Now()
	err := srv.Store.Update(context.Background(), func(tx askd.Tx) error {
		for i := range n {
			at := now.Add(time.Duration(i-n) * time.Second)
			a := &askd.Ask{Agent: srv.AgentName, Session: fmt.Sprintf("session-%04d", i%sessions), Status: askd.StatusPending,
				Revision: 1, CreatedAt: at, UpdatedAt: at}
			deadline := now.Add(time.Hour + time.Duration(i)*time.Second)
			switch i % 5 {
			case 0:
				a.Kind, a.Deadline = askd.KindQuestion, &deadline
				a.Questions = []askd.Question{question(fmt.Sprintf("Question %d: which way should the migration go?", i), "Migration", i%3 == 0,
					"Forward: apply the new schema now", "Backward: keep the old schema a week", "Both: dual-write for a while")}
			case 1:
				a.Kind, a.Deadline, a.ToolName = askd.KindApproval, &deadline, "Bash"
				a.Title = "Allow Bash"
				a.Payload = []byte(fmt.Sprintf(`{"command":"go test -run Test%d ./...","description":"Run one test"}`, i))
			case 2:
				a.Kind, a.Title = askd.KindApproval, fmt.Sprintf("Deploy build %d to staging", i)
				a.Details = "**Plan:** roll the staging replicas one by one.\n\n```\nkubectl rollout restart deploy/api\n```"
				a.Payload = []byte(fmt.Sprintf(`{"build":%d,"env":"staging"}`, i))
			case 3:
				a.Kind, a.Title = askd.KindReady, fmt.Sprintf("Branch %d is ready for review", i)
				a.Details = "All checks passed; the diff touches *three* packages."
			default:
				a.Kind, a.Title = askd.KindAction, fmt.Sprintf("Rotate key %d", i)
			}
			if err := tx.Asks.CreateAsk(context.Background(), a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("seed %d asks: %v", n, err)
	}
}

// TestTenThousandPendingAsks loads an inbox of 10,000 pending asks in 1,000
// sessions cold, and checks that the first load (the page, its scripts and
// styles, and the first pages of asks, sessions and Recent, as transferred)
// stays within 100 KB; the times are logged (the machine is shared: they
// measure it too) and bounded only generously, against a page that would
// render everything. ASKD_INBOX_PENDING=100000 loads that many instead, in
// a tenth as many sessions, for the scale figure of docs/benchmarks.md
// (make bench-scale); 10,000 is what make test runs.
func TestTenThousandPendingAsks(t *testing.T) {
	pending := 10000
	if v := os.Getenv("ASKD_INBOX_PENDING"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 || n%10 != 0 {
			t.Fatalf("ASKD_INBOX_PENDING=%q: want a count of 100 or more, a multiple of 10", v)
		}
		pending = n
	}
	srv := startServer(t, app.Config{MaxPending: 100, MaxPendingPerToken: 1000000, MaxNewSessions: 100000})
	t0 := time.Now()
	seedInbox(t, srv, pending, pending/10)
	t.Logf("seeded %d pending asks in %d sessions in %v (one transaction)", pending, pending/10, time.Since(t0).Round(time.Millisecond))

	p := coldTab(t, srv)
	bytes, n := firstLoad(t, p)
	t.Logf("first load, %d pending asks in %d sessions: %.1f KB in %d requests", pending, pending/10, bytes/1024, n)
	if bytes > 100*1024 {
		t.Errorf("first load %.1f KB, over 100 KB", bytes/1024)
	}
	if got := eval[int](p, `document.querySelectorAll('#pending .card').length`); got != 50 {
		t.Errorf("%d cards after the first load, want the first page's 50", got)
	}
	if title := eval[string](p, `document.title`); title != fmt.Sprintf("(%d) askd inbox", pending) {
		t.Errorf("title %q, want the count of every pending ask", title)
	}
	// The page's own figures (ms after navigation start): its mark after the
	// frame that first showed cards, and the browser's paints.
	f := eval[[]float64](p, `[performance.getEntriesByName('askd-cards-painted')[0]?.startTime ?? -1,
		performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1,
		performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd]`)
	t.Logf("first cards painted at %.0f ms (first contentful paint %.0f ms, DOMContentLoaded %.0f ms)", f[0], f[1], f[2])
	t.Logf("renders: %s", eval[string](p, `performance.getEntriesByName('askd-render').map(m => m.startTime.toFixed(0) + '+' + m.duration.toFixed(0)).join(', ')`))
	t.Logf("requests (start–end ms): %s", eval[string](p, `performance.getEntriesByType('resource').map(r => r.name.replace(location.origin, '').replace(/\/assets\/[0-9a-f]+\//, '') + ' ' + r.startTime.toFixed(0) + '–' + r.responseEnd.toFixed(0)).join(', ')`))
	if f[0] < 0 || f[0] > 10000 {
		t.Errorf("first cards painted at %.0f ms: not within 10 s (the target is 1 s)", f[0])
	}

	// A new urgent ask among them shows at once, at the top.
	start := time.Now()
	a := createFor(t, srv, "session-0007", &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{
		question("Roll back the release?", "Rollback", false, "Yes", "No")}}, 5*time.Minute)
	p.waitFor(fmt.Sprintf(`document.querySelector('#pending .card')?.dataset.id === '%d'`, a.ID))
	appear := time.Since(start)
	t.Logf("a new ask among %d appeared in the page %v after it was created", pending, appear.Round(time.Millisecond))
	if appear > 10*time.Second {
		t.Errorf("the new ask took %v to appear (the target is 1 s)", appear)
	}
	p.waitFor(fmt.Sprintf(`document.title === '(%d) askd inbox'`, pending+1))
	p.waitFor(sessionCount("session-0007", "11"))
	// Settled elsewhere: the counts go down again.
	if _, err := srv.Human().Dismiss(context.Background(), 8, ""); err != nil { // session-0007's
		t.Fatal(err)
	}
	p.waitFor(fmt.Sprintf(`document.title === '(%d) askd inbox'`, pending))
	p.waitFor(sessionCount("session-0007", "10"))

	// The session list: a page at first, the next once scrolled to its end.
	if got := eval[int](p, `document.querySelectorAll('#sessions .session-link').length`); got != 51 {
		t.Errorf("%d session links, want All and the first page's 50", got)
	}
	eval[bool](p, `(n => { n.scrollTop = n.scrollHeight; return true })(document.querySelector('#sessions'))`)
	p.waitFor(`document.querySelectorAll('#sessions .session-link').length === 101`)

	// Scrolling down loads the next page, in order, without repeats.
	start = time.Now()
	eval[bool](p, `window.scrollTo(0, document.documentElement.scrollHeight), true`)
	p.waitFor(`document.querySelectorAll('#pending .card').length >= 101`)
	t.Logf("scrolled to the end: the next page shown %v later", time.Since(start).Round(time.Millisecond))
	ids := eval[[]int64](p, `[...document.querySelectorAll('#pending .card')].map(c => Number(c.dataset.id))`)
	seen := map[int64]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("ask %d shown twice", id)
		}
		seen[id] = true
	}
	list, _, err := srv.Human().ListPage(context.Background(), client.ListOptions{Limit: len(ids)})
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for _, x := range list {
		want = append(want, x.ID)
	}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("cards in order\n%v\nwant the server's\n%v", ids, want)
	}
}

// sessionCount is true once the sidebar shows session name with count n.
func sessionCount(name, n string) string {
	return fmt.Sprintf(`document.querySelector('#sessions [data-session=%q] .badge-count')?.textContent === %q`, name, n)
}
