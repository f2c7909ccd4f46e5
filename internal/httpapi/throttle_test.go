package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
)

type reply struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, req *http.Request) reply {
	t.Helper()
	resp, err := http.DefaultTransport.RoundTrip(req) // no redirects followed
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, string(b)}
}

func bearerGet(t *testing.T, s *testserver.Server, path, token string) reply {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	return do(t, req)
}

// wantThrottled checks a refusal is 429 with Retry-After and names the rule.
func wantThrottled(t *testing.T, what string, r reply) {
	t.Helper()
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	if r.status != http.StatusTooManyRequests || err != nil || secs < 1 || !strings.Contains(r.body, "at most 10 wrong tokens") {
		t.Fatalf("%s: %d Retry-After %q %s, want 429 with Retry-After naming the rule", what, r.status, r.header.Get("Retry-After"), r.body)
	}
}

func TestGuessingTokensIsThrottled(t *testing.T) {
	clk := &clock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	s := testserver.Start(t, testserver.Options{Config: app.Config{Now: clk.Now}})
	ctx := ctxT(t)
	// The agent is in use before anyone starts guessing.
	if _, err := s.Agent("busy").Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "Before"}, 0); err != nil {
		t.Fatal(err)
	}
	fresh := s.Token(t, "never-used", askd.RoleAgent)
	before := snapshot(t, s)

	counts := map[int]int{}
	var last reply
	for i := range 300 {
		last = bearerGet(t, s, "/api/asks", "askd_a_guess"+strconv.Itoa(i))
		counts[last.status]++
	}
	if counts[http.StatusUnauthorized] != 10 || counts[http.StatusTooManyRequests] != 290 {
		t.Fatalf("300 wrong tokens got %v, want 10 × 401 then 290 × 429", counts)
	}
	wantThrottled(t, "the 300th wrong token", last)

	tests := []struct {
		name string
		req  func() *http.Request
		want int // 0: throttled
	}{
		{"token in use is served", func() *http.Request {
			req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/asks", nil)
			req.Header.Set("Authorization", "Bearer "+s.AgentToken)
			return req
		}, http.StatusOK},
		{"human token in use is served", func() *http.Request {
			req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/sessions", nil)
			req.Header.Set("Authorization", "Bearer "+s.HumanToken)
			return req
		}, http.StatusOK},
		{"token this server never saw waits", func() *http.Request {
			req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/asks", nil)
			req.Header.Set("Authorization", "Bearer "+fresh)
			return req
		}, 0},
		{"wrong cookie", func() *http.Request {
			req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/asks", nil)
			req.AddCookie(&http.Cookie{Name: app.BrowserCookie, Value: "a-guessed-browser-session"})
			return req
		}, 0},
		{"hook with a wrong token", func() *http.Request {
			req, _ := http.NewRequest(http.MethodPost, s.URL+"/hooks/claude", strings.NewReader(`{}`))
			req.Header.Set("Authorization", "Bearer askd_a_guess")
			return req
		}, 0},
		{"sign-in link", func() *http.Request {
			req, _ := http.NewRequest(http.MethodGet, s.URL+"/signin?code=a-guessed-code", nil)
			return req
		}, 0},
		{"sign-in form", func() *http.Request {
			req, _ := http.NewRequest(http.MethodPost, s.URL+"/signin", strings.NewReader(url.Values{"token": {"askd_h_guess"}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", s.URL)
			return req
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, tt.req())
			if tt.want == 0 {
				wantThrottled(t, tt.name, r)
			} else if r.status != tt.want {
				t.Fatalf("status %d %s, want %d", r.status, r.body, tt.want)
			}
		})
	}
	if after := snapshot(t, s); after != before {
		t.Fatal("the refused requests changed the store")
	}

	// Time forgives one failure per 6 s: after Retry-After, one more wrong
	// token is answered 401, the next is throttled again.
	secs, _ := strconv.Atoi(last.header.Get("Retry-After"))
	clk.Advance(time.Duration(secs) * time.Second)
	if r := bearerGet(t, s, "/api/asks", "askd_a_later"); r.status != http.StatusUnauthorized {
		t.Fatalf("after Retry-After: %d %s, want 401", r.status, r.body)
	}
	wantThrottled(t, "the next wrong token", bearerGet(t, s, "/api/asks", "askd_a_later2"))
	// A sign-in link with a real code works once the address is clear.
	clk.Advance(time.Hour)
	r := do(t, mustRequest(t, http.MethodGet, s.SignInLink(t, s.HumanName)))
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/" {
		t.Fatalf("sign-in after an hour: %d %s, want 303 to /", r.status, r.header.Get("Location"))
	}
	if _, err := client.New(s.URL, fresh).List(context.Background(), client.ListOptions{}); err != nil {
		t.Fatalf("the unused token after an hour: %v", err)
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
