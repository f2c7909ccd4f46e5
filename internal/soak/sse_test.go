package soak_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
)

// An inbox event stream whose reader never reads — its TCP receive window
// and the server's send buffer filled by many large events — holds up no
// other stream: a live reader sees every new event within a second.
func TestStalledEventReader(t *testing.T) {
	db := filepath.Join(t.TempDir(), "askd.db")
	tok := newTokens(t, db)
	srv := startServer(t, db, "--max-pending", "1000")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The stalled reader: a raw connection with a small receive buffer that
	// sends the request and then reads nothing.
	u, _ := url.Parse(srv.URL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.(*net.TCPConn).SetReadBuffer(4 << 10); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET /api/events HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n", u.Host, tok.human)

	live, err := client.New(srv.URL, tok.human).Events(ctx, -1)
	if err != nil {
		t.Fatal(err)
	}
	agent := client.New(srv.URL, tok.agent)
	human := client.New(srv.URL, tok.human)
	details := strings.Repeat("d", askd.MaxDetailsBytes-64)

	// Each ask makes two events (created, settled) carrying its 16 KiB of
	// details: 300 asks are about 10 MB the stalled reader never takes.
	const asks = 300
	var worst time.Duration
	began := time.Now()
	seen := map[int64]bool{}
	for i := range asks {
		agent.Session = fmt.Sprintf("sse-%d", i%10)
		a, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindAction, Title: fmt.Sprintf("event %d", i), Details: details}, 0)
		if err != nil {
			t.Fatal(err)
		}
		created := time.Now()
		for !seen[a.ID] {
			select {
			case ev, ok := <-live:
				if !ok {
					t.Fatalf("the live stream ended after %d asks", i)
				}
				if ev.Type == "ask.created" {
					seen[ev.Event.AskID] = true
				}
			case <-time.After(time.Second):
				t.Fatalf("ask %d (%d of %d): the live stream did not see it created within 1 s", a.ID, i+1, asks)
			}
		}
		worst = max(worst, time.Since(created))
		if _, err := human.Answer(ctx, a.ID, &askd.Answer{Answer: "done"}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d asks in %s, %d MB of events unread by the stalled stream; the live stream's slowest: %s", asks, time.Since(began).Round(time.Millisecond), 2*asks*len(details)>>20, worst.Round(time.Microsecond))

	// The stalled reader is still connected, or was cut off by the server's
	// write deadline; either way the server is fine.
	resp, err := http.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}
