package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/openid"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/askd-dev/askd/internal/web"
	"github.com/chromedp/chromedp"
)

// OIDCProviderPackage is the OpenID Connect provider the browser tests sign
// in with: oidc-provider from npm, OpenID certified, pinned.
const OIDCProviderPackage = "oidc-provider@9.13.3"

// nodeProvider starts testdata/oidc-provider.mjs on localhost (another
// site than askd's 127.0.0.1) with people's claims in usersFile, askd as
// its client with base's callback, and returns its issuer. It stops with
// the test.
func nodeProvider(t *testing.T, usersFile, base string) string {
	t.Helper()
	node := testserver.Node(t)
	dir := testserver.NPM(t, OIDCProviderPackage)
	script, err := filepath.Abs(filepath.Join("testdata", "oidc-provider.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, script, usersFile, "askd", "askd-browser-secret", base+"/auth/oidc/callback", base+"/signin.html")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start oidc-provider: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	issuer := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "issuer "); ok {
				issuer <- v
			}
		}
		close(issuer)
	}()
	select {
	case v, ok := <-issuer:
		if !ok {
			t.Fatal("oidc-provider exited before it served")
		}
		return v
	case <-time.After(time.Minute):
		t.Fatal("oidc-provider did not serve within a minute")
	}
	return ""
}

// writeUsers writes the provider's people and their claims.
func writeUsers(t *testing.T, path string, users map[string]map[string]any) {
	t.Helper()
	b, err := json.Marshal(users)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// providerSignIn clicks "Sign in with ..." on askd's sign-in page, signs in
// as login on the provider's own pages (and consents), and waits for the
// inbox.
func (p *tab) providerSignIn(login string) {
	p.t.Helper()
	p.do(chromedp.Navigate(p.srv.URL + "/signin.html"))
	p.do(chromedp.Click(chromedp.CSS(`#oidc-signin`)))
	p.do(chromedp.WaitVisible(chromedp.CSS(`input[name="login"]`)))
	p.do(chromedp.SendKeys(chromedp.CSS(`input[name="login"]`), login),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), "any password"),
		chromedp.Click(chromedp.CSS(`button.login-submit`)))
	// The consent page, the first time this client asks these scopes.
	if p.across(`document.body.classList.contains('ready') ? 'inbox' : document.querySelector('input[name="prompt"][value="consent"]') ? 'consent' : ''`) == "consent" {
		p.do(chromedp.Click(chromedp.CSS(`button.login-submit`)))
	}
	p.do(chromedp.WaitVisible(chromedp.CSS(`body.ready`)))
}

// TestSignInWithOIDCProvider: in Chromium, a person signs in with a real
// OpenID provider on another site, lands in the inbox as themselves,
// answers (the ask records them), and signs out, of askd and of the
// provider. Their groups say approver and team platform; with the group
// removed at the provider, their next sign-in makes them a viewer, and
// their answer is refused.
func TestSignInWithOIDCProvider(t *testing.T) {
	users := filepath.Join(t.TempDir(), "users.json")
	writeUsers(t, users, map[string]map[string]any{
		"dana": {"preferred_username": "dana", "email": "dana@example.com", "groups": []string{"askd-approvers", "team-platform"}},
	})
	srv := testserver.Start(t, testserver.Options{
		Inbox: func(svc *app.Service, _ string) http.Handler { return web.New(svc) },
		OIDC: func(base string) *app.OIDC {
			issuer := nodeProvider(t, users, base)
			return &app.OIDC{Name: "Test SSO", Issuer: issuer,
				RoleClaim: "groups", Approver: []string{"askd-approvers"}, TeamClaim: "groups", TeamPrefix: "team-",
				Provider: openid.New(openid.Config{Issuer: issuer, ClientID: "askd", ClientSecret: "askd-browser-secret",
					RedirectURL: base + "/auth/oidc/callback", SignedOutURL: base + "/signin.html",
					Scopes: []string{"openid", "email", "profile", "groups"}})}
		},
	})
	team(t, srv, "platform", 0, "")
	theirs := askAs(t, srv, srv.AgentName, "team:platform", "deploys", &askd.AskInput{Kind: askd.KindDecision, Title: "Ship the release?",
		Options: []askd.Option{{Label: "Ship"}, {Label: "Hold"}}})
	askAs(t, srv, srv.AgentName, srv.HumanName, "other", action("Someone else's"))

	p := newTab(t, srv)
	p.providerSignIn("dana")
	if got := p.text("#me"); got != "dana" {
		t.Errorf("signed in as %q, want dana", got)
	}
	// Mine holds the team's ask, not the one routed to another person.
	p.waitFor(`document.querySelectorAll('#pending .card').length === 1`)
	if ids := eval[[]int64](p, cardIDs); len(ids) != 1 || ids[0] != theirs.ID {
		t.Errorf("Mine = %v, want the team's ask %d", ids, theirs.ID)
	}
	p.steady(option(theirs.ID, "Ship"))
	p.do(chromedp.Click(option(theirs.ID, "Ship")))
	testserver.Eventually(t, "the ask settled", func() bool {
		a, err := srv.App.Get(context.Background(), app.Itself, theirs.ID)
		return err == nil && !a.Pending()
	})
	if a, _ := srv.App.Get(context.Background(), app.Itself, theirs.ID); a.SettledBy != "dana" {
		t.Errorf("settled by %q, want dana", a.SettledBy)
	}

	// Signing out ends askd's session and offers the provider's.
	p.do(chromedp.Click(chromedp.CSS(`form.signout button`)))
	p.do(chromedp.WaitVisible(chromedp.CSS(`#provider-signout`)))
	if n := browserSessions(t, srv, "dana"); n != 0 {
		t.Errorf("dana has %d browser sessions after signing out, want 0", n)
	}
	p.do(chromedp.Click(chromedp.CSS(`#provider-signout`)))
	p.do(chromedp.WaitVisible(chromedp.CSS(`button[name="logout"]`)))
	p.do(chromedp.Click(chromedp.CSS(`button[name="logout"]`)))
	p.across(`location.pathname === '/signin.html' && location.host === ` + jsString(strings.TrimPrefix(srv.URL, "http://")) + ` && 'back'`)

	// The approver group removed at the provider: a viewer at the next
	// sign-in, whose answer is refused.
	writeUsers(t, users, map[string]map[string]any{
		"dana": {"preferred_username": "dana", "email": "dana@example.com", "groups": []string{"team-platform"}},
	})
	next := askAs(t, srv, srv.AgentName, "team:platform", "deploys-2", &askd.AskInput{Kind: askd.KindDecision, Title: "Ship again?",
		Options: []askd.Option{{Label: "Ship"}, {Label: "Hold"}}})
	p.providerSignIn("dana")
	p.waitFor(`!document.getElementById('viewer-note').hidden`)
	eval[bool](p, `fetch('/api/asks/`+itoa(next.ID)+`/answer', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({answer: 'Ship'})}).then(r => { window.__answered = r.status; }), true`)
	p.waitFor(`window.__answered !== undefined`)
	status := eval[float64](p, `window.__answered`)
	if status != http.StatusForbidden {
		t.Errorf("a viewer's answer: %v, want 403", status)
	}
	if a, _ := srv.App.Get(context.Background(), app.Itself, next.ID); !a.Pending() {
		t.Errorf("the viewer's refused answer settled the ask: %+v", a)
	}
}

// across polls js, an expression naming where the tab is, through the
// navigations between sites, until it names somewhere, and returns that:
// an evaluation that meets a navigation is tried again on the next page.
func (p *tab) across(js string) string {
	p.t.Helper()
	deadline := time.Now().Add(stepTimeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
		v, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => { try { return (`+js+`) || false; } catch (e) { return false; } })()`,
			chromedp.WithPollingInterval(20*time.Millisecond)))
		cancel()
		if err == nil && v != "" {
			return v
		}
	}
	p.t.Fatalf("waiting for %s: the tab never got there", js)
	return ""
}

// browserSessions counts person's browser sessions in the store.
func browserSessions(t *testing.T, srv *testserver.Server, person string) int {
	t.Helper()
	var n int
	err := srv.Store.View(context.Background(), func(tx askd.Tx) error {
		bs, err := tx.SignIns.BrowserSessionsOf(context.Background(), person)
		n = len(bs)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
