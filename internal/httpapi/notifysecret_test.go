package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/testserver"
)

// TestMyNotifyWebhookSecret: a person's webhook secret (SPEC §19) is
// written, never shown: every reply says "******" in its place; a setting
// sent back with "******" keeps it, one without it has none.
func TestMyNotifyWebhookSecret(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	const secret = "bob's webhook secret"
	stored := func(t *testing.T) askd.PersonNotify {
		t.Helper()
		var n *askd.PersonNotify
		if err := srv.Store.View(ctx, func(tx askd.Tx) (err error) {
			n, err = tx.Teams.Notify(ctx, srv.HumanName)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return *n
	}
	put := func(t *testing.T, body string) (int, string) {
		t.Helper()
		return rawRequest(t, srv, http.MethodPut, "/api/me/notify", srv.HumanToken, body, nil)
	}
	const hook = "https://hooks.example.com/bob"

	status, body := put(t, `{"webhook": "`+hook+`", "webhook_secret": "`+secret+`"}`)
	if status != http.StatusOK || strings.Contains(body, secret) || !strings.Contains(body, `"webhook_secret":"******"`) {
		t.Errorf("PUT = %d %s, want 200 with the secret as ******", status, body)
	}
	status, body = rawRequest(t, srv, http.MethodGet, "/api/me/notify", srv.HumanToken, "", nil)
	if status != http.StatusOK || strings.Contains(body, secret) || !strings.Contains(body, `"webhook_secret":"******"`) {
		t.Errorf("GET = %d %s, want 200 with the secret as ******", status, body)
	}
	if got := stored(t).WebhookSecret; got != secret {
		t.Errorf("stored secret %q, want %q", got, secret)
	}

	// Read, changed and sent back: the secret stays.
	got, err := srv.Human().MyNotify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got.Ntfy = "https://ntfy.sh/bob-askd"
	if _, err := srv.Human().SetMyNotify(ctx, *got); err != nil {
		t.Fatal(err)
	}
	if n := stored(t); n.WebhookSecret != secret || n.Ntfy != "https://ntfy.sh/bob-askd" {
		t.Errorf("stored after sending the setting back: %+v, want the secret kept", n)
	}

	// Without it, the whole setting is replaced: no secret.
	if status, body := put(t, `{"webhook": "`+hook+`"}`); status != http.StatusOK || strings.Contains(body, "webhook_secret") {
		t.Errorf("PUT without a secret = %d %s, want 200 without one", status, body)
	}
	if n := stored(t); n.WebhookSecret != "" {
		t.Errorf("stored after a PUT without a secret: %+v, want none", n)
	}

	refusals := []struct {
		name string
		body string
		says string
	}{
		{"keeping none", `{"webhook": "` + hook + `", "webhook_secret": "******"}`, `webhook_secret: \"******\" keeps the secret stored, and none is`},
		{"no webhook", `{"ntfy": "https://ntfy.sh/x", "webhook_secret": "k"}`, "webhook_secret: only with webhook"},
		{"too long", `{"webhook": "` + hook + `", "webhook_secret": "` + strings.Repeat("k", askd.MaxSecretBytes+1) + `"}`, "webhook_secret:"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			before := stored(t)
			status, body := put(t, tt.body)
			if status != http.StatusBadRequest || !strings.Contains(body, tt.says) {
				t.Errorf("PUT %s = %d %s, want 400 saying %q", tt.body, status, body, tt.says)
			}
			if after := stored(t); after != before {
				t.Errorf("stored %+v after a refusal, want %+v", after, before)
			}
		})
	}
}
