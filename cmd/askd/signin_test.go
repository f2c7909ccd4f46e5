package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/testserver"
)

// askdCLI runs the CLI and returns its output, failing the test on an error.
func askdCLI(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(t.Context(), args, nil, &out, &errOut); err != nil {
		t.Fatalf("askd %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// signInAs follows link as a browser and returns who the cookie it gets
// signs in as; "" when it gets none.
func signInAs(t *testing.T, link string) string {
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
	if who := signInAs(t, link); who != "carol" {
		t.Errorf("the link signed in as %q, want carol", who)
	}
	if who := signInAs(t, link); who != "" {
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
			var out, errOut bytes.Buffer
			err := run(t.Context(), append([]string{"signin-link", "--db", db}, tt.args...), nil, &out, &errOut)
			code := askd.ErrorCode(err)
			if cli.ExitCode(err) == 2 {
				code = "usage"
			}
			if err == nil || code != tt.code || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v (code %q), want code %q mentioning %q", err, code, tt.code, tt.msg)
			}
			if out.Len() != 0 {
				t.Errorf("printed %q", out.String())
			}
		})
	}
}

// TestServeFirstStartPrintsCodeLink: askd serve on an empty database prints
// a sign-in link with a one-time code, not the token, and the link works.
func TestServeFirstStartPrintsCodeLink(t *testing.T) {
	db := filepath.Join(t.TempDir(), "askd.db")
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--log-level", "error"}, nil, pw, io.Discard)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	var (
		link, human string
		printed     strings.Builder
	)
	sc := bufio.NewScanner(pr)
	for link == "" && sc.Scan() {
		line := sc.Text()
		printed.WriteString(line + "\n")
		if _, tok, ok := strings.Cut(line, "human token (answers in the inbox): "); ok {
			human = strings.TrimSpace(tok)
		}
		if _, l, ok := strings.Cut(line, "Open the inbox: "); ok {
			link = strings.TrimSpace(l)
		}
	}
	go io.Copy(io.Discard, pr) // the rest, so serve never blocks writing
	if link == "" || human == "" {
		t.Fatalf("serve printed no sign-in link or human token:\n%s", printed.String())
	}
	if strings.Contains(link, human) || strings.Contains(link, "token=") || !strings.Contains(link, "/signin?code=") {
		t.Errorf("sign-in link %q: want a code, not the token", link)
	}
	if who := signInAs(t, link); who != "owner" {
		t.Errorf("the first-start link signed in as %q, want owner", who)
	}
}
