package main

import (
	"context"
	"encoding/json"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
)

// One wrong token from one address slows that address alone. The attack is
// done on the real binary: one wrong bearer token from 127.0.0.1; then,
// from 127.0.0.2, which never failed, everything a person and a new agent
// do must work: the sign-in form with the human token, a sign-in code just
// minted, a brand-new agent token, an answer link; the answer is read back.
// The failing address is then refused past its burst, and a third address
// still signs in.
func TestOneFailedAuthenticationLocksNoOneElseOut(t *testing.T) {
	ntfy := make(chan http.Header, 8)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case ntfy <- r.Header.Clone():
		default:
		}
	}))
	t.Cleanup(receiver.Close)
	srv := testserver.ServeBinary(t, "--notify-ntfy", receiver.URL+"/askd", "--public-url", "https://askd.example.com")
	failing, other := from(t, "127.0.0.1"), from(t, "127.0.0.2")

	// An agent is in use at the failing address; then the attack: one wrong
	// token.
	if r := failing.bearerGet(t, srv.URL+"/api/asks", srv.Agent); r.status != http.StatusOK {
		t.Fatalf("the agent token: %d %s, want 200", r.status, r.body)
	}
	if r := failing.bearerGet(t, srv.URL+"/api/asks", "askd_a_wrong"); r.status != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %d %s, want 401", r.status, r.body)
	}

	t.Run("sign-in form", func(t *testing.T) {
		other.signInForm(t, srv.URL, srv.Human)
	})
	t.Run("sign-in code just minted", func(t *testing.T) {
		out := strings.TrimSpace(testserver.Output(t, "signin-link", "--db", srv.DB))
		code := signInCode(t, out[strings.LastIndex(out, "http"):])
		r := other.do(t, newRequest(t, http.MethodGet, srv.URL+"/signin?code="+code, nil))
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/" {
			t.Fatalf("sign-in code: %d to %q %s, want 303 to /", r.status, r.header.Get("Location"), r.body)
		}
		other.wantHuman(t, srv.URL, r.cookie(t))
	})
	var (
		ask   *askd.Ask
		agent *client.Client
	)
	t.Run("a new agent token", func(t *testing.T) {
		out := strings.Fields(testserver.Output(t, "token", "create", "--agent", "fresh", "--db", srv.DB))
		agent = client.New(srv.URL, out[len(out)-1])
		agent.HTTP = &http.Client{Transport: other.tr}
		a, err := agent.Create(t.Context(), &askd.AskInput{Kind: askd.KindDecision, Title: "Which database?",
			Options: []askd.Option{{Label: "SQLite"}, {Label: "Postgres"}}}, 0)
		if err != nil {
			t.Fatalf("the new agent token's first request: %v", err)
		}
		ask = a
	})
	t.Run("answer link", func(t *testing.T) {
		if ask == nil {
			t.Skip("no ask")
		}
		var h http.Header
		select {
		case h = <-ntfy:
		case <-time.After(30 * time.Second):
			t.Fatal("no ntfy notification within 30 s")
		}
		// ntfy decodes the header's encoded words, then reads the JSON
		// form of its actions.
		decoded, err := new(mime.WordDecoder).DecodeHeader(h.Get("Actions"))
		if err != nil {
			t.Fatalf("Actions %q: %v", h.Get("Actions"), err)
		}
		var buttons []struct{ Label, URL string }
		if err := json.Unmarshal([]byte(decoded), &buttons); err != nil {
			t.Fatalf("Actions %q: %v", decoded, err)
		}
		var m []string
		for _, b := range buttons {
			if b.Label == "Postgres" {
				m = regexp.MustCompile(`/a/([a-z2-7]{26})$`).FindStringSubmatch(b.URL)
			}
		}
		if m == nil {
			t.Fatalf("no Postgres button in the notification's actions %s", decoded)
		}
		req := newRequest(t, http.MethodPost, srv.URL+"/a/"+m[1], strings.NewReader("confirm=1"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if r := other.do(t, req); r.status != http.StatusOK {
			t.Fatalf("tapping the answer link: %d %s, want 200", r.status, r.body)
		}
		got, err := agent.Check(t.Context(), ask.ID, 0)
		if err == nil && (got.Status != askd.StatusAnswered || got.Answer == nil || got.Answer.Answer != "Postgres") {
			t.Fatalf("ask %d after the tap: %s %+v, want answered Postgres", ask.ID, got.Status, got.Answer)
		}
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("the failing address past its burst", func(t *testing.T) {
		// Its one failure may have been forgiven meanwhile (one per 6 s).
		var unauthorized int
		var last reply
		for range 20 {
			if last = failing.bearerGet(t, srv.URL+"/api/asks", "askd_a_wrong"); last.status != http.StatusUnauthorized {
				break
			}
			unauthorized++
		}
		secs, err := strconv.Atoi(last.header.Get("Retry-After"))
		if last.status != http.StatusTooManyRequests || unauthorized < 9 || unauthorized > 10 || err != nil || secs < 1 || secs > 6 {
			t.Fatalf("%d more wrong tokens answered 401, then %d with Retry-After %q; want 9 or 10, then 429 within 6 s",
				unauthorized, last.status, last.header.Get("Retry-After"))
		}
		if r := failing.bearerGet(t, srv.URL+"/api/asks", srv.Agent); r.status != http.StatusOK {
			t.Fatalf("a token in use, from the throttled address: %d %s, want 200", r.status, r.body)
		}
		from(t, "127.0.0.3").signInForm(t, srv.URL, srv.Human)
	})
}

// source sends requests from one loopback address (all of 127.0.0.0/8 is
// loopback), following no redirect.
type source struct{ tr *http.Transport }

func from(t *testing.T, ip string) *source {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &source{tr}
}

type reply struct {
	status int
	header http.Header
	body   string
}

// cookie is the browser session's cookie the reply sets.
func (r reply) cookie(t *testing.T) *http.Cookie {
	t.Helper()
	for _, ck := range (&http.Response{Header: r.header}).Cookies() {
		if ck.Name == app.BrowserCookie && ck.Value != "" {
			return &http.Cookie{Name: ck.Name, Value: ck.Value} // Secure, for the https public URL: sent by hand
		}
	}
	t.Fatalf("no %s cookie set: %v", app.BrowserCookie, r.header["Set-Cookie"])
	return nil
}

func (s *source) do(t *testing.T, req *http.Request) reply {
	t.Helper()
	resp, err := s.tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, string(b)}
}

func (s *source) bearerGet(t *testing.T, u, token string) reply {
	t.Helper()
	req := newRequest(t, http.MethodGet, u, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	return s.do(t, req)
}

// signInForm signs in with the sign-in page's form, and checks the browser
// session it starts.
func (s *source) signInForm(t *testing.T, base, token string) {
	t.Helper()
	req := newRequest(t, http.MethodPost, base+"/signin", strings.NewReader(url.Values{"token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	r := s.do(t, req)
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/" {
		t.Fatalf("sign-in form: %d to %q Retry-After %q %s, want 303 to /", r.status, r.header.Get("Location"), r.header.Get("Retry-After"), r.body)
	}
	s.wantHuman(t, base, r.cookie(t))
}

// wantHuman checks that ck is a human's browser session.
func (s *source) wantHuman(t *testing.T, base string, ck *http.Cookie) {
	t.Helper()
	req := newRequest(t, http.MethodGet, base+"/api/me", nil)
	req.AddCookie(ck)
	if r := s.do(t, req); r.status != http.StatusOK || !strings.Contains(r.body, `"role":"human"`) {
		t.Fatalf("GET /api/me with the cookie: %d %s", r.status, r.body)
	}
}

func newRequest(t *testing.T, method, u string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
