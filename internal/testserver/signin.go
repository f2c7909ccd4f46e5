package testserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/askd-dev/askd/internal/app"
)

// SignedInAs follows a sign-in link as a browser does and returns who the
// cookie it gets signs in as (GET /api/me with it); "" when it gets none.
// Following it uses the link's code up.
func SignedInAs(t testing.TB, link string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, link, nil)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, ck := range resp.Cookies() {
		if ck.Name != app.BrowserCookie || ck.Value == "" {
			continue
		}
		req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(link[:strings.Index(link, "/signin")], "/")+"/api/me", nil)
		req.AddCookie(&http.Cookie{Name: ck.Name, Value: ck.Value})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var me struct{ Name, Role string }
		if err := json.NewDecoder(resp.Body).Decode(&me); err != nil || me.Role != "human" {
			t.Fatalf("GET /api/me with the cookie: %d %+v %v", resp.StatusCode, me, err)
		}
		return me.Name
	}
	return ""
}
