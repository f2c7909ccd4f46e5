package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
)

// storedNotify reads person's notification setting from the store.
func storedNotify(t *testing.T, srv *testserver.Server, person string) askd.PersonNotify {
	t.Helper()
	var n *askd.PersonNotify
	if err := srv.Store.View(t.Context(), func(tx askd.Tx) (err error) {
		n, err = tx.Teams.Notify(t.Context(), person)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return *n
}

// emailOf is n's email as "<nil>", or the address quoted.
func emailOf(n askd.PersonNotify) string {
	if n.Email == nil {
		return "<nil>"
	}
	return `"` + *n.Email + `"`
}

// TestMyNotifyEmail: a person's address (SPEC §16) is one mailbox; a
// line break, a second address, a display name or anything else is 400
// naming email, and the setting stored stays as it was. "" is a choice of
// none, absent is no choice; a provider_email sent is ignored.
func TestMyNotifyEmail(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	put := func(t *testing.T, body string) (int, string) {
		t.Helper()
		return rawRequest(t, srv, http.MethodPut, "/api/me/notify", srv.HumanToken, body, nil)
	}
	status, body := put(t, `{"email": "alice@example.com"}`)
	if status != http.StatusOK || !strings.Contains(body, `"email":"alice@example.com"`) {
		t.Fatalf("PUT = %d %s", status, body)
	}
	for _, bad := range []string{
		"alice@example.com\r\nBcc: eve@example.com",
		"alice@example.com\nX-Injected: 1",
		"alice@example.com, eve@example.com",
		"alice@example.com;eve@example.com",
		"Alice <alice@example.com>",
		"Eve <eve@example.com>, alice@example.com",
		"alice",
		"alice@example.com>\r\nDATA",
		`"eve@example.com"@example.com`,
	} {
		b, _ := json.Marshal(map[string]string{"email": bad})
		status, body := put(t, string(b))
		if status != http.StatusBadRequest || !strings.Contains(body, "email: ") {
			t.Errorf("PUT email %q = %d %s, want 400 naming email", bad, status, body)
		}
		if got := storedNotify(t, srv, srv.HumanName); emailOf(got) != `"alice@example.com"` {
			t.Errorf("after %q the store holds %s", bad, emailOf(got))
		}
	}

	// A choice of none is kept as such, apart from no choice.
	if status, body := put(t, `{"email": ""}`); status != http.StatusOK || !strings.Contains(body, `"email":""`) {
		t.Errorf("PUT none = %d %s, want the choice of none shown", status, body)
	}
	if got := storedNotify(t, srv, srv.HumanName); emailOf(got) != `""` {
		t.Errorf("stored %s, want a choice of none", emailOf(got))
	}
	if status, body := put(t, `{"ntfy": "https://ntfy.example.com/alice", "provider_email": "eve@example.com"}`); status != http.StatusOK || strings.Contains(body, "email") {
		t.Errorf("PUT without email = %d %s, want no email and no provider's", status, body)
	}
	if got := storedNotify(t, srv, srv.HumanName); got.Email != nil || got.ProviderEmail != "" {
		t.Errorf("stored %s, provider's %q; want no choice, and no provider's address from a PUT", emailOf(got), got.ProviderEmail)
	}
}

// TestMyNotifyMailOff: a person's setting says when this askd mails no
// one, so the inbox can say an address waits for the operator; the store
// keeps nothing of it, and a setting read and sent back is taken.
func TestMyNotifyMailOff(t *testing.T) {
	for _, mail := range []bool{false, true} {
		srv := testserver.Start(t, testserver.Options{Config: app.Config{Mail: mail}})
		_, got := rawRequest(t, srv, http.MethodGet, "/api/me/notify", srv.HumanToken, "", nil)
		status, put := rawRequest(t, srv, http.MethodPut, "/api/me/notify", srv.HumanToken, `{"email": "alice@example.com", "mail_off": true}`, nil)
		if status != http.StatusOK {
			t.Fatalf("mail %v: PUT = %d %s", mail, status, put)
		}
		for _, body := range []string{got, put} {
			if off := strings.Contains(body, `"mail_off":true`); off == mail {
				t.Errorf("mail %v: %s, want mail_off %v", mail, body, !mail)
			}
		}
		if n := storedNotify(t, srv, srv.HumanName); emailOf(n) != `"alice@example.com"` || n.MailOff {
			t.Errorf("mail %v: stored %s, mail_off %v", mail, emailOf(n), n.MailOff)
		}
	}
}

// TestOIDCProviderEmail: a person signed in through the provider is
// mailed at its email while the provider marks it verified and they have
// not chosen; their choice, none included, outlasts later sign-ins.
func TestOIDCProviderEmail(t *testing.T) {
	p := testserver.StartProvider(t)
	p.SetUser("sub-gil", map[string]any{"preferred_username": "gil", "email": "gil@corp.example", "email_verified": true})
	p.SignIn("sub-gil")
	srv := oidcServer(t, p, app.OIDC{Allow: []app.ClaimMatch{{Claim: "email", Value: "gil@corp.example"}}}, testserver.Options{})
	oidcSignIn(t, srv)
	if got := storedNotify(t, srv, "gil"); got.ProviderEmail != "gil@corp.example" || got.Email != nil || got.MailTo() != "gil@corp.example" {
		t.Fatalf("after sign-in: provider's %q, chosen %s; want the verified address, mailed", got.ProviderEmail, emailOf(got))
	}

	// Unverified now: no longer mailed there.
	p.SetUser("sub-gil", map[string]any{"preferred_username": "gil", "email": "gil@corp.example", "email_verified": false})
	oidcSignIn(t, srv)
	if got := storedNotify(t, srv, "gil"); got.MailTo() != "" {
		t.Errorf("an unverified address is mailed: %+v", got)
	}

	// Verified again, and gil chooses none: later sign-ins keep it.
	p.SetUser("sub-gil", map[string]any{"preferred_username": "gil", "email": "gil@corp.example", "email_verified": true})
	oidcSignIn(t, srv)
	_, token, err := srv.App.RotateToken(t.Context(), app.Itself, "gil")
	if err != nil {
		t.Fatal(err)
	}
	if status, body := rawRequest(t, srv, http.MethodPut, "/api/me/notify", token, `{"email": ""}`, nil); status != http.StatusOK {
		t.Fatalf("PUT = %d %s", status, body)
	}
	oidcSignIn(t, srv)
	if got := storedNotify(t, srv, "gil"); got.MailTo() != "" || emailOf(got) != `""` || got.ProviderEmail != "gil@corp.example" {
		t.Errorf("after choosing none and signing in again: %+v (chosen %s), want none kept", got, emailOf(got))
	}
	status, body := rawRequest(t, srv, http.MethodGet, "/api/me/notify", token, "", nil)
	if status != http.StatusOK || !strings.Contains(body, `"email":""`) || !strings.Contains(body, `"provider_email":"gil@corp.example"`) {
		t.Errorf("GET = %d %s, want the choice of none and the provider's address", status, body)
	}
}
