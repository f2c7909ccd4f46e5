package admincmd

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/testserver"
)

func TestSignInLinkCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "askd.db")
	askdCLI(t, "migrate", "--db", db)
	askdCLI(t, "token", "create", "--human", "carol", "--db", db)
	askdCLI(t, "token", "create", "--agent", "robot", "--db", db)
	// Only one human token yet: --human may be left out.
	var got struct {
		Human     string    `json:"human"`
		URL       string    `json:"url"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	out := askdCLI(t, "signin-link", "--db", db, "--url", "http://127.0.0.1:1/", "--json")
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json output %q: %v", out, err)
	}
	if got.Human != "carol" || !strings.HasPrefix(got.URL, "http://127.0.0.1:1/signin?code=") || time.Until(got.ExpiresAt) > app.SignInCodeTTL {
		t.Errorf("signin-link --json = %+v", got)
	}

	srv := testserver.Start(t, testserver.Options{DBPath: db}) // adds alice, a second human
	text := askdCLI(t, "signin-link", "--db", db, "--human", "carol", "--url", srv.URL)
	link := strings.TrimSpace(text[strings.Index(text, srv.URL):])
	if strings.Contains(text, srv.HumanToken) {
		t.Errorf("the output shows a token: %q", text)
	}
	if who := testserver.SignedInAs(t, link); who != "carol" {
		t.Errorf("the link signed in as %q, want carol", who)
	}
	if who := testserver.SignedInAs(t, link); who != "" {
		t.Errorf("the link worked twice, as %q", who)
	}

	for _, tt := range []struct {
		name string
		args []string
		code string
		msg  string
	}{
		{"several humans, none chosen", nil, askd.EINVALID, "--human NAME"},
		{"an agent token", []string{"--human", "robot"}, askd.EINVALID, "agent token"},
		{"no such token", []string{"--human", "dave"}, askd.ENOTFOUND, "dave"},
		{"a URL that is not one", []string{"--url", "127.0.0.1:7777"}, "usage", "--url"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := runCLI(t, append([]string{"signin-link", "--db", db}, tt.args...)...)
			code := askd.ErrorCode(err)
			if cli.ExitCode(err) == 2 {
				code = "usage"
			}
			if err == nil || code != tt.code || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v (code %q), want code %q mentioning %q", err, code, tt.code, tt.msg)
			}
			if out != "" {
				t.Errorf("printed %q", out)
			}
		})
	}
}
