package main

import (
	"bufio"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// served is an `askd serve` running in the test process on 127.0.0.1:0:
// the real command, flags, http.Server settings and first-start tokens.
type served struct {
	URL, Host    string
	Human, Agent string
	DB           string
}

// startServe runs `askd serve` with args on a new SQLite file until the test ends.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	s := &served{DB: filepath.Join(t.TempDir(), "askd.db")}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", s.DB, "--log-level", "error"}, args...)
		done <- run(ctx, args, nil, pw, io.Discard)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("askd serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("askd serve did not stop")
		}
	})
	lines := bufio.NewScanner(pr)
	for lines.Scan() {
		l := lines.Text()
		if _, rest, ok := strings.Cut(l, " listening on "); ok {
			s.URL, _, _ = strings.Cut(rest, " ")
			s.Host = strings.TrimPrefix(s.URL, "http://")
		}
		if _, tok, ok := strings.Cut(l, "human token (answers in the inbox): "); ok {
			s.Human = tok
		}
		if _, tok, ok := strings.Cut(l, "agent token (asks):"); ok {
			s.Agent = strings.TrimSpace(tok)
		}
		if strings.HasPrefix(l, "Wire an agent:") {
			break
		}
	}
	go io.Copy(io.Discard, pr) // it prints nothing more, but must never block
	if s.URL == "" || s.Human == "" || s.Agent == "" {
		select {
		case err := <-done:
			t.Fatalf("askd serve did not start: %v", err)
		default:
			t.Fatalf("askd serve printed no address or tokens")
		}
	}
	return s
}
