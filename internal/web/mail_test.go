package web_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/mailtest"
	"github.com/askd-dev/askd/internal/tell"
)

// An emailed answer link (SPEC §16) opened in Chromium: the mail, sent
// through a real SMTP server and read by Python's email package, links
// bob's Friday; fetched as a mail scanner does (GET, no button) it changes
// nothing; opened in the browser it shows the confirm page, whose button
// answers as bob; the same link again shows it answered and changes
// nothing.
func TestEmailedLinkInChromium(t *testing.T) {
	t.Parallel()
	ms := mailtest.Start(t, mailtest.Options{StartTLS: true})
	srv := startServer(t, app.Config{Mail: true, Backoff: func(int) time.Duration { return 20 * time.Millisecond }})
	server, err := tell.ParseSMTP(ms.URL())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := tell.New(srv.App, tell.Options{Timeout: 5 * time.Second, Tick: 50 * time.Millisecond, PublicURL: srv.URL, LinkBase: srv.URL,
		Mail: &tell.Mail{Server: server, From: "askd@inbox.test", RootCAs: ms.Roots()}})
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	bob := srv.TokenWith(t, app.TokenSpec{Name: "bob", Role: askd.RoleHuman, Access: askd.AccessApprover})
	addr := "bob@example.com"
	if _, err := client.New(srv.URL, bob).SetMyNotify(t.Context(), askd.PersonNotify{Email: &addr}); err != nil {
		t.Fatal(err)
	}
	a, err := srv.Agent("release").Create(t.Context(), &askd.AskInput{Kind: askd.KindDecision, Title: "Ship on which day?",
		Options: []askd.Option{{Label: "Monday"}, {Label: "Friday"}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	m := ms.WaitTo(t, addr, 1)[0]
	friday := regexp.MustCompile(`(?m)^  Friday: (` + regexp.QuoteMeta(srv.URL) + `/a/[a-z2-7]{26})\r?$`).FindStringSubmatch(m.Part(t, "text/plain").Text)
	if friday == nil {
		t.Fatalf("no Friday link in the mail: %q", m.Part(t, "text/plain").Text)
	}
	link := friday[1]
	found := false
	for _, href := range m.Part(t, "text/html").Hrefs {
		found = found || href == link
	}
	if !found {
		t.Fatalf("the HTML part does not link %s: %q", link, m.Part(t, "text/html").Hrefs)
	}

	pending := func(what string) {
		t.Helper()
		got, err := srv.Human().Show(t.Context(), a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != askd.StatusPending || len(got.History) != 1 {
			t.Fatalf("after %s: %s, %d events; want pending as created", what, got.Status, len(got.History))
		}
	}
	// A scanner fetches the link, twice.
	for range 2 {
		resp, err := http.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	pending("a scanner's GETs")

	p := newTab(t, srv)
	p.do(chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("form button")))
	pending("opening the link in the browser")
	if got := p.text("form button"); got != "Friday" {
		t.Errorf("the confirm button says %q", got)
	}
	// The button POSTs the form: wait for the page it navigates to.
	step, stop := p.step()
	resp, err := chromedp.RunResponse(step, chromedp.Click(chromedp.CSS("form button")))
	stop()
	if err != nil || resp.Status != http.StatusOK {
		t.Fatalf("the button: %v %v", resp, err)
	}
	p.waitFor(`document.body.textContent.includes('Answered by bob via link')`)
	answered, err := srv.Human().Show(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if answered.Status != askd.StatusAnswered || answered.Answer.Answer != "Friday" || answered.SettledBy != "bob" {
		t.Fatalf("after the button: %+v", answered.Ask)
	}

	// The same link again: it says so, offers no button, changes nothing.
	p.do(chromedp.Navigate(link))
	p.waitFor(`document.readyState === 'complete' && document.body.textContent.includes('Answered by bob via link')`)
	if eval[bool](p, `document.querySelector('form button') !== null`) {
		t.Error("the used link offers its button again")
	}
	again, err := srv.Human().Show(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Status != askd.StatusAnswered || again.SettledBy != "bob" || len(again.History) != len(answered.History) {
		t.Errorf("the link opened again changed the ask: %+v, %d events (was %d)", again.Ask, len(again.History), len(answered.History))
	}
}
