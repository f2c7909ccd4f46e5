package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/prometheus/client_golang/prometheus"
)

// revokedWithin bounds how long a revoked token's streams and waits may stay
// open. The tests check tokens every 20 ms (TokenCheckInterval), so they end
// at once on an idle machine; the bound is a deadline, generous for a busy
// one, not the measure (the time taken is logged).
const revokedWithin = 60 * time.Second

// revoke deletes the token named name the way `askd token revoke` does:
// straight in the store, not through the server.
func revoke(t *testing.T, s *testserver.Server, name string) {
	t.Helper()
	err := s.Store.Update(context.Background(), func(tx askd.Tx) error { return tx.Tokens.RevokeToken(context.Background(), name) })
	if err != nil {
		t.Fatal(err)
	}
}

// gauge reads one of the server's gauges from its metrics registry.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return 0
}

// waitForWaiters returns once n calls block in the server.
func waitForWaiters(t *testing.T, s *testserver.Server, n float64) {
	t.Helper()
	testserver.Eventually(t, fmt.Sprintf("%v blocked calls", n), func() bool {
		return gauge(t, s.App.Metrics.Registry, "askd_waiters") >= n
	})
}

// within fails the test unless ch yields within d, and returns what it yielded.
func within[T any](t *testing.T, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("%s: still open %v after the revocation", what, d)
	}
	var zero T
	return zero
}

func TestRevokedTokenEndsEventStream(t *testing.T) {
	// The stream is opened with a bearer token or a browser session's
	// cookie, and ended by revoking the token or by signing out.
	tests := []struct {
		name   string
		cookie bool
		end    func(t *testing.T, s *testserver.Server, human string, ck *http.Cookie)
	}{
		{"bearer token, revoked", false, func(t *testing.T, s *testserver.Server, human string, _ *http.Cookie) { revoke(t, s, human) }},
		{"browser session, token revoked", true, func(t *testing.T, s *testserver.Server, human string, _ *http.Cookie) { revoke(t, s, human) }},
		{"browser session, signed out", true, func(t *testing.T, s *testserver.Server, _ string, ck *http.Cookie) {
			req, _ := http.NewRequest(http.MethodPost, s.URL+"/signout", nil)
			req.Header.Set("Origin", s.URL)
			req.AddCookie(ck)
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("sign-out: %d", resp.StatusCode)
			}
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testserver.Start(t, testserver.Options{Config: app.Config{TokenCheckInterval: 20 * time.Millisecond}})
			ctx := ctxT(t)
			human := fmt.Sprintf("carol-%d", i)
			tok := s.Token(t, human, askd.RoleHuman)
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/events", nil)
			var ck *http.Cookie
			if tt.cookie {
				ck = s.BrowserCookie(t, human)
				req.AddCookie(ck)
			} else {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			lines := make(chan string)
			go func() {
				defer close(lines)
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					lines <- sc.Text()
				}
			}()
			if l := within(t, lines, revokedWithin, "stream start"); !strings.HasPrefix(l, "retry:") {
				t.Fatalf("stream starts %q", l)
			}

			tt.end(t, s, human, ck)
			start := time.Now()
			// The stream may carry the events already logged; it must end.
			ended := make(chan []string, 1)
			go func() {
				var got []string
				for l := range lines {
					got = append(got, l)
				}
				ended <- got
			}()
			got := within(t, ended, revokedWithin, "event stream")
			t.Logf("stream ended %v after the revocation", time.Since(start).Round(time.Millisecond))
			if !strings.Contains(strings.Join(got, "\n"), ": token revoked") {
				t.Errorf("stream ended without saying why: %q", got)
			}
			// A new ask is no longer seen, and reconnecting is refused.
			if _, err := s.Agent("after").Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "Unseen"}, 0); err != nil {
				t.Fatal(err)
			}
			again, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/events", nil)
			if ck != nil {
				again.AddCookie(ck)
			} else {
				again.Header.Set("Authorization", "Bearer "+tok)
			}
			resp2, err := http.DefaultClient.Do(again)
			if err != nil {
				t.Fatal(err)
			}
			resp2.Body.Close()
			if resp2.StatusCode != http.StatusUnauthorized {
				t.Fatalf("reconnecting after the end: %d, want 401", resp2.StatusCode)
			}
		})
	}
}

// noRedirect is a client that returns redirects as they are.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func TestRevokedTokenEndsAgentWaits(t *testing.T) {
	s := testserver.Start(t, testserver.Options{Config: app.Config{TokenCheckInterval: 20 * time.Millisecond}})
	ctx := ctxT(t)
	tests := []struct {
		name string
		// wait starts a blocking request with token and returns its outcome:
		// the HTTP status and the error message.
		wait func(tok string) (int, string)
	}{
		{"POST /api/asks?wait=", func(tok string) (int, string) {
			_, err := client.New(s.URL, tok).Create(ctx, question(false, "Which way?"), time.Hour)
			return status(err), errMessage(err)
		}},
		{"GET /api/asks/{id}?wait=", func(tok string) (int, string) {
			c := client.New(s.URL, tok)
			a, err := c.Create(ctx, question(false, "Which road?"), 0)
			if err != nil {
				return 0, err.Error()
			}
			_, err = c.Check(ctx, a.ID, time.Hour)
			return status(err), errMessage(err)
		}},
		{"Stop hook ?wait=", func(tok string) (int, string) {
			c := client.New(s.URL, tok)
			c.Session = "stopper"
			if _, err := c.Create(ctx, &askd.AskInput{Kind: askd.KindAction, Title: "Rotate the key"}, 0); err != nil {
				return 0, err.Error()
			}
			r := sendHook(ctx, s, tok, "?wait=1h", stopInput("stopper", false), map[string]string{"Askd-Session": "stopper"})
			if r.err != nil {
				return 0, r.err.Error()
			}
			return r.status, r.body
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "waiter-" + string(rune('a'+i))
			tok := s.Token(t, name, askd.RoleAgent)
			done := make(chan [2]any, 1)
			go func() {
				st, msg := tt.wait(tok)
				done <- [2]any{st, msg}
			}()
			waitForWaiters(t, s, 1)
			before := snapshot(t, s)
			revoke(t, s, name)
			got := within(t, done, revokedWithin, tt.name)
			if got[0] != http.StatusUnauthorized || !strings.Contains(got[1].(string), "token revoked") {
				t.Fatalf("wait ended with %v %v, want 401 token revoked", got[0], got[1])
			}
			// The revocation settled nothing: the asks stay pending for the person.
			if after := snapshot(t, s); after != before {
				t.Fatal("ending the wait changed the store")
			}
		})
	}
}

func errMessage(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
