package main

import (
	"bufio"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askd-dev/askd/internal/testserver"
)

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
	if who := testserver.SignedInAs(t, link); who != "owner" {
		t.Errorf("the first-start link signed in as %q, want owner", who)
	}
}
