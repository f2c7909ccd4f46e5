package tell_test

import (
	"fmt"
	"net/http"
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

// Email's faults and attacks (SPEC §16), against the real SMTP server.

// mailDelivery reads the delivery mailing person about a.
func mailDelivery(t *testing.T, srv *testserver.Server, a *askd.Ask, person string) *askd.Delivery {
	t.Helper()
	var d *askd.Delivery
	if err := srv.Store.View(t.Context(), func(tx askd.Tx) (err error) {
		d, err = tx.Deliveries.Delivery(t.Context(), askd.PersonNotifyKey(a, person, askd.NotifyEmail))
		return err
	}); err != nil {
		t.Fatalf("alice's mail delivery: %v", err)
	}
	return d
}

func decision(t *testing.T, srv *testserver.Server, title string) *askd.Ask {
	t.Helper()
	a, err := srv.Agent("deploys").Create(t.Context(), &askd.AskInput{Kind: askd.KindDecision, Title: title,
		Options: []askd.Option{{Label: "Yes"}, {Label: "No"}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The SMTP server is down when the ask comes: the mail is retried with
// backoff, and arrives once the server is up, once.
func TestMailServerDownThenUp(t *testing.T) {
	port := mailtest.FreePort(t)
	cert := mailtest.SelfSigned(t)
	ma := startMail(t, fmt.Sprintf("smtp://127.0.0.1:%d", port), tell.Mail{RootCAs: cert.Pool}, app.Config{TellAttempts: 1000},
		map[string]string{"alice": "alice@example.com"})
	a := decision(t, ma.Server, "Deploy?")
	testserver.Eventually(t, "two failed attempts", func() bool {
		d := mailDelivery(t, ma.Server, a, "alice")
		return d.Attempts >= 2 && d.Status == askd.DeliveryPending && strings.Contains(d.LastError, "connection refused")
	})
	ms := mailtest.Start(t, mailtest.Options{Port: port, StartTLS: true, Cert: cert})
	got := ms.WaitTo(t, "alice@example.com", 1)
	ma.idle(t)
	ms.Sync(t)
	if n := len(ms.To("alice@example.com")); n != 1 || !got[0].TLS {
		t.Errorf("%d mails (TLS %v), want one", n, got[0].TLS)
	}
	if d := mailDelivery(t, ma.Server, a, "alice"); d.Status != askd.DeliverySent {
		t.Errorf("delivery %+v, want sent", d)
	}
}

// A recipient the server refuses (550) is logged and given up at once;
// everyone else gets theirs.
func TestMailRefusedRecipient(t *testing.T) {
	ms := mailtest.Start(t, mailtest.Options{SMTPS: true, Refuse: []string{"bob@example.com"}})
	ma := startMail(t, ms.URL(), tell.Mail{RootCAs: ms.Roots()}, app.Config{},
		map[string]string{"alice": "alice@example.com", "bob": "bob@example.com", "carol": "carol@example.com"})
	a := decision(t, ma.Server, "Deploy?")
	ms.WaitTo(t, "alice@example.com", 1)
	ms.WaitTo(t, "carol@example.com", 1)
	ma.idle(t)
	ms.Sync(t)
	d := mailDelivery(t, ma.Server, a, "bob")
	if d.Status != askd.DeliveryFailed || d.Attempts != 1 || !strings.Contains(d.LastError, "550") {
		t.Errorf("bob's delivery %+v; want failed after one attempt, with the server's reply", d)
	}
	if log := ma.log.String(); !strings.Contains(log, "bob@example.com") || !strings.Contains(log, "550") {
		t.Errorf("the refusal is not logged:\n%s", log)
	}
	if len(ms.To("bob@example.com")) != 0 {
		t.Error("a refused recipient got a mail")
	}
}

// A server slow to take a message holds that mail, not the person's other
// channels: alice's ntfy notification comes while her mail is held.
func TestMailSlowServerHoldsNothingElse(t *testing.T) {
	ms := mailtest.Start(t, mailtest.Options{StartTLS: true, HoldData: true})
	// alice's ntfy topic is on loopback: the destination guard lets it.
	ma := startMail(t, ms.URL(), tell.Mail{RootCAs: ms.Roots()}, app.Config{WebhookAllow: loopback}, map[string]string{"alice": "alice@example.com"})
	ntfy := newReceiver(t, nil)
	addr := "alice@example.com"
	if _, err := client.New(ma.URL, ma.HumanToken).SetMyNotify(t.Context(), askd.PersonNotify{Ntfy: ntfy.URL, Email: &addr}); err != nil {
		t.Fatal(err)
	}
	decision(t, ma.Server, "Deploy?")
	ms.Wait(t, "the message held", func(evs []mailtest.Event) bool {
		for _, e := range evs {
			if e.Event == "held" {
				return true
			}
		}
		return false
	})
	testserver.Eventually(t, "the ntfy notification while the mail is held", func() bool { return len(ntfy.got()) == 1 })
	if len(ms.Messages()) != 0 {
		t.Fatal("the mail arrived before it was released")
	}
	ms.Release(t)
	ms.WaitTo(t, "alice@example.com", 1)
}

// Where askd must not send in the clear, or cannot verify the server,
// nothing is sent — not AUTH, not the message — and the log says why.
func TestMailRefusesInsecureServers(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts mailtest.Options
		mail tell.Mail
		log  string
	}{
		{name: "no STARTTLS, a user set", opts: mailtest.Options{User: "askd", Password: "s3cret-pass", AuthInClear: true},
			mail: tell.Mail{User: "askd", Password: "s3cret-pass", Insecure: true}, log: "offers no STARTTLS, and askd authenticates (--notify-smtp-user) only over TLS"},
		{name: "no STARTTLS", opts: mailtest.Options{},
			mail: tell.Mail{}, log: "offers no STARTTLS, and askd sends mail only over TLS"},
		{name: "a certificate not trusted", opts: mailtest.Options{StartTLS: true, User: "askd", Password: "s3cret-pass"},
			mail: tell.Mail{User: "askd", Password: "s3cret-pass"}, log: "certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms := mailtest.Start(t, tc.opts)
			ma := startMail(t, ms.URL(), tc.mail, app.Config{TellAttempts: 2}, map[string]string{"alice": "alice@example.com"})
			a := decision(t, ma.Server, "Deploy?")
			testserver.Eventually(t, "the delivery to fail", func() bool {
				return mailDelivery(t, ma.Server, a, "alice").Status == askd.DeliveryFailed
			})
			for _, e := range ms.Events() {
				if e.Event == "auth" || e.Event == "mail" || e.Event == "message" {
					t.Errorf("the server saw %s (TLS %v)", e.Event, e.TLS)
				}
			}
			if log := ma.log.String(); !strings.Contains(log, tc.log) || strings.Contains(log, "s3cret-pass") {
				t.Errorf("log (want %q, and no password):\n%s", tc.log, log)
			}
		})
	}
}

// An address that is not one mailbox — a line break and a second command,
// a second address — never reaches the server, even written into the
// store by hand past PUT /api/me/notify's check: the delivery is given up,
// and nobody else is mailed. A question's line breaks stay out of the
// Subject.
func TestMailHeaderInjection(t *testing.T) {
	ms := mailtest.Start(t, mailtest.Options{StartTLS: true})
	ma := startMail(t, ms.URL(), tell.Mail{RootCAs: ms.Roots()}, app.Config{}, map[string]string{"alice": "alice@example.com"})
	bobToken := ma.TokenWith(t, app.TokenSpec{Name: "bob", Role: askd.RoleHuman, Access: askd.AccessApprover})
	bad := "bob@example.com>\r\nRCPT TO:<eve@example.com"
	status, body := putNotify(t, ma.URL, bobToken, `{"email": "bob@example.com\r\nBcc: eve@example.com"}`)
	if status != http.StatusBadRequest || !strings.Contains(body, "email: ") {
		t.Fatalf("PUT an address with a line break = %d %s", status, body)
	}
	for i, addr := range []string{bad, "bob@example.com, eve@example.com"} {
		if err := ma.Store.Update(t.Context(), func(tx askd.Tx) error {
			return tx.Teams.SetNotify(t.Context(), &askd.PersonNotify{Person: "bob", Email: &addr})
		}); err != nil {
			t.Fatal(err)
		}
		a, err := ma.Agent("deploys").Create(t.Context(), &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{{
			Question: fmt.Sprintf("Ship %d?\r\nBcc: eve@example.com\r\nX-Injected: yes", i), Header: "Ship",
			Options: []askd.Option{{Label: "Yes"}, {Label: "No"}}}}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		testserver.Eventually(t, "bob's delivery to fail", func() bool {
			return mailDelivery(t, ma.Server, a, "bob").Status == askd.DeliveryFailed
		})
		ma.idle(t)
		ms.Sync(t)
		for _, m := range ms.Messages() {
			if len(m.RcptTos) != 1 || m.RcptTos[0] != "alice@example.com" {
				t.Errorf("a mail to %q", m.RcptTos)
			}
			if m.Header(t, "bcc") != "" || m.Header(t, "x-injected") != "" || strings.ContainsAny(m.Header(t, "subject"), "\r\n") {
				t.Errorf("injected headers: %q", m.Headers)
			}
		}
	}
	if got := ms.WaitTo(t, "alice@example.com", 2)[0].Header(t, "subject"); got != "Ship 0?  Bcc: eve@example[.]com  X-Injected: yes" {
		t.Errorf("Subject %q", got)
	}
}

// putNotify sends body to PUT /api/me/notify as token, as it is.
func putNotify(t *testing.T, base, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, base+"/api/me/notify", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	return do(t, req)
}

// A covered approval needing two: each mail says so; a viewer's has no
// answer link and says why. alice approves by her mail's link: bob's
// follow-up, in his thread, carries the count and a new link; alice gets
// none. bob's link decides, and vic, who was mailed, hears who settled it.
func TestMailQuorumAndViewer(t *testing.T) {
	ms := mailtest.Start(t, mailtest.Options{SMTPS: true})
	ma := startMail(t, ms.URL(), tell.Mail{RootCAs: ms.Roots()}, app.Config{},
		map[string]string{"alice": "alice@example.com", "bob": "bob@example.com"})
	vic := ma.TokenWith(t, app.TokenSpec{Name: "vic", Role: askd.RoleHuman, Access: askd.AccessViewer})
	vicAddr := "vic@example.com"
	if _, err := client.New(ma.URL, vic).SetMyNotify(t.Context(), askd.PersonNotify{Email: &vicAddr}); err != nil {
		t.Fatal(err)
	}
	admin := askd.Caller{Name: ma.HumanName, Role: askd.RoleHuman, Access: askd.AccessAdmin}
	if _, err := ma.App.CreatePolicy(t.Context(), admin, &askd.PolicyInput{Match: askd.MatchTitle, Title: "Deploy", Approvals: 2}); err != nil {
		t.Fatal(err)
	}
	a, err := ma.Agent("deploys").Create(t.Context(), &askd.AskInput{Kind: askd.KindApproval, Title: "Deploy"}, 0)
	if err != nil || a.ApprovalsNeeded != 2 {
		t.Fatalf("create = %+v, %v", a, err)
	}
	first := map[string]*mailtest.Message{}
	links := map[string][]string{}
	for _, p := range []string{"alice", "bob", "vic"} {
		first[p] = ms.WaitTo(t, p+"@example.com", 1)[0]
		_, links[p] = checkOnlyAskdLinks(t, first[p], ma.URL)
		if text := first[p].Part(t, "text/plain").Text; !strings.Contains(text, "Needs 2 approvals.") {
			t.Errorf("%s's mail does not say it needs 2 approvals: %q", p, text)
		}
	}
	if len(links["alice"]) != 2 || len(links["bob"]) != 2 {
		t.Fatalf("approvers' links %q", links)
	}
	if len(links["vic"]) != 0 || !strings.Contains(first["vic"].Part(t, "text/html").HTMLText, "as a viewer") {
		t.Errorf("the viewer's mail: links %q, text %q", links["vic"], first["vic"].Part(t, "text/html").HTMLText)
	}
	if status, page := tap(t, links["alice"][0]); status != http.StatusOK || !strings.Contains(page, "1 of 2 approvals, by alice") {
		t.Fatalf("alice's link: %d %s", status, page)
	}
	follow := ms.WaitTo(t, "bob@example.com", 2)[1]
	_, again := checkOnlyAskdLinks(t, follow, ma.URL)
	if follow.Header(t, "in-reply-to") != first["bob"].Header(t, "message-id") || len(again) != 2 || again[0] == links["bob"][0] ||
		!strings.Contains(follow.Part(t, "text/plain").Text, "1 of 2 approvals, by alice; it needs 1 more.") {
		t.Fatalf("bob's follow-up: In-Reply-To %q, links %q, text %q", follow.Header(t, "in-reply-to"), again, follow.Part(t, "text/plain").Text)
	}
	if status, page := tap(t, again[0]); status != http.StatusOK || !strings.Contains(page, "Answered by bob via link") {
		t.Fatalf("bob's link: %d %s", status, page)
	}
	// vic was told of alice's approval (not asked for his), then that bob
	// settled it, in his thread.
	vics := ms.WaitTo(t, "vic@example.com", 3)
	if text := vics[1].Part(t, "text/plain").Text; !strings.Contains(text, "1 of 2 approvals, by alice") || strings.Contains(text, "yours is needed") {
		t.Errorf("vic's second mail: %q", text)
	}
	last := vics[2]
	if last.Header(t, "in-reply-to") != first["vic"].Header(t, "message-id") || !strings.Contains(last.Part(t, "text/plain").Text, "bob") {
		t.Errorf("vic's last mail: In-Reply-To %q, text %q", last.Header(t, "in-reply-to"), last.Part(t, "text/plain").Text)
	}
	ma.idle(t)
	ms.Sync(t)
	if n := len(ms.To("alice@example.com")); n != 2 {
		t.Errorf("alice got %d mails; want the first and that bob settled it", n)
	}
	if n := len(ms.To("bob@example.com")); n != 2 {
		t.Errorf("bob got %d mails; want the first and the count", n)
	}
	if n := len(ms.To("vic@example.com")); n != 3 {
		t.Errorf("vic got %d mails; want 3", n)
	}
}

// An ask routed to a team mails its members; escalated, it mails the
// escalation's target, whose mail says so and whose links answer as them.
func TestMailEscalation(t *testing.T) {
	ms := mailtest.Start(t, mailtest.Options{StartTLS: true})
	// The ask is made two minutes in the past, and falls due now: the
	// worker sends what is due by the wall clock.
	clk := &testserver.Clock{}
	clk.Skip(-2 * time.Minute)
	ma := startMail(t, ms.URL(), tell.Mail{RootCAs: ms.Roots()}, app.Config{Now: clk.Now},
		map[string]string{"alice": "alice@example.com", "bob": "bob@example.com", "carol": "carol@example.com"})
	if _, err := ma.App.CreateTeam(t.Context(), app.Itself, app.TeamInput{Name: "ops", Members: []string{"bob"},
		EscalateAfter: time.Minute, EscalateTo: "carol"}); err != nil {
		t.Fatal(err)
	}
	agent := client.New(ma.URL, ma.TokenWith(t, app.TokenSpec{Name: "deployer", Role: askd.RoleAgent, Owner: "team:ops"}))
	agent.Session = "deploys"
	a, err := agent.Create(t.Context(), &askd.AskInput{Kind: askd.KindDecision, Title: "Roll back?",
		Options: []askd.Option{{Label: "Yes"}, {Label: "No"}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ms.WaitTo(t, "bob@example.com", 1)
	ma.idle(t)
	ms.Sync(t)
	if n := len(ms.To("carol@example.com")) + len(ms.To("alice@example.com")); n != 0 {
		t.Fatalf("%d mails to people the ask is not routed to", n)
	}
	clk.Skip(2 * time.Minute)
	if n, err := ma.App.EscalateDue(t.Context()); err != nil || n != 1 {
		t.Fatalf("escalated %d, %v", n, err)
	}
	m := ms.WaitTo(t, "carol@example.com", 1)[0]
	text := m.Part(t, "text/plain").Text
	if !strings.HasPrefix(text, "Escalated to you: nobody took this decision from deploys in time.") {
		t.Errorf("carol's mail: %q", text)
	}
	_, links := checkOnlyAskdLinks(t, m, ma.URL)
	if len(links) != 2 {
		t.Fatalf("carol's links %q", links)
	}
	if status, page := tap(t, links[1]); status != http.StatusOK || !strings.Contains(page, "Answered by carol via link") {
		t.Fatalf("carol's link: %d %s", status, page)
	}
	if got, _ := stored(t, ma.Server, a.ID); got.SettledBy != "carol" || got.Answer.Answer != "No" {
		t.Errorf("after carol's link: %+v", got)
	}
	// bob, mailed first, hears carol settled it, in his thread.
	follow := ms.WaitTo(t, "bob@example.com", 2)[1]
	if !strings.Contains(follow.Part(t, "text/plain").Text, "carol") || follow.Header(t, "in-reply-to") == "" {
		t.Errorf("bob's follow-up: In-Reply-To %q, %q", follow.Header(t, "in-reply-to"), follow.Part(t, "text/plain").Text)
	}
}
