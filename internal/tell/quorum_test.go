package tell_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/tell"
	"github.com/askd-dev/askd/internal/testserver"
)

// quorumPeople is askd with a policy (approvals titled "Deploy" need three
// people), three people with an ntfy topic each (alice, bob, dave), answer
// links on the server's own URL, and a worker sending notifications; on st,
// or a new SQLite file when st is nil.
type quorumPeople struct {
	*testserver.Server
	ntfy   map[string]*receiver
	tokens map[string]string // by person
}

func startQuorumPeople(t *testing.T, st askd.Store) *quorumPeople {
	t.Helper()
	qp := &quorumPeople{ntfy: map[string]*receiver{}, tokens: map[string]string{}}
	qp.Server = testserver.Start(t, testserver.Options{Store: st, Config: app.Config{
		WebhookAllow: loopback, Backoff: func(int) time.Duration { return 20 * time.Millisecond }}})
	ctx, cancel := context.WithCancel(context.Background())
	w := tell.New(qp.App, tell.Options{Timeout: 5 * time.Second, Tick: 50 * time.Millisecond, PublicURL: qp.URL, LinkBase: qp.URL})
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	for _, p := range []string{"alice", "bob", "dave"} {
		tok := qp.HumanToken
		if p != qp.HumanName {
			tok = qp.TokenWith(t, app.TokenSpec{Name: p, Role: askd.RoleHuman, Access: askd.AccessApprover})
		}
		qp.tokens[p], qp.ntfy[p] = tok, newReceiver(t, nil)
		if _, err := client.New(qp.URL, tok).SetMyNotify(t.Context(), askd.PersonNotify{Ntfy: qp.ntfy[p].URL}); err != nil {
			t.Fatal(err)
		}
	}
	admin := askd.Caller{Name: qp.HumanName, Role: askd.RoleHuman, Access: askd.AccessAdmin}
	if _, err := qp.App.CreatePolicy(t.Context(), admin, &askd.PolicyInput{Match: askd.MatchTitle, Title: "Deploy", Approvals: 3}); err != nil {
		t.Fatal(err)
	}
	return qp
}

// note waits for person's n-th ntfy notification (from 1) and returns it as
// ntfy reads it, with its Approve action's URL ("" when it has none).
func (qp *quorumPeople) note(t *testing.T, person string, n int) (ntfyNote, string) {
	t.Helper()
	r := qp.ntfy[person]
	testserver.Eventually(t, person+"'s notification", func() bool { return len(r.got()) >= n })
	got, err := readNtfy(r.got()[n-1])
	if err != nil {
		t.Fatalf("ntfy would refuse %s's notification: %v", person, err)
	}
	for _, b := range got.Actions {
		if b.Label == askd.TapApprove {
			return got, b.URL
		}
	}
	return got, ""
}

// idle waits until the worker has sent every delivery due.
func (qp *quorumPeople) idle(t *testing.T) {
	t.Helper()
	testserver.Eventually(t, "every notification sent", func() bool {
		at, err := qp.App.NextDeliveryAt(t.Context())
		return err == nil && at.IsZero()
	})
}

// tapCount POSTs an ntfy action's request and returns the status, the page
// and the count the response carries for the service worker.
func tapCount(t *testing.T, link string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, link, strings.NewReader("confirm=1"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	count, err := url.PathUnescape(resp.Header.Get("Askd-Approvals"))
	if err != nil {
		t.Fatalf("Askd-Approvals %q: %v", resp.Header.Get("Askd-Approvals"), err)
	}
	return resp.StatusCode, string(b), count
}

// A covered approval's notifications say what it needs; once alice's ntfy
// button counts her approval, bob and dave are notified again ("1 of 3
// approvals, by alice"), with buttons of their own, and alice is not. Her
// button tapped again counts nothing; so does bob's after he approved in
// the inbox; each changes nothing in the store. dave's button decides, and
// nobody is asked for more. On SQLite and PostgreSQL.
func TestQuorumNotifications(t *testing.T) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			var st askd.Store
			if name == "postgres" {
				st = testserver.OpenPostgres(t, pgtest.URL(t))
			}
			testQuorumNotifications(t, startQuorumPeople(t, st))
		})
	}
}

func testQuorumNotifications(t *testing.T, qp *quorumPeople) {
	a, err := qp.Agent("deploys").Create(t.Context(), &askd.AskInput{Kind: askd.KindApproval, Title: "Deploy"}, 0)
	if err != nil || a.ApprovalsNeeded != 3 {
		t.Fatalf("create = %+v, %v; want 3 approvals needed", a, err)
	}
	first := map[string]string{}
	for _, p := range []string{"alice", "bob", "dave"} {
		got, approve := qp.note(t, p, 1)
		if !strings.HasSuffix(got.Message, "\n\nNeeds 3 approvals.") || approve == "" {
			t.Fatalf("%s's first notification %q (approve %q); want it to say it needs 3 approvals, with an Approve button", p, got.Message, approve)
		}
		first[p] = approve
	}

	status, page, count := tapCount(t, first["alice"])
	if status != http.StatusOK || !strings.Contains(page, "1 of 3 approvals, by alice") || count != "1 of 3 approvals, by alice; it needs 2 more." {
		t.Fatalf("alice's tap: %d, count %q, %s", status, count, page)
	}
	for _, p := range []string{"bob", "dave"} {
		got, approve := qp.note(t, p, 2)
		if !strings.HasSuffix(got.Message, "\n\n1 of 3 approvals, by alice; it needs 2 more.") || approve == "" || approve == first[p] {
			t.Fatalf("%s's second notification %q (approve %q); want the count and a button of its own", p, got.Message, approve)
		}
	}
	qp.idle(t)
	if n := len(qp.ntfy["alice"].got()); n != 1 {
		t.Errorf("alice, who approved, got %d notifications; want only the first", n)
	}
	before, hist := stored(t, qp.Server, a.ID)
	status, page, count = tapCount(t, first["alice"])
	if status != http.StatusConflict || !strings.Contains(page, "1 of 3 approvals, by alice") || count == "" {
		t.Errorf("alice's tap again: %d, count %q, %s; want 409 with the count", status, count, page)
	}
	unchanged(t, qp.Server, before, len(hist))
	if s, _ := stored(t, qp.Server, a.ID); len(s.Approvals) != 1 {
		t.Fatalf("alice's tap again counted: %+v", s.Approvals)
	}

	// bob approves in the inbox; his notification's button then counts
	// nothing more.
	if _, err := client.New(qp.URL, qp.tokens["bob"]).Answer(t.Context(), a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	before, hist = stored(t, qp.Server, a.ID)
	status, page, count = tapCount(t, first["bob"])
	if status != http.StatusConflict || !strings.Contains(page, "approved ask") || count != "2 of 3 approvals, by alice, bob; it needs 1 more." {
		t.Errorf("bob's tap after his approval in the inbox: %d, count %q, %s; want 409 with the count", status, count, page)
	}
	unchanged(t, qp.Server, before, len(hist))
	if s, _ := stored(t, qp.Server, a.ID); len(s.Approvals) != 2 {
		t.Fatalf("bob's tap counted: %+v", s.Approvals)
	}

	got, approve := qp.note(t, "dave", 3)
	if !strings.HasSuffix(got.Message, "\n\n2 of 3 approvals, by alice, bob; it needs 1 more.") || approve == "" {
		t.Fatalf("dave's third notification %q (approve %q)", got.Message, approve)
	}
	status, page, _ = tapCount(t, approve)
	if status != http.StatusOK || !strings.Contains(page, "Answered by dave via link") {
		t.Fatalf("dave's tap: %d %s", status, page)
	}
	done, _ := stored(t, qp.Server, a.ID)
	if done.Status != askd.StatusAnswered || done.Answer.Decision != askd.DecisionApproved || len(done.Approvals) != 3 {
		t.Fatalf("after dave's tap: %+v; want approved by three", done)
	}
	qp.idle(t)
	for p, want := range map[string]int{"alice": 1, "bob": 2, "dave": 3} {
		if n := len(qp.ntfy[p].got()); n != want {
			t.Errorf("%s got %d notifications, want %d", p, n, want)
		}
	}
}

// A covered approval on the server's Slack notifier, its buttons answering
// in place as alice: she approves in the inbox first, and her click then
// counts nothing (she is told so, and the store is as it was); the
// notification the count sends again says "1 of 2 approvals, by alice" and
// carries no buttons of hers.
func TestQuorumSlackClickCountsOnce(t *testing.T) {
	responses := newReceiver(t, nil)
	ls := startLinks(t, app.Config{}, testserver.Options{
		Slack: func(svc *app.Service, base string) http.Handler {
			return tell.NewSlackInteractions(svc, tell.SlackOptions{SigningSecret: slackSecret, PublicURL: base,
				ResponseURLPrefix: responses.URL + "/", Client: http.DefaultClient})
		},
	})
	admin := askd.Caller{Name: "alice", Role: askd.RoleHuman, Access: askd.AccessAdmin}
	if _, err := ls.App.CreatePolicy(t.Context(), admin, &askd.PolicyInput{Match: askd.MatchTitle, Title: "Ship", Approvals: 2}); err != nil {
		t.Fatal(err)
	}
	a, err := ls.Agent("s1").Create(t.Context(), &askd.AskInput{Kind: askd.KindApproval, Title: "Ship"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the Slack message", func() bool { return len(ls.slack.got()) == 1 })
	if body := string(ls.slack.got()[0].body); !strings.Contains(body, "Needs 2 approvals.") {
		t.Errorf("the Slack message does not say what the approval needs: %s", body)
	}
	buttons := slackButtons(t, ls.slack.got()[0].body)
	if len(buttons) != 3 || buttons[0].Text.Text != askd.TapApprove || buttons[0].Value == "" {
		t.Fatalf("buttons %+v, want Approve and Reject in place, then the inbox", buttons)
	}
	if _, err := ls.Human().Answer(t.Context(), a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	before, evs := stored(t, ls.Server, a.ID)
	if status, _ := postSlack(t, ls.URL, slackClick(buttons[0], responses.URL+"/actions/T1/1/x"), slackSecret, time.Now()); status != http.StatusOK {
		t.Fatalf("the click: %d", status)
	}
	testserver.Eventually(t, "the reply", func() bool { return len(responses.got()) == 1 })
	if body := string(responses.got()[0].body); !strings.Contains(body, "did not count this again") || !strings.Contains(body, "ephemeral") {
		t.Errorf("reply to alice's click after her approval: %s", body)
	}
	unchanged(t, ls.Server, before, len(evs))
	if s, _ := stored(t, ls.Server, a.ID); len(s.Approvals) != 1 {
		t.Fatalf("the click counted: %+v", s.Approvals)
	}
	testserver.Eventually(t, "the count's Slack message", func() bool { return len(ls.slack.got()) == 2 })
	body := string(ls.slack.got()[1].body)
	if again := slackButtons(t, ls.slack.got()[1].body); !strings.Contains(body, "1 of 2 approvals, by alice; it needs 1 more.") || len(again) != 1 {
		t.Errorf("the count's message %s, buttons %+v; want the count and only the inbox button", body, again)
	}
}
