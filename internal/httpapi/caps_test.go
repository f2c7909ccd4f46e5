package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
)

// browserSessionsOf reads the browser sessions of the human token named
// human from the store.
func browserSessionsOf(t *testing.T, s *testserver.Server, human string) []*askd.BrowserSession {
	t.Helper()
	var bs []*askd.BrowserSession
	err := s.Store.View(t.Context(), func(tx askd.Tx) (err error) {
		bs, err = tx.SignIns.BrowserSessionsOf(t.Context(), human)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

// Signing in with a human token again and again (the sign-in form) keeps
// at most app.MaxBrowserSessions browser sessions of it: each sign-in past
// that signs out the least recently used one, which then gets 401.
func TestSignInsPastTheCapEndTheLeastRecentlyUsed(t *testing.T) {
	clock := newClock()
	eachStore(t, app.Config{Now: clock.Now}, func(t *testing.T, s *testserver.Server) {
		const extra = 3
		var cookies []*http.Cookie
		for i := range app.MaxBrowserSessions + extra {
			clock.Advance(time.Second) // a last-seen time of its own
			resp := browserPost(t, s, "/signin", url.Values{"token": {s.HumanToken}}, s.URL, nil)
			ck := signInCookie(resp)
			if resp.StatusCode != http.StatusSeeOther || ck == nil {
				t.Fatalf("sign-in %d = %d to %q, no cookie", i+1, resp.StatusCode, resp.Header.Get("Location"))
			}
			cookies = append(cookies, ck)
		}
		if n := len(browserSessionsOf(t, s, s.HumanName)); n != app.MaxBrowserSessions {
			t.Errorf("%d browser sessions stored after %d sign-ins, want %d", n, app.MaxBrowserSessions+extra, app.MaxBrowserSessions)
		}
		for i, ck := range cookies {
			kept := i >= extra
			if browserSessionStored(t, s, ck) != kept {
				t.Errorf("browser session of sign-in %d stored: %v, want %v", i+1, !kept, kept)
			}
			want := http.StatusOK
			if !kept {
				want = http.StatusUnauthorized
			}
			if code, body := me(t, s, ck); code != want {
				t.Errorf("GET /api/me with the cookie of sign-in %d = %d %s, want %d", i+1, code, body, want)
			}
		}
	})
}
