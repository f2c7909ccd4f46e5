package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/openid"
	"github.com/askd-dev/askd/internal/testserver"
)

// Signing in with an OpenID Connect provider (SPEC §15), against a
// provider in the test's process whose ID tokens can be made wrong: every
// attack is refused, and the store read back shows nothing changed.

// oidcServer starts askd with p as its provider under rules (its Name,
// Issuer and Provider filled in).
func oidcServer(t *testing.T, p *testserver.Provider, rules app.OIDC, opts testserver.Options) *testserver.Server {
	t.Helper()
	opts.OIDC = func(base string) *app.OIDC {
		o := rules
		o.Name, o.Issuer = "Test SSO", p.URL
		o.Provider = openid.New(openid.Config{Issuer: p.URL, ClientID: p.ClientID, ClientSecret: p.ClientSecret,
			RedirectURL: base + "/auth/oidc/callback", SignedOutURL: base + "/signin.html"})
		return &o
	}
	return testserver.Start(t, opts)
}

// signInFlow is one browser's way through a sign-in, a step at a time.
type signInFlow struct {
	t        *testing.T
	srv      *testserver.Server
	binding  *http.Cookie // the Lax cookie /auth/oidc/start set
	callback string       // where the provider sent the browser back
}

// begin opens "Sign in with ..." and lets the provider sign in whoever it
// is set to, stopping before the callback.
func begin(t *testing.T, srv *testserver.Server) *signInFlow {
	t.Helper()
	resp := browserGet(t, srv.URL+"/auth/oidc/start", nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %s", resp.Status)
	}
	f := &signInFlow{t: t, srv: srv}
	for _, ck := range resp.Cookies() {
		if ck.Name == "askd_oidc" {
			f.binding = ck
			if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.MaxAge <= 0 || ck.MaxAge > 600 {
				t.Errorf("binding cookie: HttpOnly %v, SameSite %v, MaxAge %d; want HttpOnly, Lax, at most 600", ck.HttpOnly, ck.SameSite, ck.MaxAge)
			}
		}
	}
	if f.binding == nil {
		t.Fatal("start set no askd_oidc cookie")
	}
	auth := resp.Header.Get("Location")
	u, _ := url.Parse(auth)
	if q := u.Query(); q.Get("code_challenge_method") != "S256" || q.Get("nonce") == "" || q.Get("state") == "" {
		t.Fatalf("authorization request lacks PKCE S256, nonce or state: %s", auth)
	}
	resp = browserGet(t, auth, nil)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("provider: %s", resp.Status)
	}
	f.callback = resp.Header.Get("Location")
	return f
}

// back opens the callback with binding (nil: none) and returns the
// response, its body read into the second value.
func (f *signInFlow) back(callback string, binding *http.Cookie) (*http.Response, string) {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, callback, nil)
	if binding != nil {
		req.AddCookie(binding)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// finish opens the callback and the same-site step, and returns the
// browser cookie.
func (f *signInFlow) finish() *http.Cookie {
	f.t.Helper()
	resp, body := f.back(f.callback, f.binding)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `url=/auth/finish`) {
		f.t.Fatalf("callback: %s\n%s", resp.Status, body)
	}
	var handoff *http.Cookie
	for _, ck := range resp.Cookies() {
		switch ck.Name {
		case app.BrowserCookie:
			f.t.Error("the callback, a cross-site navigation, set the Strict browser cookie")
		case "askd_oidc":
			if ck.MaxAge >= 0 {
				f.t.Error("the callback kept the binding cookie")
			}
		case "askd_finish":
			handoff = ck
		}
	}
	if handoff == nil {
		f.t.Fatal("callback set no askd_finish cookie")
	}
	resp = browserGet(f.t, f.srv.URL+"/auth/finish", handoff)
	for _, ck := range resp.Cookies() {
		if ck.Name == app.BrowserCookie && ck.Value != "" {
			if ck.SameSite != http.SameSiteStrictMode || !ck.HttpOnly {
				f.t.Errorf("browser cookie: SameSite %v, HttpOnly %v; want Strict, HttpOnly", ck.SameSite, ck.HttpOnly)
			}
			return ck
		}
	}
	f.t.Fatalf("/auth/finish: %s, no browser cookie", resp.Status)
	return nil
}

// oidcSignIn signs in whoever p signs in, and returns the browser cookie.
func oidcSignIn(t *testing.T, srv *testserver.Server) *http.Cookie {
	t.Helper()
	return begin(t, srv).finish()
}

// meJSON is GET /api/me with the browser cookie.
func meJSON(t *testing.T, srv *testserver.Server, ck *http.Cookie) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/me", nil)
	req.AddCookie(ck)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/me: %s, %v", resp.Status, err)
	}
	return out
}

// signInState is what a sign-in could change, read back from the store:
// people and their roles, identities, teams' members, browser sessions
// and the audit chain's length.
func signInState(t *testing.T, srv *testserver.Server) string {
	t.Helper()
	var b strings.Builder
	err := srv.Store.View(context.Background(), func(tx askd.Tx) error {
		ctx := context.Background()
		ts, err := tx.Tokens.Tokens(ctx)
		if err != nil {
			return err
		}
		for _, tok := range ts {
			fmt.Fprintf(&b, "token %s %s %s %s\n", tok.Name, tok.Role, tok.Access, tok.Hash)
			ids, err := tx.Identities.IdentitiesOf(ctx, tok.Name)
			if err != nil {
				return err
			}
			for _, id := range ids {
				fmt.Fprintf(&b, "  identity %s %s revoked=%v\n", id.Issuer, id.Subject, id.RevokedAt != nil)
			}
			bs, err := tx.SignIns.BrowserSessionsOf(ctx, tok.Name)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "  browser sessions %d\n", len(bs))
		}
		teams, err := tx.Teams.Teams(ctx)
		if err != nil {
			return err
		}
		for _, tm := range teams {
			fmt.Fprintf(&b, "team %s %v\n", tm.Name, tm.Members)
		}
		n, err := tx.Audit.CountAudit(ctx, time.Time{}, time.Time{})
		fmt.Fprintf(&b, "audit rows %d\n", n)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestOIDCSignIn(t *testing.T) {
	p := testserver.StartProvider(t)
	p.SetUser("sub-dana", map[string]any{"preferred_username": "dana", "email": "dana@example.com"})
	p.SignIn("sub-dana")
	srv := oidcServer(t, p, app.OIDC{Allow: []app.ClaimMatch{{Claim: "email", Value: "dana@example.com"}}}, testserver.Options{})

	ck := oidcSignIn(t, srv)
	got := meJSON(t, srv, ck)
	if got["name"] != "dana" || got["access"] != "viewer" {
		t.Errorf("/api/me = %v, want dana, a viewer", got)
	}
	with, _ := got["signed_in_with"].(map[string]any)
	if with["method"] != "oidc" || with["issuer"] != p.URL || with["provider"] != "Test SSO" {
		t.Errorf("signed_in_with = %v, want oidc at %s, Test SSO", with, p.URL)
	}
	// The person's token secret was shown to nobody: only a rotation
	// gives one, and then it works.
	_, secret, err := srv.App.RotateToken(context.Background(), app.Itself, "dana")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := srv.App.Authenticate(context.Background(), secret); err != nil || c.Name != "dana" {
		t.Errorf("rotated token: %v, %v", c.Name, err)
	}
	// A second sign-in is the same person, not a new one.
	if got := meJSON(t, srv, oidcSignIn(t, srv)); got["name"] != "dana" {
		t.Errorf("second sign-in as %v, want dana", got["name"])
	}
	// The audit chain says who made and linked dana: the provider.
	rows, err := srv.App.AuditChain(context.Background(), app.Itself)
	if err != nil {
		t.Fatal(err)
	}
	var acts []string
	for _, r := range rows {
		if r.Actor == "oidc:"+p.URL {
			acts = append(acts, r.Action)
		}
	}
	if want := []string{askd.ConfigTokenCreated, askd.ConfigIdentityLinked}; !slices.Equal(acts, want) {
		t.Errorf("rows by oidc:%s = %v, want %v", p.URL, acts, want)
	}

	t.Run("sign-out offers the provider's", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/signout", nil)
		req.Header.Set("Origin", srv.URL)
		req.AddCookie(ck)
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); loc != "/signin.html?signed-out=oidc" {
			t.Errorf("sign-out sent to %q, want the sign-in page offering the provider's", loc)
		}
		end := browserGet(t, srv.URL+"/auth/oidc/signout", nil).Header.Get("Location")
		if !strings.HasPrefix(end, p.URL+"/logout?") || !strings.Contains(end, "client_id=askd") {
			t.Errorf("provider sign-out = %q", end)
		}
	})
}

func TestOIDCAttacksChangeNothing(t *testing.T) {
	p := testserver.StartProvider(t)
	p.SetUser("sub-eve", map[string]any{"preferred_username": "eve"})
	p.SignIn("sub-eve")
	// Each attack counts as a failed sign-in from this address: the
	// clock forgives them between attacks, so the throttle (10 at once)
	// answers none of them.
	clock := newClock()
	srv := oidcServer(t, p, app.OIDC{Allow: []app.ClaimMatch{{Claim: "preferred_username", Value: "eve"}}}, testserver.Options{Config: app.Config{Now: clock.Now}})
	// Eve signs in once, so that replays have something to replay.
	used := begin(t, srv)
	used.finish()

	tests := []struct {
		name   string
		attack func(t *testing.T) (*http.Response, string)
	}{
		{"wrong state", func(t *testing.T) (*http.Response, string) {
			f := begin(t, srv)
			return f.back(withQuery(f.callback, "state", "not-the-state"), f.binding)
		}},
		{"missing state", func(t *testing.T) (*http.Response, string) {
			f := begin(t, srv)
			return f.back(withQuery(f.callback, "state", ""), f.binding)
		}},
		{"replayed state", func(t *testing.T) (*http.Response, string) {
			return used.back(used.callback, used.binding)
		}},
		{"replayed code", func(t *testing.T) (*http.Response, string) {
			f := begin(t, srv)
			old, _ := url.Parse(used.callback)
			return f.back(withQuery(f.callback, "code", old.Query().Get("code")), f.binding)
		}},
		{"state of another browser", func(t *testing.T) (*http.Response, string) {
			mine, theirs := begin(t, srv), begin(t, srv)
			return mine.back(theirs.callback, mine.binding)
		}},
		{"no binding cookie", func(t *testing.T) (*http.Response, string) {
			f := begin(t, srv)
			return f.back(f.callback, nil)
		}},
		{"nonce mismatch", tampered(t, srv, p, func(c map[string]any) { c["nonce"] = "another" })},
		{"another audience", tampered(t, srv, p, func(c map[string]any) { c["aud"] = "another-client" })},
		{"another issuer", tampered(t, srv, p, func(c map[string]any) { c["iss"] = "https://evil.example" })},
		{"expired", tampered(t, srv, p, func(c map[string]any) { c["exp"] = time.Now().Add(-time.Hour).Unix() })},
		{"alg none", func(t *testing.T) (*http.Response, string) {
			p.SignNone()
			defer p.Reset()
			f := begin(t, srv)
			return f.back(f.callback, f.binding)
		}},
		{"signed by another key", func(t *testing.T) (*http.Response, string) {
			p.SignWithStrangerKey()
			defer p.Reset()
			f := begin(t, srv)
			return f.back(f.callback, f.binding)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock.Advance(time.Minute)
			before := signInState(t, srv)
			resp, body := tt.attack(t)
			if resp.StatusCode != http.StatusUnauthorized || strings.Contains(body, "/auth/finish") {
				t.Errorf("answered %s, want 401 and no way on:\n%s", resp.Status, body)
			}
			for _, ck := range resp.Cookies() {
				if (ck.Name == app.BrowserCookie || ck.Name == "askd_finish") && ck.Value != "" {
					t.Errorf("refused sign-in set %s", ck.Name)
				}
			}
			if after := signInState(t, srv); after != before {
				t.Errorf("store changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// tampered is an attack whose ID token fn changes.
func tampered(t *testing.T, srv *testserver.Server, p *testserver.Provider, fn func(map[string]any)) func(t *testing.T) (*http.Response, string) {
	return func(t *testing.T) (*http.Response, string) {
		p.Tamper(fn)
		defer p.Reset()
		f := begin(t, srv)
		return f.back(f.callback, f.binding)
	}
}

// withQuery is rawURL with its query parameter name set to v.
func withQuery(rawURL, name, v string) string {
	u, _ := url.Parse(rawURL)
	q := u.Query()
	q.Set(name, v)
	u.RawQuery = q.Encode()
	return u.String()
}

func TestOIDCKeyRotation(t *testing.T) {
	p := testserver.StartProvider(t)
	p.SetUser("sub-fay", map[string]any{"preferred_username": "fay"})
	p.SignIn("sub-fay")
	srv := oidcServer(t, p, app.OIDC{Allow: []app.ClaimMatch{{Claim: "preferred_username", Value: "fay"}}}, testserver.Options{})
	oidcSignIn(t, srv) // the keys are fetched
	p.RotateKey(t)     // a key askd has not seen signs from now on
	if got := meJSON(t, srv, oidcSignIn(t, srv)); got["name"] != "fay" {
		t.Errorf("after the provider rotated its key: signed in as %v", got["name"])
	}
}

func TestOIDCWhoMaySignIn(t *testing.T) {
	t.Run("unknown, nothing restricts: refused, naming whom to ask", func(t *testing.T) {
		p := testserver.StartProvider(t)
		p.SetUser("sub-gus", map[string]any{"preferred_username": "gus"})
		p.SignIn("sub-gus")
		srv := oidcServer(t, p, app.OIDC{}, testserver.Options{})
		before := signInState(t, srv)
		f := begin(t, srv)
		resp, body := f.back(f.callback, f.binding)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "ask an admin ("+srv.HumanName+")") {
			t.Errorf("answered %s:\n%s\nwant 403 naming the admin %s", resp.Status, body, srv.HumanName)
		}
		if after := signInState(t, srv); after != before {
			t.Errorf("store changed:\n%s\n%s", before, after)
		}
		// Linked by an admin, the same account signs in as that person.
		srv.TokenWith(t, app.TokenSpec{Name: "gustav", Role: askd.RoleHuman})
		if err := srv.App.LinkIdentity(context.Background(), app.Itself, "gustav", p.URL, "sub-gus"); err != nil {
			t.Fatal(err)
		}
		if got := meJSON(t, srv, oidcSignIn(t, srv)); got["name"] != "gustav" {
			t.Errorf("linked: signed in as %v, want gustav", got["name"])
		}
	})

	t.Run("named like an existing admin: a new person", func(t *testing.T) {
		p := testserver.StartProvider(t)
		p.SignIn("sub-mallory")
		srv := oidcServer(t, p, app.OIDC{Allow: []app.ClaimMatch{{Claim: "email_verified", Value: "true"}}}, testserver.Options{})
		p.SetUser("sub-mallory", map[string]any{"preferred_username": srv.HumanName, "email_verified": true})
		got := meJSON(t, srv, oidcSignIn(t, srv))
		if got["name"] == srv.HumanName || got["access"] != "viewer" {
			t.Errorf("provider user named %q signed in as %v (%v); want a new viewer", srv.HumanName, got["name"], got["access"])
		}
		if got["name"] != srv.HumanName+"-2" {
			t.Errorf("new person named %v, want %s-2", got["name"], srv.HumanName)
		}
	})

	t.Run("not allowed", func(t *testing.T) {
		p := testserver.StartProvider(t)
		p.SetUser("sub-hal", map[string]any{"preferred_username": "hal", "hd": "elsewhere.example"})
		p.SignIn("sub-hal")
		srv := oidcServer(t, p, app.OIDC{Allow: []app.ClaimMatch{{Claim: "hd", Value: "example.com"}}}, testserver.Options{})
		before := signInState(t, srv)
		f := begin(t, srv)
		if resp, body := f.back(f.callback, f.binding); resp.StatusCode != http.StatusForbidden {
			t.Errorf("answered %s:\n%s", resp.Status, body)
		}
		if after := signInState(t, srv); after != before {
			t.Errorf("store changed:\n%s\n%s", before, after)
		}
	})

	t.Run("revoked: refused until linked again", func(t *testing.T) {
		p := testserver.StartProvider(t)
		p.SetUser("sub-ivy", map[string]any{"preferred_username": "ivy"})
		p.SignIn("sub-ivy")
		srv := oidcServer(t, p, app.OIDC{Allow: []app.ClaimMatch{{Claim: "preferred_username", Value: "ivy"}}}, testserver.Options{})
		ck := oidcSignIn(t, srv)
		ctx := context.Background()
		if err := srv.App.RevokeToken(ctx, app.Itself, "ivy"); err != nil {
			t.Fatal(err)
		}
		testserver.Eventually(t, "ivy's browser session ended", func() bool {
			_, err := srv.App.BrowserCaller(ctx, ck.Value)
			return err != nil
		})
		before := signInState(t, srv)
		f := begin(t, srv)
		if resp, body := f.back(f.callback, f.binding); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "revoked") {
			t.Errorf("revoked person's sign-in answered %s:\n%s", resp.Status, body)
		}
		if after := signInState(t, srv); after != before {
			t.Errorf("store changed:\n%s\n%s", before, after)
		}
		srv.TokenWith(t, app.TokenSpec{Name: "ivy", Role: askd.RoleHuman})
		f = begin(t, srv)
		if resp, _ := f.back(f.callback, f.binding); resp.StatusCode != http.StatusForbidden {
			t.Errorf("a new token of the same name let the revoked identity in: %s", resp.Status)
		}
		if err := srv.App.LinkIdentity(ctx, app.Itself, "ivy", p.URL, "sub-ivy"); err != nil {
			t.Fatal(err)
		}
		if got := meJSON(t, srv, oidcSignIn(t, srv)); got["name"] != "ivy" {
			t.Errorf("linked again: signed in as %v", got["name"])
		}
	})

	t.Run("another issuer, the same sub: a new person", func(t *testing.T) {
		p1 := testserver.StartProvider(t)
		p1.SetUser("sub-1", map[string]any{"preferred_username": "jo"})
		p1.SignIn("sub-1")
		allow := app.OIDC{Allow: []app.ClaimMatch{{Claim: "preferred_username", Value: "jo"}}}
		first := oidcServer(t, p1, allow, testserver.Options{})
		if got := meJSON(t, first, oidcSignIn(t, first)); got["name"] != "jo" {
			t.Fatalf("first issuer: %v", got["name"])
		}
		path := first.DBPath
		first.HTTP.Close()
		p2 := testserver.StartProvider(t)
		p2.SetUser("sub-1", map[string]any{"preferred_username": "jo"})
		p2.SignIn("sub-1")
		again := testserver.StartAgainWith(t, path, testserver.Options{OIDC: func(base string) *app.OIDC {
			o := allow
			o.Name, o.Issuer = "Other SSO", p2.URL
			o.Provider = openid.New(openid.Config{Issuer: p2.URL, ClientID: p2.ClientID, ClientSecret: p2.ClientSecret, RedirectURL: base + "/auth/oidc/callback"})
			return &o
		}})
		if got := meJSON(t, again, oidcSignIn(t, again)); got["name"] != "jo-2" {
			t.Errorf("another issuer's sub-1 signed in as %v, want a new person jo-2", got["name"])
		}
	})
}

func TestOIDCClaimsSync(t *testing.T) {
	p := testserver.StartProvider(t)
	p.SignIn("sub-kim")
	srv := oidcServer(t, p, app.OIDC{RoleClaim: "groups", Admin: []string{"askd-admins"}, Approver: []string{"askd-approvers"},
		TeamClaim: "groups", TeamPrefix: "team-"}, testserver.Options{})
	ctx := context.Background()
	for _, name := range []string{"platform", "web"} {
		if _, err := srv.App.CreateTeam(ctx, app.Itself, app.TeamInput{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	teamsOf := func() []string {
		var out []string
		srv.Store.View(ctx, func(tx askd.Tx) (err error) {
			out, err = tx.Teams.TeamsOf(ctx, "kim")
			return err
		})
		return out
	}
	p.SetUser("sub-kim", map[string]any{"preferred_username": "kim", "groups": []any{"askd-approvers", "team-platform", "team-nonesuch"}})
	if got := meJSON(t, srv, oidcSignIn(t, srv)); got["access"] != "approver" {
		t.Errorf("groups say approver: %v", got["access"])
	}
	if got := teamsOf(); !slices.Equal(got, []string{"platform"}) {
		t.Errorf("teams = %v, want [platform]", got)
	}
	// Both ways: the group gone at the provider, the role and team go too.
	p.SetUser("sub-kim", map[string]any{"preferred_username": "kim", "groups": []any{"team-web"}})
	if got := meJSON(t, srv, oidcSignIn(t, srv)); got["access"] != "viewer" {
		t.Errorf("approver group removed: %v, want viewer", got["access"])
	}
	if got := teamsOf(); !slices.Equal(got, []string{"web"}) {
		t.Errorf("teams = %v, want [web]", got)
	}
	var actors []string
	rows, _ := srv.App.AuditChain(ctx, app.Itself)
	for _, r := range rows {
		if r.Action == askd.ConfigTokenRole || r.Action == askd.ConfigTeamMembers {
			actors = append(actors, r.Action+" "+r.Actor)
		}
	}
	want := "oidc:" + p.URL
	if len(actors) != 4 || slices.ContainsFunc(actors, func(a string) bool { return !strings.HasSuffix(a, " "+want) }) {
		t.Errorf("role and team rows = %v, want 4 (a team added, the role down, a team removed, one added), each by %s", actors, want)
	}
}
