package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd/internal/cli"
)

// Notifiers with answer buttons (ntfy, Slack) need --public-url, since a
// button linking to loopback opens nothing on a phone, and a human to answer
// as: the only human token, or --notify-as; with several and no choice askd
// serve refuses to start, naming them.
func TestServeAnswerButtonFlags(t *testing.T) {
	const public = "https://askd.example.com"
	tests := []struct {
		name   string
		humans []string // human tokens in the database before it starts
		args   []string
		want   string
	}{
		{"ntfy without a public URL", nil, []string{"--notify-ntfy", "https://ntfy.example.com/askd"},
			"--notify-ntfy: its notifications carry answer buttons, which need --public-url"},
		{"slack without a public URL", nil, []string{"--notify-slack", "https://hooks.slack.com/services/T/B/X"},
			"--notify-slack: its notifications carry answer buttons, which need --public-url"},
		{"ntfy from the environment", nil, []string{"env:ASKD_NOTIFY_NTFY=https://ntfy.example.com/askd"}, "need --public-url"},
		{"several humans, none chosen", []string{"alice", "bob"}, []string{"--notify-ntfy", "https://ntfy.example.com/askd", "--public-url", public},
			"--notify-as: there are several human tokens (alice, bob): choose one with --notify-as NAME"},
		{"an agent token chosen", []string{"alice"}, []string{"--notify-slack", "https://hooks.slack.com/services/T/B/X", "--public-url", public, "--notify-as", "agent-1"},
			`--notify-as: "agent-1" is an agent token; --notify-as takes a human token's name`},
		{"an unknown name", []string{"alice"}, []string{"--notify-ntfy", "https://ntfy.example.com/askd", "--public-url", public, "--notify-as", "carol"},
			`--notify-as: no token named "carol"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "askd.db")
			if tt.humans != nil {
				mustRun(t, "migrate", "--db", db)
				mustRun(t, "token", "create", "--agent", "agent-1", "--db", db)
				for _, h := range tt.humans {
					mustRun(t, "token", "create", "--human", h, "--db", db)
				}
			}
			args := []string{"serve", "--addr", "127.0.0.1:0", "--db", db}
			for _, a := range tt.args {
				if kv, ok := strings.CutPrefix(a, "env:"); ok {
					k, v, _ := strings.Cut(kv, "=")
					t.Setenv(k, v)
					continue
				}
				args = append(args, a)
			}
			// A server that starts after all is stopped; the test then fails.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err := run(ctx, args, nil, io.Discard, io.Discard)
			if err == nil || cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("askd %v: %v (exit %d), want a usage error saying %q", args, err, cli.ExitCode(err), tt.want)
			}
		})
	}

	t.Run("the only human", func(t *testing.T) {
		srv := startServe(t, "--notify-ntfy", "https://ntfy.example.com/askd", "--public-url", public)
		if printed := strings.Join(srv.Printed, "\n"); !strings.Contains(printed, "Answer buttons in notifications answer as owner (--notify-as).") {
			t.Errorf("askd serve did not say whom buttons answer as:\n%s", printed)
		}
	})
}

// mustRun runs askd with args and fails the test if it fails.
func mustRun(t *testing.T, args ...string) {
	t.Helper()
	if err := run(context.Background(), args, nil, io.Discard, io.Discard); err != nil {
		t.Fatalf("askd %v: %v", args, err)
	}
}
