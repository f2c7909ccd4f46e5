package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/mailtest"
	"github.com/askd-dev/askd/internal/testserver"
)

// Email's flags (SPEC §16): each mistake is a usage error naming the flag
// and the rule, and the password never shows, in the error or anywhere
// askd printed.
func TestServeMailFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	password := filepath.Join(dir, "password")
	if err := os.WriteFile(password, []byte("s3cret-pass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const public = "https://askd.example.com"
	ok := []string{"--notify-smtp", "smtp://mail.example.com:587", "--notify-email-from", "askd@example.com", "--public-url", public}
	with := func(extra ...string) []string { return append(append([]string{}, ok...), extra...) }
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"not a URL", []string{"--notify-smtp", "mail.example.com:587", "--notify-email-from", "askd@example.com", "--public-url", public},
			`--notify-smtp: "mail.example.com:587" is not smtp://HOST:PORT or smtps://HOST:PORT`},
		{"no port", []string{"--notify-smtp", "smtp://mail.example.com", "--notify-email-from", "askd@example.com", "--public-url", public},
			"is not smtp://HOST:PORT"},
		{"another scheme", []string{"--notify-smtp", "https://mail.example.com:587", "--notify-email-from", "askd@example.com", "--public-url", public},
			"is not smtp://HOST:PORT"},
		{"a password in the URL", []string{"--notify-smtp", "smtp://askd:s3cret-pass@mail.example.com:587", "--notify-email-from", "askd@example.com", "--public-url", public},
			"--notify-smtp: the URL may not hold a user or password: give --notify-smtp-user and --notify-smtp-password-file"},
		{"no sender", []string{"--notify-smtp", "smtp://mail.example.com:587", "--public-url", public},
			"--notify-email-from: required with --notify-smtp"},
		{"a sender with a name", []string{"--notify-smtp", "smtp://mail.example.com:587", "--notify-email-from", "askd <askd@example.com>", "--public-url", public},
			"--notify-email-from: \"askd <askd@example.com>\" is not one address"},
		{"no public URL", []string{"--notify-smtp", "smtp://mail.example.com:587", "--notify-email-from", "askd@example.com"},
			"--notify-smtp: mails carry answer links and a link to the ask, which need --public-url"},
		{"two fallback addresses in one", with("--notify-email-to", "ops@example.com;eve@example.com"),
			"--notify-email-to: \"ops@example.com;eve@example.com\" is not one address"},
		{"a fallback address with a line break", with("--notify-email-to", "ops@example.com\r\nBcc: eve@example.com"),
			"--notify-email-to: may not contain a line break"},
		{"insecure across a network", with("--notify-smtp-insecure"),
			"--notify-smtp-insecure: only for a loopback server (a relay on this machine), not mail.example.com"},
		{"a user without a password", with("--notify-smtp-user", "askd"),
			"--notify-smtp-password-file: required with --notify-smtp-user"},
		{"a password without a user", with("--notify-smtp-password-file", password),
			"--notify-smtp-user: required with --notify-smtp-password-file"},
		{"no password file", with("--notify-smtp-user", "askd", "--notify-smtp-password-file", filepath.Join(dir, "none")),
			"--notify-smtp-password-file: open"},
		{"an empty password file", with("--notify-smtp-user", "askd", "--notify-smtp-password-file", empty),
			"--notify-smtp-password-file: " + empty + " is empty"},
		{"a sender without a server", []string{"--notify-email-from", "askd@example.com"},
			"--notify-email-from: needs --notify-smtp"},
		{"a user without a server", []string{"--notify-smtp-user", "askd", "--notify-smtp-password-file", password},
			"--notify-smtp-user: needs --notify-smtp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "askd.db")}, tt.args...)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var out, errOut bytes.Buffer
			err := run(ctx, args, nil, &out, &errOut)
			if err == nil || cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("askd %q: %v (exit %d), want a usage error saying %q", args, err, cli.ExitCode(err), tt.want)
			}
			if strings.Contains(err.Error()+out.String()+errOut.String(), "s3cret-pass") {
				t.Errorf("the password shows: %v\n%s%s", err, out.String(), errOut.String())
			}
		})
	}
}

// askd serve with email set up in its flags mails the fallback address
// each new ask through the real SMTP server, over STARTTLS, authenticated
// with the password from its file; the password shows in nothing askd
// prints or logs.
func TestServeMailsTheFallbackAddress(t *testing.T) {
	ms := mailtest.Start(t, mailtest.Options{StartTLS: true, User: "askd", Password: "s3cret-pass"})
	password := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(password, []byte("s3cret-pass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var log testserver.SyncBuffer
	srv := startServeLogging(t, &log, "--log-level", "debug", "--public-url", "https://askd.example.com",
		"--notify-smtp", ms.URL(), "--notify-smtp-insecure", // a loopback server with a test's certificate
		"--notify-smtp-user", "askd", "--notify-smtp-password-file", password,
		"--notify-email-from", "askd@example.com", "--notify-email-to", "ops@example.com")
	printed := strings.Join(srv.Printed, "\n")
	if !strings.Contains(printed, "Email is on") {
		t.Errorf("askd serve did not say email is on:\n%s", printed)
	}
	a, err := client.New(srv.URL, srv.Agent).Create(t.Context(), &askd.AskInput{Kind: askd.KindDecision, Title: "Deploy?",
		Options: []askd.Option{{Label: "Yes"}, {Label: "No"}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	m := ms.WaitTo(t, "ops@example.com", 1)[0]
	if !m.TLS || m.Auth != "askd" || m.Header(t, "subject") != "Deploy?" || m.Header(t, "from") != "askd <askd@example.com>" {
		t.Errorf("the mail: TLS %v, auth %q, headers %q", m.TLS, m.Auth, m.Headers)
	}
	if m.Header(t, "list-unsubscribe") != "" {
		t.Errorf("the fallback address's mail has List-Unsubscribe: %q (it is the operator's, not a person's)", m.Header(t, "list-unsubscribe"))
	}
	text := m.Part(t, "text/plain").Text
	if !strings.Contains(text, "Yes: https://askd.example.com/a/") || !strings.Contains(text, "https://askd.example.com/?ask="+strconv.FormatInt(a.ID, 10)) {
		t.Errorf("the plain part lacks the answer links and the card's: %q", text)
	}
	if strings.Contains(printed+log.String(), "s3cret-pass") {
		t.Errorf("the password shows in what askd printed or logged")
	}
}

// askd serve --help lists the email flags, and says where the password
// comes from.
func TestServeHelpListsMailFlags(t *testing.T) {
	var out bytes.Buffer
	run(context.Background(), []string{"serve", "--help"}, nil, &out, &out)
	for _, want := range []string{"--notify-smtp string", "--notify-email-from string", "--notify-email-to value",
		"--notify-smtp-user string", "--notify-smtp-password-file string", "--notify-smtp-insecure",
		"smtp://HOST:PORT (STARTTLS) or smtps://HOST:PORT", "a file holding the SMTP password"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("serve --help lacks %q", want)
		}
	}
}
