package tell_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/tell"
	"github.com/askd-dev/askd/internal/testserver"
)

// clock is a test's injected clock: now, until moved.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) move(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// linkServer is askd with answer links: the notifiers given, buttons
// answering as alice (the test server's human), links on the server's own
// URL, and a worker sending notifications.
type linkServer struct {
	*testserver.Server
	ntfy, slack *receiver
}

// startLinks starts a linkServer with an ntfy and a Slack receiver. cfg may
// set a clock; opts may add a Slack interactions handler (then Slack buttons
// answer in place).
func startLinks(t *testing.T, cfg app.Config, opts testserver.Options) *linkServer {
	t.Helper()
	ls := &linkServer{ntfy: newReceiver(t, nil), slack: newReceiver(t, nil)}
	cfg.NotifyAs = "alice"
	cfg.Notifiers = []askd.Channel{{Type: askd.NotifyNtfy, URL: ls.ntfy.URL}, {Type: askd.NotifySlack, URL: ls.slack.URL}}
	if cfg.Backoff == nil {
		cfg.Backoff = func(int) time.Duration { return 20 * time.Millisecond }
	}
	opts.Config = cfg
	ls.Server = testserver.Start(t, opts)
	ctx, cancel := context.WithCancel(context.Background())
	w := tell.New(ls.App, tell.Options{Timeout: 5 * time.Second, Tick: 50 * time.Millisecond,
		PublicURL: ls.URL, LinkBase: ls.URL, SlackInteractive: opts.Slack != nil})
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return ls
}

// answerURL is an answer link askd makes: <public-url>/a/<code>.
var answerURL = regexp.MustCompile(`^http://\S+/a/([a-z2-7]{26})$`)

type action struct{ label, url, code string }

// ntfyActions waits for the n-th ntfy notification (from 1) and returns it,
// as ntfy reads it (readNtfy), and its actions, each checked to be askd's:
// an http POST of confirm=1 to an answer link, clearing the notification.
func (ls *linkServer) ntfyActions(t *testing.T, n int) (ntfyNote, []action) {
	t.Helper()
	testserver.Eventually(t, "the ntfy notification", func() bool { return len(ls.ntfy.got()) >= n })
	got, err := readNtfy(ls.ntfy.got()[n-1])
	if err != nil {
		t.Fatalf("ntfy would refuse the notification: %v", err)
	}
	var out []action
	for _, b := range got.Actions {
		m := answerURL.FindStringSubmatch(b.URL)
		if m == nil || b.Action != "http" || b.Method != http.MethodPost || b.Body != "confirm=1" || !b.Clear ||
			b.Headers["Content-Type"] != "application/x-www-form-urlencoded" {
			t.Fatalf("ntfy action %+v is not askd's", b)
		}
		out = append(out, action{b.Label, b.URL, m[1]})
	}
	return got, out
}

// tap POSTs to an answer link as ntfy's http action does, and returns the
// status and page.
func tap(t *testing.T, url string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader("confirm=1"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(t, req)
}

func open(t *testing.T, method, url string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// stored reads ask id and its history from the store.
func stored(t *testing.T, srv *testserver.Server, id int64) (*askd.Ask, []*askd.Event) {
	t.Helper()
	var a *askd.Ask
	var evs []*askd.Event
	err := srv.Store.View(t.Context(), func(tx askd.Tx) (err error) {
		if a, err = tx.Asks.Ask(t.Context(), id); err != nil {
			return err
		}
		evs, err = tx.Events.AskHistory(t.Context(), id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return a, evs
}

// unchanged fails the test unless ask id is as before, history and all.
func unchanged(t *testing.T, srv *testserver.Server, before *askd.Ask, history int) {
	t.Helper()
	a, evs := stored(t, srv, before.ID)
	if a.Status != before.Status || a.Revision != before.Revision || a.SettledBy != before.SettledBy ||
		a.AnswerWords() != before.AnswerWords() || len(evs) != history {
		t.Fatalf("ask %d changed: %s by %q (%s), revision %d, %d events; was %s by %q (%s), revision %d, %d events",
			a.ID, a.Status, a.SettledBy, a.AnswerWords(), a.Revision, len(evs), before.Status, before.SettledBy, before.AnswerWords(), before.Revision, history)
	}
}

var whichDatabase = &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{{
	Question: "Which database?", Header: "Database",
	Options: []askd.Option{{Label: "SQLite", Description: "embedded"}, {Label: "Postgres", Description: "shared"}}}}}

// A question's ntfy notification carries one http action per option, each a
// signed link: opening it (as a link scanner would, several times) answers
// nothing; tapping it answers the ask, and the agent blocked on it gets that
// answer, recorded as alice's, via link. The same link again, the other
// option's, and a tampered code are each refused with a page that says why,
// and nothing changes.
func TestNtfyButtonAnswersAWaitingAgent(t *testing.T) {
	ls := startLinks(t, app.Config{}, testserver.Options{})
	agent := ls.Agent("s1")
	type result struct {
		a   *askd.Ask
		err error
	}
	waited := make(chan result, 1)
	go func() {
		a, err := agent.Create(context.Background(), whichDatabase, 30*time.Second)
		waited <- result{a, err}
	}()

	got, actions := ls.ntfyActions(t, 1)
	if len(actions) != 2 || actions[0].label != "SQLite" || actions[1].label != "Postgres" {
		t.Fatalf("actions %+v, want SQLite and Postgres", actions)
	}
	if got.Priority != "4" || got.Tags != "question,question" || got.Title != "askd: question from s1" ||
		!strings.HasPrefix(got.Click, ls.URL+"/?ask=") {
		t.Errorf("ntfy headers: Priority %q, Tags %q, Title %q, Click %q", got.Priority, got.Tags, got.Title, got.Click)
	}
	if got.Message != "Which database?\n• SQLite: embedded\n• Postgres: shared" {
		t.Errorf("ntfy message %q", got.Message)
	}
	id := askID(t, got.Click)

	// Only the codes' hashes are stored.
	for _, act := range actions {
		l := storedLink(t, ls.Server, act.code)
		if l == nil || l.AskID != id || l.Human != "alice" || l.Label != act.label || l.Revision != 1 {
			t.Fatalf("stored link for %s: %+v", act.label, l)
		}
	}

	// Opening a link answers nothing, however often.
	for range 3 {
		status, page, hd := open(t, http.MethodGet, actions[1].url)
		if status != http.StatusOK || !strings.Contains(page, "Answer: Postgres?") || !strings.Contains(page, `name="confirm" value="1"`) {
			t.Fatalf("GET link: %d %s", status, page)
		}
		checkPageHeaders(t, hd)
	}
	if status, _, _ := open(t, http.MethodHead, actions[1].url); status != http.StatusOK {
		t.Errorf("HEAD link: %d", status)
	}
	before, evs := stored(t, ls.Server, id)
	if before.Status != askd.StatusPending || len(evs) != 1 {
		t.Fatalf("after opening the link: %s, %d events; want pending, created only", before.Status, len(evs))
	}

	status, page := tap(t, actions[1].url)
	if status != http.StatusOK || !strings.Contains(page, "Answered by alice via link: Postgres.") {
		t.Fatalf("tap: %d %s", status, page)
	}
	r := <-waited
	if r.err != nil {
		t.Fatalf("the waiting agent: %v", r.err)
	}
	if r.a.Status != askd.StatusAnswered || r.a.Answer.Answers["Which database?"].Joined() != "Postgres" || r.a.SettledBy != "alice" {
		t.Fatalf("the waiting agent got %s %+v by %q, want Postgres by alice", r.a.Status, r.a.Answer, r.a.SettledBy)
	}
	after, evs := stored(t, ls.Server, id)
	checkAnswered(t, evs, "via link")
	if l := storedLink(t, ls.Server, actions[1].code); l.UsedAt == nil {
		t.Error("the link used is not marked used")
	}

	tampered := tamper(actions[0].url)
	tests := []struct {
		name, url string
		status    int
		says      string
	}{
		{"the same link again", actions[1].url, http.StatusConflict, "Answered by alice via link: Postgres."},
		{"the other option's link", actions[0].url, http.StatusConflict, "Answered by alice via link: Postgres."},
		{"a tampered code", tampered, http.StatusNotFound, "This link is unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, method := range []string{http.MethodPost, http.MethodGet} {
				var status int
				var page string
				if method == http.MethodPost {
					status, page = tap(t, tt.url)
				} else {
					status, page, _ = open(t, method, tt.url)
				}
				if status != tt.status || !strings.Contains(page, tt.says) || strings.Contains(page, `name="confirm"`) {
					t.Errorf("%s: %d %s, want %d saying %q and no button", method, status, page, tt.status, tt.says)
				}
			}
			unchanged(t, ls.Server, after, len(evs))
		})
	}
}

// checkAnswered fails the test unless the history has one answered event,
// alice's, with the note.
func checkAnswered(t *testing.T, evs []*askd.Event, note string) {
	t.Helper()
	n := 0
	for _, e := range evs {
		if e.Action != askd.ActionAnswered {
			continue
		}
		n++
		if e.Actor != "alice" || e.Note != note {
			t.Errorf("answered by %s (%q), want by alice %s", e.Actor, e.Note, note)
		}
	}
	if n != 1 {
		t.Errorf("%d answered events in the history, want 1", n)
	}
}

// tamper changes the last character of a link's code.
func tamper(url string) string {
	last := byte('a')
	if strings.HasSuffix(url, "a") {
		last = 'b'
	}
	return url[:len(url)-1] + string(last)
}

// askID reads the ask's id from its inbox link.
func askID(t *testing.T, link string) int64 {
	t.Helper()
	_, id, ok := strings.Cut(link, "/?ask=")
	var n int64
	for _, c := range id {
		n = n*10 + int64(c-'0')
	}
	if !ok || n == 0 {
		t.Fatalf("no ask id in %q", link)
	}
	return n
}

// storedLink reads the link of code from the store by its hash; nil when
// there is none.
func storedLink(t *testing.T, srv *testserver.Server, code string) *askd.AnswerLink {
	t.Helper()
	sum := sha256.Sum256([]byte(code))
	var l *askd.AnswerLink
	err := srv.Store.View(t.Context(), func(tx askd.Tx) (err error) {
		l, err = tx.AnswerLinks.AnswerLink(t.Context(), hex.EncodeToString(sum[:]))
		return err
	})
	if askd.ErrorCode(err) == askd.ENOTFOUND {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func checkPageHeaders(t *testing.T, h http.Header) {
	t.Helper()
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "script-src") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("Content-Security-Policy %q allows script or inline code", csp)
	}
	if h.Get("Referrer-Policy") != "no-referrer" || h.Get("Cache-Control") != "no-store" || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers: Referrer-Policy %q, Cache-Control %q, X-Content-Type-Options %q",
			h.Get("Referrer-Policy"), h.Get("Cache-Control"), h.Get("X-Content-Type-Options"))
	}
}

// A link that expired (the injected clock moved past a day), one for an
// older revision of an attention ask the agent replaced, and one whose ask
// was settled in the inbox are each refused, GET and POST alike, with a
// page saying why; the ask stays as it was.
func TestRefusedLinksChangeNothing(t *testing.T) {
	clk := newClock()
	ls := startLinks(t, app.Config{Now: clk.Now}, testserver.Options{})
	agent := ls.Agent("s1")

	t.Run("older revision", func(t *testing.T) {
		n := len(ls.ntfy.got())
		first := askDecision(t, ls.Agent("s1"), "Deploy on Monday or Friday?")
		_, old := ls.ntfyActions(t, n+1)
		second, err := agent.Create(t.Context(), &askd.AskInput{Kind: askd.KindDecision, Title: "Deploy on Tuesday or Friday?",
			Options: []askd.Option{{Label: "Tuesday"}, {Label: "Friday"}}}, 0)
		if err != nil || second.ID != first.ID || second.Revision != 2 {
			t.Fatalf("replace: %+v, %v", second, err)
		}
		_, fresh := ls.ntfyActions(t, n+2)
		before, evs := stored(t, ls.Server, first.ID)
		for _, act := range old {
			refused(t, act.url, http.StatusConflict, "The agent has changed this ask since the notification was sent")
		}
		unchanged(t, ls.Server, before, len(evs))
		if status, page := tap(t, fresh[1].url); status != http.StatusOK || !strings.Contains(page, "Answered by alice via link: Friday.") {
			t.Fatalf("the new revision's link: %d %s", status, page)
		}
	})

	t.Run("settled in the inbox", func(t *testing.T) {
		n := len(ls.ntfy.got())
		a, err := agent.Create(t.Context(), &askd.AskInput{Kind: askd.KindApproval, Title: "Run the migration", Details: "ALTER TABLE users ADD COLUMN age int"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, actions := ls.ntfyActions(t, n+1)
		if len(actions) != 2 || actions[0].label != "Approve" || actions[1].label != "Reject" || got.Priority != "4" {
			t.Fatalf("approval: actions %+v, Priority %q", actions, got.Priority)
		}
		if !strings.Contains(got.Message, "ALTER TABLE users") {
			t.Errorf("the approval's notification does not show its details: %q", got.Message)
		}
		if _, err := ls.Human().Answer(t.Context(), a.ID, &askd.Answer{Decision: askd.DecisionRejected, Comment: "not today"}); err != nil {
			t.Fatal(err)
		}
		before, evs := stored(t, ls.Server, a.ID)
		refused(t, actions[0].url, http.StatusConflict, "Answered by alice: rejected.")
		unchanged(t, ls.Server, before, len(evs))
	})

	t.Run("expired", func(t *testing.T) {
		n := len(ls.ntfy.got())
		a, err := ls.Agent("s3").Create(t.Context(), &askd.AskInput{Kind: askd.KindReady, Title: "PR 12 is ready"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, actions := ls.ntfyActions(t, n+1)
		if len(actions) != 1 || actions[0].label != "Done" || got.Priority != "2" || got.Tags != "white_check_mark,ready" {
			t.Fatalf("ready ask: actions %+v, Priority %q, Tags %q", actions, got.Priority, got.Tags)
		}
		l := storedLink(t, ls.Server, actions[0].code)
		if want := clk.Now().Add(app.AnswerLinkTTL); l.ExpiresAt.Sub(want).Abs() > time.Second {
			t.Errorf("expires at %s, want a day from now (%s)", l.ExpiresAt, want)
		}
		before, evs := stored(t, ls.Server, a.ID)
		// Last: the worker waits for deliveries by the real clock, so
		// nothing after this could be notified on time.
		clk.move(app.AnswerLinkTTL + time.Minute)
		refused(t, actions[0].url, http.StatusGone, "This link has expired")
		unchanged(t, ls.Server, before, len(evs))
	})
}

// refused fails the test unless the link refuses, GET and POST alike, with
// the status and a page saying says and offering no button.
func refused(t *testing.T, url string, status int, says string) {
	t.Helper()
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		var got int
		var page string
		if method == http.MethodPost {
			got, page = tap(t, url)
		} else {
			got, page, _ = open(t, method, url)
		}
		if got != status || !strings.Contains(page, says) || strings.Contains(page, `name="confirm"`) {
			t.Errorf("%s %s: %d %s, want %d saying %q and no button", method, url, got, page, status, says)
		}
	}
}

// Which asks get buttons where: ntfy shows all answers or none (it takes
// three); multi-select questions and asks wanting words get only the inbox
// link; a permission prompt is urgent, with Allow and Deny. Slack, without
// a signing secret, gets a button per answer that opens its link.
func TestButtonsByKind(t *testing.T) {
	ls := startLinks(t, app.Config{}, testserver.Options{})
	four := []askd.Option{{Label: "Mon"}, {Label: "Tue"}, {Label: "Wed"}, {Label: "Thu"}}
	tests := []struct {
		name    string
		in      *askd.AskInput
		ntfy    []string // the actions' labels
		slack   []string // the answer buttons' labels
		urgency string
	}{
		{"four options", &askd.AskInput{Kind: askd.KindDecision, Title: "Which day?", Options: four}, nil, []string{"Mon", "Tue", "Wed", "Thu"}, "3"},
		{"multi-select", &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{{Question: "Which checks?", Header: "Checks",
			Options: []askd.Option{{Label: "lint"}, {Label: "tests"}}, MultiSelect: true}}}, nil, nil, "4"},
		{"blocked wants words", &askd.AskInput{Kind: askd.KindBlocked, Title: "Need the staging password"}, nil, nil, "3"},
		{"request_approval", &askd.AskInput{Kind: askd.KindApproval, Title: "Delete the cache"}, []string{"Approve", "Reject"}, []string{"Approve", "Reject"}, "4"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ls.Agent(tt.name).Create(t.Context(), tt.in, 0); err != nil {
				t.Fatal(err)
			}
			got, actions := ls.ntfyActions(t, i+1)
			var labels []string
			for _, a := range actions {
				labels = append(labels, a.label)
			}
			if strings.Join(labels, ",") != strings.Join(tt.ntfy, ",") || got.Priority != tt.urgency {
				t.Errorf("ntfy: actions %v, Priority %q; want %v, %q", labels, got.Priority, tt.ntfy, tt.urgency)
			}
			testserver.Eventually(t, "the Slack message", func() bool { return len(ls.slack.got()) >= i+1 })
			buttons := slackButtons(t, ls.slack.got()[i].body)
			labels = nil
			for _, b := range buttons {
				if b.ActionID == "askd-open" {
					if !strings.HasPrefix(b.URL, ls.URL+"/?ask=") {
						t.Errorf("inbox button opens %q", b.URL)
					}
					continue
				}
				labels = append(labels, b.Text.Text)
				if b.Value != "" || !strings.HasPrefix(b.URL, ls.URL+"/a/") {
					t.Errorf("Slack button %q: url %q, value %q; want its link's URL and no value", b.Text.Text, b.URL, b.Value)
				}
			}
			if strings.Join(labels, ",") != strings.Join(tt.slack, ",") {
				t.Errorf("Slack buttons %v, want %v", labels, tt.slack)
			}
		})
	}

	t.Run("permission prompt", func(t *testing.T) {
		hookBody := `{"hook_event_name":"PermissionRequest","session_id":"s9","tool_name":"Bash","tool_input":{"command":"make test"}}`
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, ls.URL+"/hooks/claude", strings.NewReader(hookBody))
		req.Header.Set("Authorization", "Bearer "+ls.AgentToken)
		req.Header.Set("Content-Type", "application/json")
		answered := make(chan string, 1)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				answered <- err.Error()
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			answered <- string(b)
		}()
		got, actions := ls.ntfyActions(t, len(tests)+1)
		if len(actions) != 2 || actions[0].label != "Allow" || actions[1].label != "Deny" ||
			got.Priority != "5" || got.Tags != "lock,approval" {
			t.Fatalf("permission prompt: actions %+v, Priority %q, Tags %q", actions, got.Priority, got.Tags)
		}
		if status, page := tap(t, actions[1].url); status != http.StatusOK || !strings.Contains(page, "Answered by alice via link: denied.") {
			t.Fatalf("Deny: %d %s", status, page)
		}
		if hook := <-answered; !strings.Contains(hook, `"behavior":"deny"`) {
			t.Errorf("the hook got %s, want a deny", hook)
		}
	})
}

// slackButton is a button of askd's Slack messages, as a test reads it.
type slackButton struct {
	ActionID string `json:"action_id"`
	Text     struct {
		Text string `json:"text"`
	} `json:"text"`
	URL   string `json:"url"`
	Value string `json:"value"`
	Style string `json:"style"`
}

// slackButtons returns the buttons of a Slack message's actions block.
func slackButtons(t *testing.T, body []byte) []slackButton {
	t.Helper()
	var msg struct {
		Text   string `json:"text"`
		Blocks []struct {
			Type     string          `json:"type"`
			Elements json.RawMessage `json:"elements"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		t.Fatalf("Slack message %s: %v", body, err)
	}
	for _, b := range msg.Blocks {
		if b.Type == "actions" {
			var bs []slackButton
			if err := json.Unmarshal(b.Elements, &bs); err != nil {
				t.Fatal(err)
			}
			return bs
		}
	}
	t.Fatalf("Slack message without buttons: %s", body)
	return nil
}

const slackSecret = "8f742231b10e8888abcd99yyyzzz85a5"

// slackClick is an interaction payload of a click on button b by user
// U123 (bob), with the response_url given.
func slackClick(b slackButton, responseURL string) string {
	p, _ := json.Marshal(map[string]any{
		"type":         "block_actions",
		"user":         map[string]string{"id": "U123", "username": "bob", "name": "bob", "team_id": "T1"},
		"actions":      []map[string]string{{"action_id": b.ActionID, "block_id": "askd-1-1", "value": b.Value, "type": "button", "action_ts": "1"}},
		"response_url": responseURL,
		"container":    map[string]string{"type": "message"},
	})
	return "payload=" + url.QueryEscape(string(p))
}

// postSlack sends body to /slack/interactions as Slack does, signed with
// secret at ts, and returns the status.
func postSlack(t *testing.T, base, body, secret string, ts time.Time) (int, *http.Request) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/slack/interactions", strings.NewReader(body))
	stamp := strconv.FormatInt(ts.Unix(), 10)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(tell.HeaderSlackTimestamp, stamp)
	req.Header.Set(tell.HeaderSlackSignature, tell.SlackSignature(secret, stamp, []byte(body)))
	status, _ := do(t, req)
	return status, req
}

// With a Slack app's signing secret, Slack buttons carry their link's code
// and answer in place: a signed click answers, as alice via Slack (user
// U123/bob), and the message is updated through the response_url to say so.
// A wrong signature, a stale timestamp and a replay are refused with 401 and
// change nothing, the message included.
func TestSlackButtonAnswersInPlace(t *testing.T) {
	clk := newClock()
	responses := newReceiver(t, nil)
	ls := startLinks(t, app.Config{Now: clk.Now}, testserver.Options{
		Slack: func(svc *app.Service, base string) http.Handler {
			return tell.NewSlackInteractions(svc, tell.SlackOptions{SigningSecret: slackSecret, PublicURL: base,
				ResponseURLPrefix: responses.URL + "/", Client: http.DefaultClient})
		},
	})
	a := askDecision(t, ls.Agent("s1"), "Deploy on Monday or Friday?")
	testserver.Eventually(t, "the Slack message", func() bool { return len(ls.slack.got()) == 1 })
	buttons := slackButtons(t, ls.slack.got()[0].body)
	if len(buttons) != 3 || buttons[0].Text.Text != "Monday" || buttons[0].Value == "" || buttons[0].URL != "" || buttons[2].ActionID != "askd-open" {
		t.Fatalf("buttons %+v, want Monday and Friday carrying codes, then the inbox", buttons)
	}
	if storedLink(t, ls.Server, buttons[0].Value) == nil {
		t.Fatal("the button's value is no stored link's code")
	}
	click := slackClick(buttons[0], responses.URL+"/actions/T1/1/x")
	before, evs := stored(t, ls.Server, a.ID)

	tests := []struct {
		name   string
		secret string
		at     time.Time
	}{
		{"wrong signature", "not the secret", clk.Now()},
		{"stale timestamp", slackSecret, clk.Now().Add(-6 * time.Minute)},
		{"from the future", slackSecret, clk.Now().Add(6 * time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if status, _ := postSlack(t, ls.URL, click, tt.secret, tt.at); status != http.StatusUnauthorized {
				t.Errorf("status %d, want 401", status)
			}
			unchanged(t, ls.Server, before, len(evs))
		})
	}
	t.Run("unsigned", func(t *testing.T) {
		status, _ := do(t, mustRequest(t, ls.URL+"/slack/interactions", click))
		if status != http.StatusUnauthorized {
			t.Errorf("status %d, want 401", status)
		}
		unchanged(t, ls.Server, before, len(evs))
	})
	if n := len(responses.got()); n != 0 {
		t.Fatalf("refused clicks posted %d responses", n)
	}

	status, signed := postSlack(t, ls.URL, click, slackSecret, clk.Now().Add(-time.Minute))
	if status != http.StatusOK {
		t.Fatalf("signed click: %d", status)
	}
	after, evs := stored(t, ls.Server, a.ID)
	if after.Status != askd.StatusAnswered || after.Answer.Answer != "Monday" || after.SettledBy != "alice" {
		t.Fatalf("after the click: %s %q by %q", after.Status, after.AnswerWords(), after.SettledBy)
	}
	checkAnswered(t, evs, "via Slack (user U123/bob)")
	resp := responses.got()
	if len(resp) != 1 {
		t.Fatalf("%d responses posted, want 1", len(resp))
	}
	var update struct {
		Replace bool   `json:"replace_original"`
		Text    string `json:"text"`
	}
	json.Unmarshal(resp[0].body, &update)
	if !update.Replace || !strings.Contains(update.Text, "Answered by alice via Slack (user U123/bob): Monday.") ||
		strings.Contains(string(resp[0].body), buttons[1].Value) {
		t.Errorf("message update %s", resp[0].body)
	}

	t.Run("replay", func(t *testing.T) {
		replay, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, signed.URL.String(), strings.NewReader(click))
		replay.Header = signed.Header.Clone()
		if status, _ := do(t, replay); status != http.StatusUnauthorized {
			t.Errorf("replayed click: %d, want 401", status)
		}
		unchanged(t, ls.Server, after, len(evs))
		if n := len(responses.got()); n != 1 {
			t.Errorf("the replay posted a response (%d in all)", n)
		}
	})

	t.Run("the other button, later", func(t *testing.T) {
		late := slackClick(buttons[1], responses.URL+"/actions/T1/2/y")
		if status, _ := postSlack(t, ls.URL, late, slackSecret, clk.Now()); status != http.StatusOK {
			t.Fatalf("status %d", status)
		}
		unchanged(t, ls.Server, after, len(evs))
		testserver.Eventually(t, "the reply", func() bool { return len(responses.got()) == 2 })
		if body := string(responses.got()[1].body); !strings.Contains(body, "Answered by alice via Slack (user U123/bob): Monday.") {
			t.Errorf("reply to a click on a settled ask: %s", body)
		}
	})
}

func mustRequest(t *testing.T, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}
