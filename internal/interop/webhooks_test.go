package interop_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/openapicheck"
	"github.com/askd-dev/askd/internal/testserver"
)

// TestStandardWebhooksVerifyAskd: the official Standard Webhooks library
// verifies the webhooks the real askd sends, a notification (signed with
// --notify-webhook-secret) and a tell (the --tell webhook's secret, with
// characters beyond ASCII: the key is its UTF-8 bytes); and it refuses the
// tell replayed ten minutes later, and the tell with its body changed. Both
// bodies fit the webhooks of api/openapi.json.
func TestStandardWebhooksVerifyAskd(t *testing.T) {
	t.Parallel()
	const tellSecret, notifySecret = "tëll sécret ✓", "notify secret"
	rcv := startReceiver(t, tellSecret, notifySecret)
	s := testserver.ServeBinary(t, "--tell", "webhook="+rcv.url+"/tell,secret="+tellSecret,
		"--notify-webhook", rcv.url+"/notify", "--notify-webhook-secret", notifySecret)
	doc, err := openapicheck.Load()
	if err != nil {
		t.Fatal(err)
	}
	agent := client.New(s.URL, s.Agent)
	agent.Session = "webhooks"
	a, err := agent.Create(t.Context(), &askd.AskInput{Kind: askd.KindDecision, Title: "Deploy on Friday?",
		Options: []askd.Option{{Label: "yes"}, {Label: "no"}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	notified := rcv.next(t)
	if notified.Path != "/notify" || notified.Verdict != "verified" {
		t.Fatalf("the notification: %s %q, want /notify verified", notified.Path, notified.Verdict)
	}
	if err := doc.CheckWebhook("notification", header(notified), notified.Body); err != nil {
		t.Error(err)
	}

	if _, err := client.New(s.URL, s.Human).Answer(t.Context(), a.ID, &askd.Answer{Answer: "no"}); err != nil {
		t.Fatal(err)
	}
	told := rcv.next(t)
	if told.Path != "/tell" || told.Verdict != "verified" {
		t.Fatalf("the tell: %s %q, want /tell verified", told.Path, told.Verdict)
	}
	if err := doc.CheckWebhook("tell", header(told), told.Body); err != nil {
		t.Error(err)
	}
	if id, key := told.Headers["webhook-id"], told.Headers["idempotency-key"]; id == "" || id != key {
		t.Errorf("webhook-id %q, Idempotency-Key %q: want the same", id, key)
	}

	tests := []struct {
		name   string
		path   string
		body   []byte
		status int
		says   string
	}{
		// Within the library's five minutes a replay verifies: a receiver
		// drops it by its webhook-id, the Idempotency-Key.
		{"sent again at once", "/tell", told.Body, http.StatusNoContent, "verified"},
		{"replayed ten minutes later", "/tell?later=600", told.Body, http.StatusBadRequest, "Message timestamp too old"},
		{"its body changed", "/tell", bytes.Replace(told.Body, []byte(`"no"`), []byte(`"yes"`), 1), http.StatusBadRequest, "No matching signature found"},
		{"under the other secret", "/notify", told.Body, http.StatusBadRequest, "No matching signature found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, said := rcv.post(t, tt.path, told, tt.body)
			got := rcv.next(t)
			if status != tt.status || got.Verdict != tt.says {
				t.Errorf("%d %q (%s), want %d %q", status, said, got.Verdict, tt.status, tt.says)
			}
		})
	}
	if bytes.Equal(tests[2].body, told.Body) {
		t.Error("the changed body is the body")
	}
}

// header is d's headers as a request's.
func header(d delivery) http.Header {
	h := http.Header{}
	for k, v := range d.Headers {
		h.Set(k, v)
	}
	return h
}
