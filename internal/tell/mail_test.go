package tell_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/mailtest"
	"github.com/askd-dev/askd/internal/tell"
	"github.com/askd-dev/askd/internal/testserver"
)

// Email (SPEC §16) against a real SMTP server on loopback: Debian's
// aiosmtpd, each message read by Python's email package as a mail client
// reads it (internal/mailtest).

// mailAskd is askd mailing people through an SMTP server, with a worker
// whose log the test reads.
type mailAskd struct {
	*testserver.Server
	log    *testserver.SyncBuffer
	tokens map[string]string // each person's human token
}

// startMail starts askd mailing through the server at smtpURL with m (its
// Server set from smtpURL, From by default askd@inbox.test), and gives
// each person of addresses (alice is the test server's human; others are
// approvers made here) that address. cfg may set more.
func startMail(t *testing.T, smtpURL string, m tell.Mail, cfg app.Config, addresses map[string]string) *mailAskd {
	t.Helper()
	srv, err := tell.ParseSMTP(smtpURL)
	if err != nil {
		t.Fatal(err)
	}
	m.Server = srv
	if m.From == "" {
		m.From = "askd@inbox.test"
	}
	cfg.Mail = true
	if cfg.Backoff == nil {
		cfg.Backoff = func(int) time.Duration { return 20 * time.Millisecond }
	}
	ma := &mailAskd{log: &testserver.SyncBuffer{}, tokens: map[string]string{}}
	ma.Server = testserver.Start(t, testserver.Options{Config: cfg})
	logger := slog.New(slog.NewTextHandler(ma.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	w := tell.New(ma.App, tell.Options{Timeout: 5 * time.Second, Tick: 50 * time.Millisecond,
		PublicURL: ma.URL, LinkBase: ma.URL, Mail: &m, Logger: logger})
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range addresses {
			if !yield(p) {
				return
			}
		}
	}) {
		tok := ma.HumanToken
		if p != ma.HumanName {
			tok = ma.TokenWith(t, app.TokenSpec{Name: p, Role: askd.RoleHuman, Access: askd.AccessApprover})
		}
		ma.tokens[p] = tok
		addr := addresses[p]
		if _, err := client.New(ma.URL, tok).SetMyNotify(t.Context(), askd.PersonNotify{Email: &addr}); err != nil {
			t.Fatal(err)
		}
	}
	return ma
}

// idle waits until the worker has sent or given up every delivery due.
func (ma *mailAskd) idle(t *testing.T) {
	t.Helper()
	testserver.Eventually(t, "every delivery done", func() bool {
		at, err := ma.App.NextDeliveryAt(t.Context())
		return err == nil && at.IsZero()
	})
}

// mailLinks are the links of a message's parts: every href of its HTML
// part, and every URL of its plain part.
var plainURL = regexp.MustCompile(`https?://\S+`)

// checkOnlyAskdLinks fails the test unless every link of m, in either part,
// is askd's (an answer link, the card, the unsubscribe link), and its HTML
// holds only the tags askd's template writes. It returns the answer links
// of the HTML part, and of the plain part, in order.
func checkOnlyAskdLinks(t *testing.T, m *mailtest.Message, base string) (htmlAnswers, plainAnswers []string) {
	t.Helper()
	own := regexp.MustCompile(`^` + regexp.QuoteMeta(base) + `/(a/[a-z2-7]{26}|\?ask=[0-9]+|unsubscribe/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$`)
	h := m.Part(t, "text/html")
	for _, href := range h.Hrefs {
		if !own.MatchString(href) {
			t.Errorf("HTML link %q is not askd's", href)
		}
		if strings.Contains(href, "/a/") {
			htmlAnswers = append(htmlAnswers, href)
		}
	}
	if len(h.URLs) > 0 {
		t.Errorf("HTML holds URLs outside links: %q", h.URLs)
	}
	for _, tag := range h.Tags {
		if !slices.Contains([]string{"html", "head", "meta", "body", "p", "div", "a"}, tag) {
			t.Errorf("HTML holds a <%s> tag: agent markup?", tag)
		}
	}
	p := m.Part(t, "text/plain")
	for _, u := range plainURL.FindAllString(p.Text, -1) {
		if !own.MatchString(u) {
			t.Errorf("plain link %q is not askd's", u)
		}
		if strings.Contains(u, "/a/") {
			plainAnswers = append(plainAnswers, u)
		}
	}
	// What a mail client would link in the text that is not askd's links.
	rest := plainURL.ReplaceAllString(p.Text, "")
	for _, l := range linksIn(rest) {
		t.Errorf("the plain part's text %q would be linked by a mail client", l)
	}
	for _, l := range linksIn(plainURL.ReplaceAllString(h.HTMLText, "")) {
		t.Errorf("the HTML part's text %q would be linked by a mail client", l)
	}
	for _, part := range m.Parts {
		if len(part.Defects) > 0 {
			t.Errorf("%s part defects: %q", part.Type, part.Defects)
		}
	}
	if len(m.Defects) > 0 {
		t.Errorf("message defects: %q", m.Defects)
	}
	return htmlAnswers, plainAnswers
}

// A decision routed to everyone mails alice and bob, each once and as
// themselves, over STARTTLS with authentication; a mail client reads
// headers and both parts, in which the agent's markup, links and header
// tricks are text; each answer link opens the confirm page. bob answers
// by his link: alice's follow-up is in the same thread, with no links to
// answer; bob gets none. alice's one-click unsubscribe records her choice
// of none; opening the link changes nothing.
func TestMailReadByAMailClient(t *testing.T) {
	ms := mailtest.Start(t, mailtest.Options{StartTLS: true, User: "askd", Password: "s3cret-pass"})
	ma := startMail(t, ms.URL(), tell.Mail{RootCAs: ms.Roots(), User: "askd", Password: "s3cret-pass"}, app.Config{},
		map[string]string{"alice": "alice@example.com", "bob": "bob@example.com"})
	title := `Ship <b>it</b> to evil.example.com/x? =?utf-8?q?Bcc=3A_eve@example.com?= é`
	a, err := ma.Agent("deploys").Create(t.Context(), &askd.AskInput{Kind: askd.KindDecision, Title: title,
		Details: "See <a href=\"https://evil.example.com/login\">this</a> and http://10.0.0.1/x\r\nBcc: eve@example.com",
		Options: []askd.Option{{Label: "Ship"}, {Label: "Wait <script>alert(1)</script>"}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	alice := ms.WaitTo(t, "alice@example.com", 1)[0]
	bob := ms.WaitTo(t, "bob@example.com", 1)[0]
	if !alice.TLS || alice.Auth != "askd" || alice.MailFrom != "askd@inbox.test" || len(alice.RcptTos) != 1 {
		t.Errorf("alice's mail: tls %v, auth %q, from %q, to %q; want over TLS, authenticated, to her only", alice.TLS, alice.Auth, alice.MailFrom, alice.RcptTos)
	}
	for _, e := range ms.Events() {
		if e.Event == "auth" && !e.TLS {
			t.Errorf("AUTH sent in the clear")
		}
	}
	// The title, defanged; the encoded word in it is text, not decoded.
	shownTitle := `Ship <b>it</b> to evil[.]example[.]com/x? =?utf-8?q?Bcc=3A_eve@example[.]com?= é`
	if got := alice.Header(t, "subject"); got != shownTitle {
		t.Errorf("Subject %q, want the title shown: %q", got, shownTitle)
	}
	if got := alice.Header(t, "to"); got != "alice@example.com" {
		t.Errorf("To %q", got)
	}
	if got := alice.Header(t, "from"); got != "askd <askd@inbox.test>" {
		t.Errorf("From %q", got)
	}
	if alice.Header(t, "bcc") != "" || alice.Header(t, "cc") != "" {
		t.Errorf("a Bcc or Cc header: %q", alice.Headers)
	}
	aliceID := alice.Header(t, "message-id")
	if aliceID == "" || aliceID == bob.Header(t, "message-id") || alice.Header(t, "in-reply-to") != "" {
		t.Errorf("Message-IDs %q and %q; want one of each person's, no In-Reply-To on the first", aliceID, bob.Header(t, "message-id"))
	}
	if got := alice.Header(t, "list-unsubscribe-post"); got != "List-Unsubscribe=One-Click" {
		t.Errorf("List-Unsubscribe-Post %q", got)
	}
	if alice.ContentType != "multipart/alternative" {
		t.Errorf("Content-Type %s", alice.ContentType)
	}
	htmlLinks, plainLinks := checkOnlyAskdLinks(t, alice, ma.URL)
	if len(htmlLinks) != 2 || !slices.Equal(htmlLinks, plainLinks) {
		t.Fatalf("answer links: HTML %q, plain %q; want the same two in both", htmlLinks, plainLinks)
	}
	html := alice.Part(t, "text/html")
	for _, want := range []string{"Ship <b>it</b>", "<script>alert(1)</script>", "evil[.]example[.]com", "Bcc: eve@example[.]com"} {
		if !strings.Contains(html.HTMLText, want) {
			t.Errorf("the HTML part's text lacks %q as text: %q", want, html.HTMLText)
		}
	}
	if !strings.Contains(alice.Part(t, "text/plain").Text, "Wait <script>alert(1)</script>: "+ma.URL+"/a/") {
		t.Errorf("the plain part does not label its links: %q", alice.Part(t, "text/plain").Text)
	}

	// Opening a link (a scanner, a preview) shows the confirm page and
	// answers nothing.
	before, hist := stored(t, ma.Server, a.ID)
	if status, page, _ := open(t, http.MethodGet, htmlLinks[0]); status != http.StatusOK || !strings.Contains(page, "<form") {
		t.Fatalf("GET answer link = %d %s", status, page)
	}
	unchanged(t, ma.Server, before, len(hist))

	// bob answers Ship by his link's button.
	_, bobLinks := checkOnlyAskdLinks(t, bob, ma.URL)
	if status, page := tap(t, bobLinks[0]); status != http.StatusOK || !strings.Contains(page, "Answered by bob via link") {
		t.Fatalf("bob's link: %d %s", status, page)
	}
	after, _ := stored(t, ma.Server, a.ID)
	if after.Status != askd.StatusAnswered || after.Answer.Answer != "Ship" || after.SettledBy != "bob" {
		t.Fatalf("after bob's link: %+v", after)
	}
	follow := ms.WaitTo(t, "alice@example.com", 2)[1]
	if got := follow.Header(t, "in-reply-to"); got != aliceID || !strings.Contains(follow.Header(t, "references"), aliceID) {
		t.Errorf("follow-up In-Reply-To %q, References %q; want %q", got, follow.Header(t, "references"), aliceID)
	}
	if got := follow.Header(t, "subject"); got != "Re: "+shownTitle {
		t.Errorf("follow-up Subject %q", got)
	}
	if h, p := checkOnlyAskdLinks(t, follow, ma.URL); len(h)+len(p) != 0 {
		t.Errorf("the follow-up about a settled ask has answer links: %q %q", h, p)
	}
	if !strings.Contains(follow.Part(t, "text/plain").Text, "bob") {
		t.Errorf("the follow-up does not say who settled it: %q", follow.Part(t, "text/plain").Text)
	}
	ma.idle(t)
	ms.Sync(t)
	if n := len(ms.To("bob@example.com")); n != 1 {
		t.Errorf("bob, who answered, got %d mails; want only the first", n)
	}
	if n := len(ms.To("alice@example.com")); n != 2 {
		t.Errorf("alice got %d mails; want 2", n)
	}

	// alice's unsubscribe link: opened, it changes nothing; the one-click
	// POST a mail client sends records her choice of none.
	unsub := strings.Trim(alice.Header(t, "list-unsubscribe"), "<>")
	if status, page, _ := open(t, http.MethodGet, unsub); status != http.StatusOK || !strings.Contains(page, "alice") {
		t.Fatalf("GET unsubscribe = %d %s", status, page)
	}
	if n := notifyOf(t, ma.Server, "alice"); n.MailTo() != "alice@example.com" {
		t.Fatalf("opening the unsubscribe link changed alice's address: %+v", n)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, unsub, strings.NewReader("List-Unsubscribe=One-Click"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if status, page := do(t, req); status != http.StatusOK {
		t.Fatalf("one-click unsubscribe = %d %s", status, page)
	}
	if n := notifyOf(t, ma.Server, "alice"); n.Email == nil || *n.Email != "" {
		t.Fatalf("after unsubscribing alice's setting is %+v; want a choice of none", n)
	}
	// A tampered link is unknown and changes nothing for bob.
	tampered := strings.Replace(unsub, "/unsubscribe/", "/unsubscribe/"+url.PathEscape("Ym9i")+".", 1)
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodPost, tampered, strings.NewReader("List-Unsubscribe=One-Click"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if status, _ := do(t, req); status != http.StatusNotFound {
		t.Errorf("a tampered unsubscribe link = %d, want 404", status)
	}
	if n := notifyOf(t, ma.Server, "bob"); n.MailTo() != "bob@example.com" {
		t.Errorf("bob's address after a tampered link: %+v", n)
	}
	if _, err := ma.Agent("deploys").Create(t.Context(), &askd.AskInput{Kind: askd.KindDecision, Title: "Again?",
		Options: []askd.Option{{Label: "Yes"}, {Label: "No"}}}, 0); err != nil {
		t.Fatal(err)
	}
	ms.WaitTo(t, "bob@example.com", 2)
	ma.idle(t)
	ms.Sync(t)
	if n := len(ms.To("alice@example.com")); n != 2 {
		t.Errorf("alice got %d mails after unsubscribing; want none more", n)
	}
	if strings.Contains(ma.log.String(), "s3cret-pass") {
		t.Errorf("the log holds the SMTP password")
	}
}

// notifyOf reads person's notification setting from the store.
func notifyOf(t *testing.T, srv *testserver.Server, person string) *askd.PersonNotify {
	t.Helper()
	var n *askd.PersonNotify
	if err := srv.Store.View(t.Context(), func(tx askd.Tx) (err error) {
		n, err = tx.Teams.Notify(t.Context(), person)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return n
}
