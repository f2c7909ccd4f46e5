package tell_test

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/openapicheck"
	"github.com/askd-dev/askd/internal/tell"
	"github.com/askd-dev/askd/internal/testserver"
)

// TestSignStandardVector: the signature of the Standard Webhooks
// specification's own example (its secret is the base64 after "whsec_").
func TestSignStandardVector(t *testing.T) {
	key, err := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	got := tell.SignStandard(string(key), "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("signature %s, want %s", got, want)
	}
}

func TestVerifyStandard(t *testing.T) {
	const secret = "correct horse battery staple"
	at := time.Unix(1_700_000_000, 0)
	body := []byte(`{"text":"yes"}`)
	headers := func(id string, ts time.Time, sig string) http.Header {
		h := http.Header{}
		h.Set(tell.HeaderWebhookID, id)
		h.Set(tell.HeaderWebhookTimestamp, strconv.FormatInt(ts.Unix(), 10))
		h.Set(tell.HeaderWebhookSignature, sig)
		return h
	}
	good := tell.SignStandard(secret, "ask:7@x", at, body)
	tests := []struct {
		name   string
		secret string
		h      http.Header
		body   string
		now    time.Time
		want   error
	}{
		{"as sent", secret, headers("ask:7@x", at, good), string(body), at, nil},
		{"within the tolerance", secret, headers("ask:7@x", at, good), string(body), at.Add(tell.WebhookTolerance), nil},
		{"one of several signatures", secret, headers("ask:7@x", at, "v1,bm90IGl0 "+good), string(body), at, nil},
		{"replayed later", secret, headers("ask:7@x", at, good), string(body), at.Add(tell.WebhookTolerance + time.Second), tell.ErrWebhookTimestamp},
		{"from the future", secret, headers("ask:7@x", at, good), string(body), at.Add(-tell.WebhookTolerance - time.Second), tell.ErrWebhookTimestamp},
		{"body changed", secret, headers("ask:7@x", at, good), `{"text":"no"}`, at, tell.ErrWebhookSignature},
		{"id changed", secret, headers("ask:8@x", at, good), string(body), at, tell.ErrWebhookSignature},
		{"timestamp changed", secret, headers("ask:7@x", at.Add(time.Second), good), string(body), at, tell.ErrWebhookSignature},
		{"another secret", "hunter2", headers("ask:7@x", at, good), string(body), at, tell.ErrWebhookSignature},
		{"no headers", secret, http.Header{}, string(body), at, tell.ErrWebhookHeaders},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tell.VerifyStandard(tt.secret, tt.h, []byte(tt.body), tt.now); err != tt.want {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}

// TestWebhookCarriesStandardSignature: a tell webhook carries the Standard
// Webhooks headers beside Askd-Signature: its id the Idempotency-Key, its
// timestamp the server's clock at each attempt, its signature over
// id.timestamp.body under the channel's secret. A retry keeps the id and
// is signed anew.
func TestWebhookCarriesStandardSignature(t *testing.T) {
	var clock testserver.Clock
	clock.Skip(-time.Hour) // the server's clock, told apart from the wall clock
	srv := start(t, app.Config{WebhookAllow: loopback, Now: clock.Now})
	rcv := newReceiver(t, func(n int) int {
		if n == 1 {
			clock.Skip(time.Minute) // the retry comes a minute later
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	agent := srv.Agent("deploy")
	const secret = "s3cret, ünicode"
	if _, err := agent.SetChannel(t.Context(), "deploy", askd.Channel{Type: askd.ChannelWebhook, URL: rcv.URL, Secret: secret}); err != nil {
		t.Fatal(err)
	}
	a := askDecision(t, agent, "Deploy on Monday or Friday?")
	answered, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Answer: "Monday"})
	if err != nil {
		t.Fatal(err)
	}
	finished(t, srv, a.ID)
	reqs := rcv.got()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	var stamps []int64
	for i, r := range reqs {
		if got, want := r.header.Get(tell.HeaderWebhookID), askd.TellKey(answered); got != want || r.header.Get("Idempotency-Key") != want {
			t.Errorf("request %d: webhook-id %q, Idempotency-Key %q; want both %q", i+1, got, r.header.Get("Idempotency-Key"), want)
		}
		ts, err := strconv.ParseInt(r.header.Get(tell.HeaderWebhookTimestamp), 10, 64)
		if err != nil {
			t.Fatalf("request %d: webhook-timestamp %q", i+1, r.header.Get(tell.HeaderWebhookTimestamp))
		}
		stamps = append(stamps, ts)
		// Verified at the time the server's clock gave it, not the wall
		// clock's: the timestamp is the server's.
		if err := tell.VerifyStandard(secret, r.header, r.body, time.Unix(ts, 0)); err != nil {
			t.Errorf("request %d: %v", i+1, err)
		}
		if err := tell.VerifyStandard(secret, r.header, r.body, time.Now()); err != tell.ErrWebhookTimestamp {
			t.Errorf("request %d checked at the wall clock, an hour on: %v, want the timestamp refused", i+1, err)
		}
		if !tell.Verify(secret, r.body, r.header.Get(tell.HeaderSignature)) {
			t.Errorf("request %d: Askd-Signature does not verify", i+1)
		}
		checkDocumented(t, "tell", r)
	}
	if stamps[1]-stamps[0] < 59 || stamps[1] > clock.Now().Unix() {
		t.Errorf("timestamps %v with the server's clock at %d: want the retry's a minute after the first's", stamps, clock.Now().Unix())
	}
}

// TestNotificationWebhooksSigned: a notification webhook with a secret
// (--notify-webhook-secret, a person's webhook_secret) is signed as a tell
// webhook is; one without is sent as before, unsigned.
func TestNotificationWebhooksSigned(t *testing.T) {
	signed, plain, own := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
	srv := start(t, app.Config{WebhookAllow: loopback, Notifiers: []askd.Channel{
		{Type: askd.NotifyWebhook, URL: signed.URL, Secret: "the operator's"}, {Type: askd.NotifyWebhook, URL: plain.URL},
	}})
	a := askDecision(t, srv.Agent("s1"), "Which day?")
	testserver.Eventually(t, "both notifications", func() bool { return len(signed.got()) == 1 && len(plain.got()) == 1 })
	checkSigned(t, signed.got()[0], "the operator's", askd.NotifyKey(a, 0))
	checkDocumented(t, "notification", plain.got()[0])
	for _, h := range []string{tell.HeaderSignature, tell.HeaderWebhookID, tell.HeaderWebhookTimestamp, tell.HeaderWebhookSignature} {
		if v := plain.got()[0].header.Get(h); v != "" {
			t.Errorf("a notifier without a secret sent %s: %q", h, v)
		}
	}

	// A person's own webhook: the fallback notifiers are not used once
	// someone has a channel of their own.
	const secret = "alice's own secret"
	shown, err := srv.Human().SetMyNotify(t.Context(), askd.PersonNotify{Webhook: own.URL, WebhookSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	if shown.WebhookSecret != "******" {
		t.Errorf("the reply shows the secret as %q, want ******", shown.WebhookSecret)
	}
	b := askDecision(t, srv.Agent("s2"), "Which week?")
	testserver.Eventually(t, "alice's notification", func() bool { return len(own.got()) == 1 })
	checkSigned(t, own.got()[0], secret, askd.PersonNotifyKey(b, srv.HumanName, askd.NotifyWebhook))
}

// checkSigned checks a received webhook's signatures under secret, and that
// its webhook-id is its Idempotency-Key, key.
func checkSigned(t *testing.T, r received, secret, key string) {
	t.Helper()
	if got := r.header.Get(tell.HeaderWebhookID); got != key || r.header.Get(tell.HeaderIdempotencyKey) != key {
		t.Errorf("webhook-id %q, Idempotency-Key %q; want both %q", got, r.header.Get(tell.HeaderIdempotencyKey), key)
	}
	if err := tell.VerifyStandard(secret, r.header, r.body, time.Now()); err != nil {
		t.Errorf("Standard Webhooks signature: %v", err)
	}
	if !tell.Verify(secret, r.body, r.header.Get(tell.HeaderSignature)) {
		t.Errorf("Askd-Signature %q does not verify", r.header.Get(tell.HeaderSignature))
	}
	checkDocumented(t, "notification", r)
}

// checkDocumented checks a received webhook against its webhook in
// api/openapi.json (name: tell or notification).
func checkDocumented(t *testing.T, name string, r received) {
	t.Helper()
	doc, err := openapicheck.Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.CheckWebhook(name, r.header, r.body); err != nil {
		t.Error(err)
	}
}
