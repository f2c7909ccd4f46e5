package tell_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/tell"
	"github.com/askd-dev/askd/internal/testserver"
)

// Agent text on every notification channel (docs/security.md, "Agent text
// on notification channels"): each test below has askd notify a receiver
// standing in for ntfy, Slack, a browser's push service or a webhook, reads
// what arrived the way that receiver does (receivers_test.go), and checks
// the buttons, links and title a person gets are exactly askd's.

// channels is askd notifying an ntfy topic, a Slack webhook, a webhook and
// alice's browser (Web Push), with answer buttons answering as alice.
type channels struct {
	*testserver.Server
	ntfy, slack, webhook, push *receiver
	browser                    *browserKeys
}

func startChannels(t testing.TB) *channels {
	t.Helper()
	c := &channels{ntfy: newReceiver(t, nil), slack: newReceiver(t, nil), webhook: newReceiver(t, nil),
		push: newReceiver(t, func(int) int { return http.StatusCreated }), browser: newBrowserKeys(t)}
	cfg := app.Config{NotifyAs: "alice", WebhookAllow: loopback, Backoff: func(int) time.Duration { return 20 * time.Millisecond },
		Notifiers: []askd.Channel{{Type: askd.NotifyNtfy, URL: c.ntfy.URL}, {Type: askd.NotifySlack, URL: c.slack.URL},
			{Type: askd.NotifyWebhook, URL: c.webhook.URL}, {Type: askd.NotifyPush}}}
	c.Server = testserver.Start(t, testserver.Options{Config: cfg})
	sub, _ := json.Marshal(c.browser.subscription(c.push.URL + "/push/alice"))
	req, _ := http.NewRequest(http.MethodPost, c.URL+"/api/push/subscriptions", strings.NewReader(string(sub)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", c.URL)
	req.AddCookie(c.BrowserCookie(t, "alice"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("subscribe alice's browser: %v %v", err, resp)
	}
	resp.Body.Close()
	ctx, cancel := context.WithCancel(context.Background())
	w := tell.New(c.App, tell.Options{Timeout: 5 * time.Second, Tick: 50 * time.Millisecond, PublicURL: c.URL, LinkBase: c.URL})
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return c
}

// arrived waits for the request to r that match says is ask id's and
// returns it.
func arrived(t *testing.T, r *receiver, what string, id int64, match func(received) (int64, bool)) received {
	t.Helper()
	var got received
	testserver.Eventually(t, what, func() bool {
		for _, g := range r.got() {
			if n, ok := match(g); ok && n == id {
				got = g
				return true
			}
		}
		return false
	})
	return got
}

func (c *channels) ntfyOf(t *testing.T, id int64) ntfyNote {
	t.Helper()
	got := arrived(t, c.ntfy, "the ntfy notification", id, func(r received) (int64, bool) {
		_, n, ok := strings.Cut(r.header.Get("Click"), "/?ask=")
		var i int64
		_, err := fmt.Sscan(n, &i)
		return i, ok && err == nil
	})
	n, err := readNtfy(got)
	if err != nil {
		t.Fatalf("ntfy would refuse askd's notification: %v", err)
	}
	return n
}

func (c *channels) slackOf(t *testing.T, id int64) slackNote {
	t.Helper()
	got := arrived(t, c.slack, "the Slack message", id, func(r received) (int64, bool) {
		_, rest, ok := strings.Cut(string(r.body), `"block_id":"askd-`)
		var i int64
		_, err := fmt.Sscanf(rest, "%d", &i)
		return i, ok && err == nil
	})
	n, err := readSlack(got.body)
	if err != nil {
		t.Fatalf("Slack message %s: %v", got.body, err)
	}
	return n
}

func (c *channels) pushOf(t *testing.T, id int64) pushNote {
	t.Helper()
	var payload []byte
	arrived(t, c.push, "the push notification", id, func(r received) (int64, bool) {
		payload = c.browser.decrypt(t, r.body)
		var m tell.PushMessage
		err := json.Unmarshal(payload, &m)
		return m.AskID, err == nil
	})
	n, err := readPush(payload, c.URL)
	if err != nil {
		t.Fatalf("push payload %s: %v", payload, err)
	}
	return n
}

func (c *channels) webhookOf(t *testing.T, id int64) map[string]any {
	t.Helper()
	var m map[string]any
	arrived(t, c.webhook, "the webhook notification", id, func(r received) (int64, bool) {
		m = nil
		err := json.Unmarshal(r.body, &m)
		n, _ := m["id"].(float64)
		return int64(n), err == nil
	})
	return m
}

// agentTextCases are asks whose agent text tries to be more than text on
// some channel: RFC 2047 encoded words (ntfy decodes them in any header,
// inside quotes too, before it reads the actions), URLs, Slack's syntax,
// and labels full of what ntfy's simple action form reads.
var agentTextCases = []struct {
	name    string
	session string
	in      askd.AskInput
	title   string   // the notification's title on the phone (ntfy, push)
	shows   []string // what the message shows, among the rest
}{
	{
		name: "a Q-encoded label", session: "release",
		in: askd.AskInput{Kind: askd.KindDecision, Title: "Ship on which day?", Options: []askd.Option{
			{Label: "=?utf-8?q?Monday=22=2C_https://evil.example/x=3B_view=2C_=22Open?="}, {Label: "Friday"}}},
		title: "askd: decision from release",
		shows: []string{"• =?utf-8?q?Monday=22=2C_https[:]//evil[.]example/x=3B_view=2C_=22Open?=\n• Friday"},
	},
	{
		name: "a B-encoded label", session: "approvals",
		in: askd.AskInput{Kind: askd.KindDecision, Title: "Merge it?", Options: []askd.Option{
			{Label: "=?utf-8?b?" + base64.StdEncoding.EncodeToString([]byte(`Approve", https://evil.example/approve; view, "Reject`)) + "?="},
			{Label: "Reject"}}},
		title: "askd: decision from approvals",
		shows: []string{"Merge it?"},
	},
	{
		name: "a Q-encoded session name", session: "=?utf-8?q?prod=E2=80=AE=E2=80=8Bdeploy=0Aapproved_by_alice?=",
		in: askd.AskInput{Kind: askd.KindDecision, Title: "Roll out?", Options: []askd.Option{
			{Label: "Monday"}, {Label: "Friday"}}},
		title: "askd: decision from =?utf-8?q?prod=E2=80=AE=E2=80=8Bdeploy=0Aapproved_by_alice?=",
		shows: []string{"Roll out?"},
	},
	{
		name: "URLs in the text", session: "links.example.com",
		in: askd.AskInput{Kind: askd.KindDecision, Title: "Deploy? Notes at https://evil.example/notes",
			Details: "mirror: http://203.0.113.9:8080/x, also evil.com and HTTPS://EVIL.EXAMPLE/Y.\nNot links: e.g. v1.2.3 costs 3.14",
			Options: []askd.Option{{Label: "Go", Description: "see www.evil.example"}, {Label: "Stop"}}},
		title: "askd: decision from links[.]example[.]com",
		shows: []string{"Deploy? Notes at https[:]//evil[.]example/notes", "• Go: see www[.]evil[.]example",
			"mirror: http[:]//203[.]0[.]113[.]9:8080/x, also evil[.]com and HTTPS[:]//EVIL[.]EXAMPLE/Y.\nNot links: e.g. v1.2.3 costs 3.14"},
	},
	{
		name: "Slack's syntax", session: "chat",
		in: askd.AskInput{Kind: askd.KindDecision, Title: "<!here> deploy now", Details: "<@U123> <https://evil.example|the inbox> & <#C42> <!channel>",
			Options: []askd.Option{{Label: "<!everyone>"}, {Label: "*bold* & <@U1>"}}},
		title: "askd: decision from chat",
		shows: []string{"<!here> deploy now", "<@U123> <https[:]//evil[.]example|the inbox> & <#C42> <!channel>"},
	},
	{
		name: "labels ntfy's simple form reads", session: "quoting",
		in: askd.AskInput{Kind: askd.KindDecision, Title: "Which?", Options: []askd.Option{
			{Label: "Yes, ship it"}, {Label: `say "hi"; it's=ok`}, {Label: `C:\`}}},
		title: "askd: decision from quoting",
		shows: []string{"Which?"},
	},
}

// labelsOf are the labels of in's options: its buttons, as they read.
func labelsOf(in askd.AskInput) []string {
	var out []string
	for _, o := range in.Options {
		out = append(out, o.Label)
	}
	return out
}

// ntfy: Title and Actions decode to exactly askd's; each button is an http
// action POSTing confirm=1 to an answer link; the message shows URLs as
// text no linkifier takes.
func TestNtfyShowsAgentTextAsText(t *testing.T) {
	c := startChannels(t)
	for _, tt := range agentTextCases {
		t.Run(tt.name, func(t *testing.T) {
			a, err := c.Agent(tt.session).Create(t.Context(), &tt.in, 0)
			if err != nil {
				t.Fatal(err)
			}
			n := c.ntfyOf(t, a.ID)
			if n.Title != tt.title {
				t.Errorf("Title %q, want %q", n.Title, tt.title)
			}
			if n.Click != c.URL+"/?ask="+itoa(a.ID) {
				t.Errorf("Click %q, want the ask in the inbox", n.Click)
			}
			var labels []string
			for _, b := range n.Actions {
				labels = append(labels, b.Label)
				if b.Action != "http" || b.Method != "POST" || !strings.HasPrefix(b.URL, c.URL+"/a/") || b.Body != "confirm=1" ||
					b.Headers["Content-Type"] != "application/x-www-form-urlencoded" || !b.Clear {
					t.Errorf("button %q: %+v, want an http POST of confirm=1 to an answer link", b.Label, b)
				}
			}
			if want := labelsOf(tt.in); !slices.Equal(labels, want) {
				t.Errorf("buttons %q, want %q", labels, want)
			}
			for _, s := range tt.shows {
				if !strings.Contains(n.Message, s) {
					t.Errorf("message %q does not show %q", n.Message, s)
				}
			}
			if links := linksIn(n.Title + "\n" + n.Message); len(links) > 0 {
				t.Errorf("the app links %q in title %q and message %q", links, n.Title, n.Message)
			}
		})
	}

	// Under 2,000 characters but over ntfy's 4,096 bytes: cut to fit (ntfy
	// would take more as an attachment, or refuse it), so without buttons.
	t.Run("a message over ntfy's size", func(t *testing.T) {
		a, err := c.Agent("long").Create(t.Context(), &askd.AskInput{Kind: askd.KindDecision, Title: "Which?",
			Details: strings.Repeat("日本語", 600), Options: []askd.Option{{Label: "A"}, {Label: "B"}}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := c.ntfyOf(t, a.ID) // fails when ntfy would not take it as a message
		if len(n.Actions) != 0 || !strings.HasSuffix(n.Message, "日…") {
			t.Errorf("%d buttons, message ending %q; want none, cut", len(n.Actions), n.Message[len(n.Message)-12:])
		}
	})
}

// Slack: no mention or command; the only links and link buttons are askd's
// (answer links, the inbox); the message's text objects are verbatim, and
// its fallback text shows URLs as text no linkifier takes.
func TestSlackShowsAgentTextAsText(t *testing.T) {
	c := startChannels(t)
	for _, tt := range agentTextCases {
		t.Run(tt.name, func(t *testing.T) {
			a, err := c.Agent(tt.session).Create(t.Context(), &tt.in, 0)
			if err != nil {
				t.Fatal(err)
			}
			n := c.slackOf(t, a.ID)
			if len(n.Mentions) > 0 {
				t.Errorf("Slack reads mentions %q", n.Mentions)
			}
			for _, l := range n.Links {
				if !strings.HasPrefix(l, c.URL+"/a/") && l != c.URL+"/?ask="+itoa(a.ID) {
					t.Errorf("Slack links %q, not askd's", l)
				}
			}
			var labels []string
			for _, b := range n.Buttons {
				if b.ActionID != "askd-open" {
					labels = append(labels, b.Text.Text)
				}
			}
			want := labelsOf(tt.in)
			for i, l := range want {
				if r := []rune(l); len(r) > 75 {
					want[i] = string(r[:74]) + "…" // Slack's longest button text
				}
			}
			if !slices.Equal(labels, want) {
				t.Errorf("buttons %q, want %q", labels, want)
			}
			shown := strings.Join(n.Texts, "\n")
			for _, s := range append([]string{strings.ReplaceAll(tt.title, "askd: ", "")}, tt.shows...) {
				if !strings.Contains(shown, s) {
					t.Errorf("Slack shows %q, not %q", shown, s)
				}
			}
		})
	}
}

// Web Push: the service worker's title is the headline, with nothing
// invisible; its actions are the labels, each POSTing to an answer link on
// askd's origin; the body shows URLs as text no linkifier takes (desktop
// notification servers link URLs in a body).
func TestPushShowsAgentTextAsText(t *testing.T) {
	c := startChannels(t)
	for _, tt := range agentTextCases {
		t.Run(tt.name, func(t *testing.T) {
			a, err := c.Agent(tt.session).Create(t.Context(), &tt.in, 0)
			if err != nil {
				t.Fatal(err)
			}
			n := c.pushOf(t, a.ID)
			if n.Title != tt.title || unprintableIn(n.Title) != "" {
				t.Errorf("title %q, want %q", n.Title, tt.title)
			}
			if n.Open != c.URL+"/?ask="+itoa(a.ID) {
				t.Errorf("the notification opens %q, want the ask in the inbox", n.Open)
			}
			var labels []string
			for _, b := range n.Actions {
				labels = append(labels, b.Title)
				if !strings.HasPrefix(b.Target, c.URL+"/a/") {
					t.Errorf("action %q posts to %q, not an answer link", b.Title, b.Target)
				}
			}
			want := labelsOf(tt.in)
			if len(want) > 2 {
				want = nil // browsers show two actions: all answers or none
			}
			if !slices.Equal(labels, want) {
				t.Errorf("actions %q, want %q", labels, want)
			}
			if links := linksIn(n.Title + "\n" + n.Body); len(links) > 0 {
				t.Errorf("links %q in title %q and body %q", links, n.Title, n.Body)
			}
			for _, s := range tt.shows {
				if !strings.Contains(n.Body, s) {
					t.Errorf("body %q does not show %q", n.Body, s)
				}
			}
		})
	}
}

// Webhook notifications are data for a program: the JSON has askd's fields
// and no other, the link is askd's, and the agent's words arrive exactly as
// the agent wrote them, whatever they hold.
func TestWebhookNotificationCarriesAgentTextAsData(t *testing.T) {
	c := startChannels(t)
	for _, tt := range agentTextCases {
		t.Run(tt.name, func(t *testing.T) {
			a, err := c.Agent(tt.session).Create(t.Context(), &tt.in, 0)
			if err != nil {
				t.Fatal(err)
			}
			checkWebhook(t, c, c.webhookOf(t, a.ID), a.ID, tt.session, c.AgentName, tt.in.Title)
		})
	}
}

// checkWebhook checks a webhook notification of ask id.
func checkWebhook(t *testing.T, c *channels, m map[string]any, id int64, session, agent, title string) {
	t.Helper()
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if got := strings.Join(keys, ","); got != "agent,created_at,event,id,kind,link,revision,session,title" {
		t.Errorf("webhook fields %s", got)
	}
	if m["session"] != session || m["agent"] != agent || m["title"] != title || m["link"] != c.URL+"/?ask="+itoa(id) ||
		m["event"] != "ask.created" || m["kind"] != "decision" {
		t.Errorf("webhook notification %v", m)
	}
}

// FuzzNotifyAgentText has an agent ask with fuzzed title, details, labels,
// session and agent names, and checks every channel as its receiver reads
// it: the only action and link targets are askd's own URLs; titles hold no
// control, bidi or zero-width character; no URL survives where a receiver
// would link it; webhooks get the words exactly. Inputs askd refuses
// (SPEC §7) are skipped.
func FuzzNotifyAgentText(f *testing.F) {
	for _, tt := range agentTextCases {
		f.Add(tt.in.Title, tt.in.Details, tt.in.Options[0].Label, tt.in.Options[1].Label, tt.session, "agent")
	}
	f.Add("https://evil.example/x", "see http://evil.example and 192.0.2.1", "evil.com", "évil.рф", "x.dev", "agent.evil.com")
	c := startChannels(f)
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, title, details, label1, label2, session, agent string) {
		name := fmt.Sprintf("%s %d", agent, n.Add(1))
		if askd.ValidName("agent", name) != nil || askd.ValidName("session", session) != nil {
			return
		}
		agentClient := c.Agent(session)
		agentClient.Token = c.Token(t, name, askd.RoleAgent)
		in := askd.AskInput{Kind: askd.KindDecision, Title: title, Details: details, Options: []askd.Option{{Label: label1}, {Label: label2}}}
		a, err := agentClient.Create(t.Context(), &in, 0)
		if err != nil {
			return // refused: nothing is sent
		}
		answerLink := func(u string) bool { return strings.HasPrefix(u, c.URL+"/a/") }
		inbox := c.URL + "/?ask=" + itoa(a.ID)
		// What askd stored: the words as sent (JSON has made bytes that are
		// not UTF-8 into U+FFFD).
		labels := []string{strings.TrimSpace(a.Options[0].Label), strings.TrimSpace(a.Options[1].Label)}

		nt := c.ntfyOf(t, a.ID)
		if bad := unprintableIn(nt.Title); bad != "" || !strings.HasPrefix(nt.Title, "askd: decision from ") {
			t.Errorf("ntfy Title %q (holds %s)", nt.Title, bad)
		}
		if links := linksIn(nt.Title + "\n" + nt.Message); len(links) > 0 || nt.Click != inbox {
			t.Errorf("ntfy links %q, Click %q", links, nt.Click)
		}
		for i, b := range nt.Actions {
			if b.Action != "http" || !answerLink(b.URL) || len(nt.Actions) != 2 || b.Label != labels[i] {
				t.Errorf("ntfy button %d %+v, want %q answering by link", i, b, labels[i])
			}
		}

		sl := c.slackOf(t, a.ID)
		if len(sl.Mentions) > 0 {
			t.Errorf("Slack mentions %q", sl.Mentions)
		}
		for _, l := range sl.Links {
			if !answerLink(l) && l != inbox {
				t.Errorf("Slack links %q", l)
			}
		}

		p := c.pushOf(t, a.ID)
		if bad := unprintableIn(p.Title); bad != "" {
			t.Errorf("push title %q holds %s", p.Title, bad)
		}
		if links := linksIn(p.Title + "\n" + p.Body); len(links) > 0 || p.Open != inbox {
			t.Errorf("push links %q, opens %q", links, p.Open)
		}
		for i, b := range p.Actions {
			if !answerLink(b.Target) || len(p.Actions) != 2 || b.Title != labels[i] {
				t.Errorf("push action %d %+v, want %q answering by link", i, b, labels[i])
			}
		}

		checkWebhook(t, c, c.webhookOf(t, a.ID), a.ID, a.Session, name, a.Title)
	})
}
