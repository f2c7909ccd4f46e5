package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
)

// clock is a test's injected time, moved on by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Now()} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

// browserGet is a browser's GET that follows no redirect: it returns the
// response, its body closed, so the test reads its status and headers.
func browserGet(t *testing.T, rawURL string, ck *http.Cookie) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ck != nil {
		req.AddCookie(ck)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// browserPost posts a form as the sign-in and sign-out pages do.
func browserPost(t *testing.T, s *testserver.Server, path string, form url.Values, origin string, ck *http.Cookie) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if ck != nil {
		req.AddCookie(ck)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// signInCookie returns the browser-session cookie resp sets, nil when none.
func signInCookie(resp *http.Response) *http.Cookie {
	for _, ck := range resp.Cookies() {
		if ck.Name == app.BrowserCookie && ck.MaxAge >= 0 && ck.Value != "" {
			return ck
		}
	}
	return nil
}

// me returns the status of GET /api/me with ck, and the name it answers.
func me(t *testing.T, s *testserver.Server, ck *http.Cookie) (int, string) {
	t.Helper()
	code, body := rawRequest(t, s, "GET", "/api/me", "", "", map[string]string{"Cookie": ck.Name + "=" + ck.Value})
	return code, body
}

// browserSessionStored reports whether the store holds the browser session
// whose id is the cookie's value.
func browserSessionStored(t *testing.T, s *testserver.Server, ck *http.Cookie) bool {
	t.Helper()
	err := s.Store.View(t.Context(), func(tx askd.Tx) error {
		_, err := tx.SignIns.BrowserSession(t.Context(), app.HashToken(ck.Value))
		return err
	})
	switch askd.ErrorCode(err) {
	case "":
		return true
	case askd.ENOTFOUND:
		return false
	}
	t.Fatal(err)
	return false
}

func TestSignInLinkWorksOnce(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	link := s.SignInLink(t, s.HumanName)

	resp := browserGet(t, link, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("sign-in link: %d to %q, want 303 to /", resp.StatusCode, resp.Header.Get("Location"))
	}
	if rp := resp.Header.Get("Referrer-Policy"); rp != "no-referrer" {
		t.Errorf("sign-in link's Referrer-Policy %q, want no-referrer", rp)
	}
	ck := signInCookie(resp)
	if ck == nil {
		t.Fatal("no browser-session cookie")
	}
	code := link[strings.Index(link, "code=")+len("code="):]
	if ck.Value == s.HumanToken || ck.Value == code || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" || ck.Secure {
		t.Errorf("cookie %s: want a new id, HttpOnly, SameSite=Strict, Path=/, not Secure over plain HTTP", ck)
	}
	if code, body := me(t, s, ck); code != 200 || !strings.Contains(body, `"name":"`+s.HumanName+`"`) || !strings.Contains(body, `"role":"human"`) {
		t.Errorf("GET /api/me with the cookie: %d %s", code, body)
	}

	again := browserGet(t, link, nil)
	if again.StatusCode != http.StatusSeeOther || again.Header.Get("Location") != "/signin.html?error=code" || signInCookie(again) != nil {
		t.Errorf("second use: %d to %q, cookie %v; want 303 to the sign-in page, no cookie", again.StatusCode, again.Header.Get("Location"), signInCookie(again))
	}
}

// Behind a TLS proxy (an https --public-url) askd sees plain HTTP, and the
// cookie is Secure all the same.
func TestSignInCookieSecureBehindTLSProxy(t *testing.T) {
	s := testserver.Start(t, testserver.Options{SecureCookies: true})
	ck := signInCookie(browserGet(t, s.SignInLink(t, s.HumanName), nil))
	if ck == nil || !ck.Secure {
		t.Fatalf("cookie %v, want Secure", ck)
	}
}

func TestSignInLinkExpires(t *testing.T) {
	tests := []struct {
		name   string
		age    time.Duration
		signed bool
	}{
		{"just made", 0, true},
		{"a second before expiry", app.SignInCodeTTL - time.Second, true},
		{"at expiry", app.SignInCodeTTL, false},
		{"an hour later", time.Hour, false},
	}
	clk := newClock()
	s := testserver.Start(t, testserver.Options{Config: app.Config{Now: clk.Now}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			link := s.SignInLink(t, s.HumanName)
			clk.Advance(tt.age)
			resp := browserGet(t, link, nil)
			if got := signInCookie(resp) != nil; got != tt.signed {
				t.Fatalf("signed in = %v (%d to %q), want %v", got, resp.StatusCode, resp.Header.Get("Location"), tt.signed)
			}
			if !tt.signed && resp.Header.Get("Location") != "/signin.html?error=code" {
				t.Errorf("refused to %q", resp.Header.Get("Location"))
			}
		})
	}
}

func TestSignInLinkWithTokenRefused(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	resp := browserGet(t, s.URL+"/signin?token="+url.QueryEscape(s.HumanToken), nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/signin.html?error=token-link" {
		t.Errorf("/signin?token=: %d to %q, want 303 to the sign-in page's message", resp.StatusCode, resp.Header.Get("Location"))
	}
	if len(resp.Cookies()) != 0 {
		t.Errorf("/signin?token= set cookies %v", resp.Cookies())
	}
}

func TestSignInForm(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	tests := []struct {
		name     string
		token    string
		origin   string
		status   int
		location string
		signed   bool
	}{
		{"human token", s.HumanToken, s.URL, http.StatusSeeOther, "/", true},
		{"agent token", s.AgentToken, s.URL, http.StatusSeeOther, "/signin.html?error=agent", false},
		{"unknown token", "askd_h_nope", s.URL, http.StatusSeeOther, "/signin.html?error=unknown", false},
		{"empty", "", s.URL, http.StatusSeeOther, "/signin.html", false},
		{"no Origin", s.HumanToken, "", http.StatusForbidden, "", false},
		{"foreign Origin", s.HumanToken, "https://evil.example", http.StatusForbidden, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := browserPost(t, s, "/signin", url.Values{"token": {tt.token}}, tt.origin, nil)
			if resp.StatusCode != tt.status || resp.Header.Get("Location") != tt.location {
				t.Fatalf("got %d to %q, want %d to %q", resp.StatusCode, resp.Header.Get("Location"), tt.status, tt.location)
			}
			ck := signInCookie(resp)
			if (ck != nil) != tt.signed {
				t.Fatalf("cookie %v, want one: %v", ck, tt.signed)
			}
			if ck == nil {
				return
			}
			if ck.Value == tt.token {
				t.Error("the cookie holds the token")
			}
			if code, _ := me(t, s, ck); code != 200 {
				t.Errorf("GET /api/me with the cookie: %d", code)
			}
		})
	}
}

func TestTokenAsCookieRefused(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	for _, ck := range []*http.Cookie{
		{Name: app.BrowserCookie, Value: s.HumanToken},
		{Name: app.BrowserCookie, Value: s.AgentToken},
		{Name: "askd_token", Value: s.HumanToken}, // the cookie older askds set
	} {
		if code, body := me(t, s, ck); code != 401 {
			t.Errorf("cookie %s=%.10s…: %d %s, want 401", ck.Name, ck.Value, code, body)
		}
	}
}

func TestSignOutEndsBrowserSession(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ck := s.BrowserCookie(t, s.HumanName)

	// Refused from another origin: the browser session goes on.
	if resp := browserPost(t, s, "/signout", nil, "https://evil.example", ck); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin sign-out: %d, want 403", resp.StatusCode)
	}
	if code, _ := me(t, s, ck); code != 200 {
		t.Fatalf("after a refused sign-out: %d", code)
	}

	resp := browserPost(t, s, "/signout", nil, s.URL, ck)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/signin.html" {
		t.Fatalf("sign-out: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	cleared := false
	for _, c := range resp.Cookies() {
		cleared = cleared || c.Name == app.BrowserCookie && c.MaxAge < 0
	}
	if !cleared {
		t.Errorf("sign-out did not clear the cookie: %v", resp.Cookies())
	}
	if browserSessionStored(t, s, ck) {
		t.Error("the browser session is still stored after signing out")
	}
	// A copy of the cookie, kept from before, works no more.
	if code, body := me(t, s, ck); code != 401 {
		t.Errorf("the old cookie after signing out: %d %s, want 401", code, body)
	}
}

func TestRevokingTokenEndsBrowserSessions(t *testing.T) {
	clk := newClock()
	s := testserver.Start(t, testserver.Options{Config: app.Config{Now: clk.Now}})
	s.Token(t, "bob", askd.RoleHuman)
	alice, bob := s.BrowserCookie(t, s.HumanName), s.BrowserCookie(t, "bob")
	if code, _ := me(t, s, alice); code != 200 {
		t.Fatalf("before revoking: %d", code)
	}
	// As askd token revoke does it: on the database, maybe from another process.
	if err := s.Store.Update(t.Context(), func(tx askd.Tx) error { return tx.Tokens.RevokeToken(t.Context(), s.HumanName) }); err != nil {
		t.Fatal(err)
	}
	if browserSessionStored(t, s, alice) {
		t.Error("the revoked token's browser session is still stored")
	}
	clk.Advance(10 * time.Second) // past what the server remembers of a browser session
	if code, body := me(t, s, alice); code != 401 {
		t.Errorf("the revoked token's cookie: %d %s, want 401", code, body)
	}
	if code, _ := me(t, s, bob); code != 200 {
		t.Errorf("another person's cookie after the revocation: %d", code)
	}
}
