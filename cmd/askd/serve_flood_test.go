//go:build unix

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// openFiles makes room for n more open files in this process (client and
// server ends of the flood both live here) and returns how many fit.
func openFiles(t *testing.T, n int) int {
	t.Helper()
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	want := uint64(2*n + 256)
	if rl.Cur < want && rl.Cur < rl.Max {
		rl.Cur = min(want, rl.Max)
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			t.Fatal(err)
		}
	}
	if rl.Cur < want {
		n = int(rl.Cur-256) / 2
	}
	return n
}

// slowPost opens a connection and starts a POST whose body of 100,000 bytes
// will come one byte a second.
func slowPost(t *testing.T, host, path, token string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	if _, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\n%sContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", path, host, auth); err != nil {
		t.Fatal(err)
	}
	return c
}

// trickle sends each connection one more byte a second, as a slow client
// does, until stop is closed; a connection the server closed drops out.
func trickle(conns []net.Conn, stop <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	open := make(map[net.Conn]bool, len(conns))
	for _, c := range conns {
		open[c] = true
	}
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		for c := range open {
			_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			if _, err := c.Write([]byte(" ")); err != nil {
				delete(open, c)
			}
		}
	}
}

// refusedAndClosed reads the response on c: want status, a message
// containing msg, and the server closing the connection.
func refusedAndClosed(c net.Conn, status int, msg string) error {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return fmt.Errorf("no response: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status || !strings.Contains(string(body), msg) {
		return fmt.Errorf("got %d %s, want %d %q", resp.StatusCode, body, status, msg)
	}
	if !resp.Close { // Connection: close (ReadResponse takes the header out)
		return fmt.Errorf("response does not say Connection: close")
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return fmt.Errorf("connection not closed after the refusal: %v", err)
	}
	return nil
}

// A thousand unauthenticated clients each sending a body one byte a second
// hold nothing: each is refused at once without its body being read, its
// connection closed, and a client with a token is served meanwhile.
func TestSlowBodyFloodLeavesOthersServed(t *testing.T) {
	n := openFiles(t, 1000)
	if n < 1000 {
		t.Logf("open-file limit: flooding with %d connections", n)
	}
	srv := startServe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	agent := client.New(srv.URL, srv.Agent)

	start := time.Now()
	conns := make([]net.Conn, n)
	for i := range conns {
		conns[i] = slowPost(t, srv.Host, "/api/asks", "")
	}
	opened := time.Since(start)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { trickle(conns, stop) })
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
		for _, c := range conns {
			c.Close()
		}
	})

	// During the flood: an agent asks and a person reads the inbox.
	t0 := time.Now()
	a, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "During the flood"}, 0)
	if err != nil {
		t.Fatalf("authenticated request during the flood: %v", err)
	}
	createTook := time.Since(t0)
	t0 = time.Now()
	asks, err := client.New(srv.URL, srv.Human).List(ctx, client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	listTook := time.Since(t0)
	t.Logf("%d slow unauthenticated POSTs opened in %v; meanwhile an agent's POST /api/asks took %v, a person's GET /api/asks %v",
		n, opened.Round(time.Millisecond), createTook.Round(time.Microsecond), listTook.Round(time.Microsecond))

	failed := 0
	for i, c := range conns {
		if err := refusedAndClosed(c, http.StatusUnauthorized, "no token"); err != nil {
			if failed++; failed <= 3 {
				t.Errorf("flood connection %d: %v", i, err)
			}
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d flood connections not refused and closed", failed, n)
	}
	t.Logf("all %d refused with 401 and closed within %v of the first", n, time.Since(start).Round(time.Millisecond))
	// Nothing the flood sent was stored: the only ask is the agent's.
	if len(asks) != 1 || asks[0].ID != a.ID {
		t.Fatalf("the inbox holds %d asks, want only the agent's", len(asks))
	}
}

// Refusals by role, and bodies from clients with a token that come too
// slowly, hold a connection no longer than --body-timeout; waits and event
// streams that outlast it are not cut.
func TestBodyTimeoutSparesWaitsAndStreams(t *testing.T) {
	const bodyTimeout = 300 * time.Millisecond
	srv := startServe(t, "--body-timeout", bodyTimeout.String(), "--question-timeout", "1s")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// A human token on the agents' path is refused at once, body unread.
	c := slowPost(t, srv.Host, "/api/asks", srv.Human)
	if err := refusedAndClosed(c, http.StatusForbidden, "human tokens cannot POST /api/asks"); err != nil {
		t.Errorf("wrong role: %v", err)
	}
	c.Close()
	// An agent whose body stalls is cut off after the body timeout.
	c = slowPost(t, srv.Host, "/api/asks", srv.Agent)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	t0 := time.Now()
	raw, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("stalled body: connection not closed: %v", err)
	}
	if !strings.HasPrefix(string(raw), "HTTP/1.1 400") || !strings.Contains(string(raw), "body: not received in time") {
		t.Errorf("stalled body answered %q, want 400 saying so", raw)
	}
	t.Logf("an agent's stalled body was cut off after %v", time.Since(t0).Round(time.Millisecond))
	c.Close()

	// An event stream opened now must still deliver after the waits below,
	// each of which outlasts the body timeout.
	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	events, err := client.New(srv.URL, srv.Human).Events(sctx, -1)
	if err != nil {
		t.Fatal(err)
	}
	agent := client.New(srv.URL, srv.Agent)
	a, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{{
		Question: "Slow?", Header: "Slow", Options: []askd.Option{{Label: "yes"}, {Label: "no"}},
	}}}, 3*bodyTimeout) // POST with a body, then a wait
	if err != nil || !a.Pending() {
		t.Fatalf("POST ?wait= longer than the body timeout: %v %+v", err, a)
	}
	a, err = agent.Check(ctx, a.ID, time.Minute) // until the question times out (1 s)
	if err != nil || a.CancelReason != askd.ReasonTimeout {
		t.Fatalf("GET ?wait= until the question's timeout: %v %+v", err, a)
	}
	// A blocking MCP call, parked on its connection, also outlasts it.
	mt := &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: client.Transport{Token: srv.Agent, Session: "mcp", Base: http.DefaultTransport}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "askd-test", Version: "1"}, nil).Connect(ctx, mt, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_user_question", Arguments: map[string]any{"questions": []map[string]any{{
		"question": "Still there?", "header": "MCP", "options": []map[string]any{{"label": "yes"}, {"label": "no"}},
	}}}})
	if err != nil || res.IsError {
		t.Fatalf("blocking MCP call longer than the body timeout: %v %+v", err, res)
	}
	if txt := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(txt, "No one answered") {
		t.Fatalf("blocking MCP call: %s, want the question's timeout", txt)
	}
	seen := map[string]bool{}
	for !seen["ask.settled"] {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatal("the event stream was cut")
			}
			seen[e.Type] = true
		case <-ctx.Done():
			t.Fatal("no ask.settled event on a stream open longer than the body timeout")
		}
	}
}
