package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/testserver"
)

// response is what fetch got: the status, the headers, the body as sent
// (compressed or not) and as JSON.
type response struct {
	status int
	header http.Header
	wire   []byte // the bytes on the wire
	body   []byte // decompressed
}

// fetch GETs path with the human token, asking for gzip when gz is set
// (by hand, so that the transport leaves the body as sent).
func fetch(t *testing.T, s *testserver.Server, path string, gz bool) response {
	t.Helper()
	return fetchAs(t, s, s.HumanToken, path, gz)
}

func fetchAs(t *testing.T, s *testserver.Server, token, path string, gz bool) response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodGet, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	wire, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := response{status: resp.StatusCode, header: resp.Header, wire: wire, body: wire}
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(wire))
		if err != nil {
			t.Fatal(err)
		}
		if r.body, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// asks decodes r's {"asks": [...]} body.
func (r response) asks(t *testing.T) []*askd.Ask {
	t.Helper()
	var out struct{ Asks []*askd.Ask }
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatalf("body %.200s: %v", r.body, err)
	}
	return out.Asks
}

// storeAsks creates the asks in one transaction, straight in the store.
func storeAsks(t *testing.T, s *testserver.Server, asks ...*askd.Ask) {
	t.Helper()
	err := s.Store.Update(ctxT(t), func(tx askd.Tx) error {
		for _, a := range asks {
			if err := tx.Asks.CreateAsk(ctxT(t), a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// inboxAsk is a pending ask of the kind in the session, the way agents
// write them: questions with a deadline, attention asks and approvals
// without (request_approval), permission prompts with one.
func inboxAsk(i int, session string, now time.Time) *askd.Ask {
	a := &askd.Ask{Kind: askd.Kinds[i%len(askd.Kinds)], Session: session, Agent: "agent-1", Status: askd.StatusPending,
		Revision: 1, CreatedAt: now, UpdatedAt: now}
	switch a.Kind {
	case askd.KindQuestion:
		a.Questions = []askd.Question{{
			Question: fmt.Sprintf("Which database should service %d use for its %s tests?", i, session), Header: "Database",
			Options: []askd.Option{
				{Label: "SQLite", Description: "embedded, zero setup, one file per test run"},
				{Label: "Postgres", Description: "shared, like production, needs a server"},
				{Label: "Both", Description: "the suite runs twice, once on each"},
			},
		}}
		d := now.Add(time.Hour + time.Duration(i)*time.Second)
		a.Deadline = &d
	case askd.KindApproval:
		a.Title = fmt.Sprintf("Run: go test ./... in %s", session)
		a.Details = "go test -race -count=1 ./internal/... ./cmd/..."
		a.Payload = json.RawMessage(fmt.Sprintf(`{"command": "go test -race ./...", "cwd": %q}`, session))
		if i%2 == 0 {
			a.ToolName = "Bash"
			d := now.Add(time.Hour + time.Duration(i)*time.Second)
			a.Deadline = &d
		}
	default:
		a.Title = fmt.Sprintf("Step %d of %s is done: merge the branch?", i, session)
		a.Details = "All 412 tests pass; coverage 81.3%. The branch is 3 commits ahead of main."
		a.ToBeTold = true
		if a.Kind == askd.KindDecision {
			a.Options = []askd.Option{{Label: "merge", Description: "squash and merge now"}, {Label: "wait", Description: "leave it for review"}}
			a.Recommended = "merge"
		}
	}
	return a
}

// pageAll follows path's pages (path ends in cursor= or &cursor=) and
// returns every ask, checking each page's headers on the way.
func pageAll(t *testing.T, s *testserver.Server, path string, wantTotal int) []*askd.Ask {
	t.Helper()
	var all []*askd.Ask
	cursor := ""
	for range 100 {
		r := fetch(t, s, path+url.QueryEscape(cursor), false)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, r.status, r.body)
		}
		if got := r.header.Get("Askd-Total"); got != fmt.Sprint(wantTotal) {
			t.Errorf("GET %s%s: Askd-Total %q, want %d", path, cursor, got, wantTotal)
		}
		all = append(all, r.asks(t)...)
		cursor = r.header.Get("Askd-Next-Cursor")
		if cursor == "" {
			return all
		}
	}
	t.Fatalf("GET %s: pages do not end", path)
	return nil
}

// The inbox's pending asks come a page at a time in urgency order: asks
// with a deadline first, soonest first, then the others newest first; each
// page says how many there are and where the next one starts, the last
// page no next. Filters apply to every page and to the total.
func TestPendingPages(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	now := time.Now().UTC().Truncate(time.Microsecond)
	var made []*askd.Ask
	for i := range 23 {
		made = append(made, inboxAsk(i, fmt.Sprintf("s%d", i%3), now.Add(time.Duration(i)*time.Millisecond)))
	}
	storeAsks(t, s, made...)
	if _, err := s.Human().Dismiss(ctxT(t), made[0].ID, ""); err != nil { // settled: on no page
		t.Fatal(err)
	}

	want := slices.Clone(made[1:])
	slices.SortStableFunc(want, func(a, b *askd.Ask) int {
		switch {
		case a.Deadline != nil && b.Deadline != nil:
			return a.Deadline.Compare(*b.Deadline)
		case a.Deadline != nil:
			return -1
		case b.Deadline != nil:
			return 1
		}
		return int(b.ID - a.ID)
	})
	got := pageAll(t, s, "/api/asks?status=pending&limit=5&cursor=", 22)
	if !slices.Equal(ids(got), ids(want)) {
		t.Errorf("pages of 5 = %v, want %v", ids(got), ids(want))
	}

	var inS1 []*askd.Ask
	for _, a := range want {
		if a.Session == "s1" && a.Kind == askd.KindQuestion {
			inS1 = append(inS1, a)
		}
	}
	got = pageAll(t, s, "/api/asks?agent=agent-1&session=s1&kind=question&limit=1&cursor=", len(inS1))
	if !slices.Equal(ids(got), ids(inS1)) {
		t.Errorf("s1's questions by pages of 1 = %v, want %v", ids(got), ids(inS1))
	}

	// The Go client reads the same headers.
	var viaClient []*askd.Ask
	o := client.ListOptions{Limit: 7}
	for {
		page, info, err := s.Human().ListPage(ctxT(t), o)
		if err != nil {
			t.Fatal(err)
		}
		if info.Total != 22 {
			t.Errorf("ListPage total %d, want 22", info.Total)
		}
		viaClient = append(viaClient, page...)
		if info.Next == "" {
			break
		}
		o.Cursor = info.Next
	}
	if !slices.Equal(ids(viaClient), ids(want)) {
		t.Errorf("client pages of 7 = %v, want %v", ids(viaClient), ids(want))
	}

	// Without cursor=, the list is what it always was: every pending ask,
	// then the latest settled, with no page headers; limit up to 1000.
	r := fetch(t, s, "/api/asks?limit=1000", false)
	if r.status != http.StatusOK || len(r.asks(t)) != 23 || r.header.Get("Askd-Next-Cursor") != "" {
		t.Errorf("GET /api/asks?limit=1000: %d, %d asks, next %q; want 200, all 23, no next", r.status, len(r.asks(t)), r.header.Get("Askd-Next-Cursor"))
	}
}

// ids returns the ids of the asks, in order.
func ids(asks []*askd.Ask) []int64 {
	out := make([]int64, len(asks))
	for i, a := range asks {
		out[i] = a.ID
	}
	return out
}

// Sessions come whole without limit= or cursor= (as before pages), else a
// page at a time, by agent then name; both say how many there are.
func TestSessionPages(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	now := time.Now().UTC()
	var made []*askd.Ask
	for i := range 12 {
		made = append(made, inboxAsk(i, fmt.Sprintf("s%02d", i), now))
	}
	storeAsks(t, s, made...)

	all, err := s.Human().Sessions(ctxT(t))
	if err != nil || len(all) != 12 {
		t.Fatalf("Sessions = %d, %v; want 12", len(all), err)
	}
	if r := fetch(t, s, "/api/sessions", false); r.header.Get("Askd-Total") != "12" || r.header.Get("Askd-Next-Cursor") != "" {
		t.Errorf("GET /api/sessions: total %q, next %q; want 12 and none", r.header.Get("Askd-Total"), r.header.Get("Askd-Next-Cursor"))
	}
	var paged []*askd.SessionInfo
	o := client.PageOptions{Limit: 5}
	for pages := 1; ; pages++ {
		ss, info, err := s.Human().SessionsPage(ctxT(t), o)
		if err != nil {
			t.Fatal(err)
		}
		if info.Total != 12 {
			t.Errorf("page %d: total %d, want 12", pages, info.Total)
		}
		paged = append(paged, ss...)
		if info.Next == "" {
			if pages != 3 {
				t.Errorf("%d pages of 5 sessions of 12, want 3", pages)
			}
			break
		}
		o.Cursor = info.Next
	}
	name := func(si *askd.SessionInfo) string { return si.Agent + "/" + si.Name }
	if !slices.Equal(mapped(paged, name), mapped(all, name)) {
		t.Errorf("sessions by pages of 5 = %v, want %v", mapped(paged, name), mapped(all, name))
	}
}

func mapped[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// The history is searched by the words of an ask and of its answer, with
// filters, most recently settled first, a page at a time.
func TestHistorySearch(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	human := s.Human()
	agent := s.Agent("deploy")
	dec, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindDecision, Title: "Deploy on Friday?",
		Options: []askd.Option{{Label: "yes"}, {Label: "no"}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := human.Answer(ctx, dec.ID, &askd.Answer{Answer: "after the code freeze"}); err != nil {
		t.Fatal(err)
	}
	drop, err := s.Agent("db").Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "Drop the users table"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := human.Answer(ctx, drop.ID, &askd.Answer{Decision: askd.DecisionRejected, Comment: "take a backup first"}); err != nil {
		t.Fatal(err)
	}
	q, err := s.Agent("db").Create(ctx, question(false, "Which index?"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := human.Dismiss(ctx, q.ID, "ask the DBA about the freeze"); err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "Freeze is over"}, 0); err != nil { // pending: not history
		t.Fatal(err)
	}

	tests := []struct {
		name string
		o    client.HistoryOptions
		want []int64
	}{
		{"everything, most recently settled first", client.HistoryOptions{}, []int64{q.ID, drop.ID, dec.ID}},
		{"a word of an answer and of a reply", client.HistoryOptions{Query: "freeze"}, []int64{q.ID, dec.ID}},
		{"a word of the title, as a prefix", client.HistoryOptions{Query: "Fri"}, []int64{dec.ID}},
		{"a rejection's comment", client.HistoryOptions{Query: "backup"}, []int64{drop.ID}},
		{"outcome", client.HistoryOptions{Query: "freeze", Outcome: askd.OutcomeDismissed}, []int64{q.ID}},
		{"by", client.HistoryOptions{By: s.HumanName, Kind: askd.KindApproval}, []int64{drop.ID}},
		{"agent and session", client.HistoryOptions{Agent: s.AgentName, Session: "deploy"}, []int64{dec.ID}},
		{"nothing", client.HistoryOptions{Query: "zeppelin"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, info, err := human.History(ctx, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("History(%+v) = %v, want %v", tt.o, ids(got), tt.want)
			}
			if info.Total != len(tt.want) || info.Next != "" {
				t.Errorf("History(%+v): total %d, next %q; want %d, none", tt.o, info.Total, info.Next, len(tt.want))
			}
		})
	}
	t.Run("paged", func(t *testing.T) {
		if got := pageAll(t, s, "/api/history?limit=1&cursor=", 3); !slices.Equal(ids(got), []int64{q.ID, drop.ID, dec.ID}) {
			t.Errorf("history by pages of 1 = %v", ids(got))
		}
	})
}

// Bad page parameters and search filters are refused, naming the field and
// the rule: a page that cannot be given is 422, a filter that is no filter
// 400, an agent 403. The list without cursor= keeps its old bounds.
func TestPageRefusals(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	storeAsks(t, s, inboxAsk(0, "s", time.Now()), inboxAsk(1, "t", time.Now()))
	sessionsCursor := fetch(t, s, "/api/sessions?limit=1", false).header.Get("Askd-Next-Cursor")
	if sessionsCursor == "" {
		t.Fatal("no next cursor on a page of 1 session of 2")
	}
	tests := []struct {
		name   string
		path   string
		status int
		msg    string
	}{
		{"page over 200", "/api/asks?status=pending&limit=201&cursor=", 422, "limit: 201, must be from 1 to 200 per page"},
		{"empty page", "/api/asks?limit=0&cursor=", 422, "limit: 0, must be from 1 to 200 per page"},
		{"limit not a number", "/api/asks?limit=ten&cursor=", 422, `limit: "ten", must be a whole number from 1 to 200 per page`},
		{"cursor not base64 JSON", "/api/asks?cursor=bm9wZQ", 422, "cursor: not a cursor this server gave"},
		{"cursor not base64", "/api/asks?cursor=%25%25", 422, "cursor: not a cursor this server gave"},
		{"cursor of another list", "/api/asks?cursor=" + sessionsCursor, 422, "cursor: not a cursor this server gave"},
		{"pages of settled asks", "/api/asks?status=answered&cursor=", 422, "cursor: pages hold pending asks (status=pending); settled ones page through /api/history"},
		{"before with cursor", "/api/asks?before=9&cursor=", 422, "before: not with cursor, which says where the page starts"},
		{"unknown kind on a page", "/api/asks?kind=poem&cursor=", 400, `kind: "poem" is not a kind of ask`},
		{"without cursor, the old bounds", "/api/asks?limit=1001", 400, `limit: "1001", must be an integer from 1 to 1000`},
		{"sessions page over 200", "/api/sessions?limit=500", 422, "limit: 500, must be from 1 to 200 per page"},
		{"sessions, a cursor of asks", "/api/sessions?cursor=WyJwZW5kaW5nIixudWxsLDFd", 422, "cursor: not a cursor this server gave"},
		{"history page over 200", "/api/history?limit=201", 422, "limit: 201, must be from 1 to 200 per page"},
		{"history, a cursor of sessions", "/api/history?cursor=" + sessionsCursor, 422, "cursor: not a cursor this server gave"},
		{"unknown outcome", "/api/history?outcome=lost", 400, `outcome: "lost" is not one of answered, dismissed, timeout, withdrawn, replaced`},
		{"unknown kind in history", "/api/history?kind=poem", 400, `kind: "poem" is not a kind of ask`},
		{"search too long", "/api/history?q=" + strings.Repeat("a", 501), 400, "q: 501 characters, at most 500"},
		{"search of too many words", "/api/history?q=" + url.QueryEscape(strings.Repeat("w ", 17)), 400, "q: 17 words, at most 16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fetch(t, s, tt.path, false)
			var e struct{ Error string }
			_ = json.Unmarshal(r.body, &e)
			if r.status != tt.status || e.Error != tt.msg {
				t.Errorf("GET %s: %d %q, want %d %q", tt.path, r.status, e.Error, tt.status, tt.msg)
			}
		})
	}
	t.Run("agent", func(t *testing.T) {
		if r := fetchAs(t, s, s.AgentToken, "/api/history", false); r.status != http.StatusForbidden {
			t.Errorf("agent token on /api/history: %d, want 403", r.status)
		}
	})
}

// Every list is gzip-compressed for a client that takes it: the pages,
// the sessions whole, the history.
func TestListsAreCompressed(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	var made []*askd.Ask
	for i := range 40 {
		a := inboxAsk(i, fmt.Sprintf("session-%d", i), time.Now())
		if i%2 == 0 {
			a.Settle(askd.StatusAnswered, "", &askd.Answer{Answer: "fine"}, "alice", time.Now())
		}
		made = append(made, a)
	}
	storeAsks(t, s, made...)
	for _, path := range []string{"/api/asks", "/api/asks?cursor=", "/api/sessions", "/api/sessions?limit=30", "/api/history"} {
		r := fetch(t, s, path, true)
		if r.status != http.StatusOK || r.header.Get("Content-Encoding") != "gzip" {
			t.Errorf("GET %s: %d, Content-Encoding %q; want 200 gzip", path, r.status, r.header.Get("Content-Encoding"))
		}
		if !json.Valid(r.body) {
			t.Errorf("GET %s: not JSON once decompressed: %.100s", path, r.body)
		}
	}
}

// The inbox's first load stays small however full the inbox is: with
// 10,000 pending asks in 1,000 sessions, the first page of asks and of
// sessions are each a few KB gzipped (where the whole lists are hundreds).
// Sizes are deterministic, so a generous bound is asserted; times are not.
func TestFirstLoadStaysSmall(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	now := time.Now().UTC()
	asks := make([]*askd.Ask, 0, 10000)
	for i := range 10000 {
		asks = append(asks, inboxAsk(i, fmt.Sprintf("repo-%03d/task", i%1000), now.Add(time.Duration(i)*time.Microsecond)))
	}
	storeAsks(t, s, asks...)

	const bound = 30 << 10
	for _, c := range []struct {
		path  string
		items string
		total string
	}{
		{"/api/asks?status=pending&limit=50&cursor=", "asks", "10000"},
		{"/api/sessions?limit=50", "sessions", "1000"},
	} {
		r := fetch(t, s, c.path, true)
		var body map[string][]json.RawMessage
		if err := json.Unmarshal(r.body, &body); err != nil || r.status != http.StatusOK {
			t.Fatalf("GET %s: %d %v", c.path, r.status, err)
		}
		t.Logf("GET %s: %d %s, %d bytes gzipped (%d plain), Askd-Total %s", c.path, len(body[c.items]), c.items, len(r.wire), len(r.body), r.header.Get("Askd-Total"))
		if len(body[c.items]) != 50 || r.header.Get("Askd-Total") != c.total || r.header.Get("Askd-Next-Cursor") == "" {
			t.Errorf("GET %s: %d %s, total %q, next %q; want 50, %s, a next cursor", c.path, len(body[c.items]), c.items, r.header.Get("Askd-Total"), r.header.Get("Askd-Next-Cursor"), c.total)
		}
		if len(r.wire) >= bound {
			t.Errorf("GET %s: %d bytes gzipped, want under %d", c.path, len(r.wire), bound)
		}
	}
	// For the record: the whole lists, as the inbox loaded them before pages.
	for _, path := range []string{"/api/asks", "/api/sessions"} {
		r := fetch(t, s, path, true)
		t.Logf("GET %s (whole): %d bytes gzipped (%d plain)", path, len(r.wire), len(r.body))
	}
}
