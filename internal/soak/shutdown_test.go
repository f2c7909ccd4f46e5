package soak_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SIGTERM answers the calls in flight with "server shutting down" and where
// to find the answer, in each surface's words (an MCP tool error saying call
// check_ask, an HTTP 503 saying GET the ask again), instead of dropping them,
// and the process exits 0 at once, also with an inbox event stream still open.
func TestGracefulShutdown(t *testing.T) {
	db := filepath.Join(t.TempDir(), "askd.db")
	tok := newTokens(t, db)
	srv := startServer(t, db)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// An inbox stream stays connected through the shutdown.
	events, err := client.New(srv.URL, tok.human).Events(ctx, -1)
	if err != nil {
		t.Fatal(err)
	}

	cs, err := mcpConnect(ctx, srv.URL, tok.agent, "shutdown-mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	type mcpOutcome struct {
		res *mcp.CallToolResult
		err error
	}
	mcpDone := make(chan mcpOutcome, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_user_question", Arguments: map[string]any{"questions": question("Blocked over MCP?")}})
		mcpDone <- mcpOutcome{res, err}
	}()

	agent := client.New(srv.URL, tok.agent)
	agent.Session = "shutdown-http"
	httpDone := make(chan error, 1)
	go func() {
		_, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindQuestion, Questions: question("Blocked over HTTP?")}, 5*time.Minute)
		httpDone <- err
	}()

	// Both calls are waiting once both asks are pending.
	human := client.New(srv.URL, tok.human)
	testserver.Eventually(t, "two asks pending", func() bool {
		asks, err := human.List(ctx, client.ListOptions{Status: askd.StatusPending})
		if err != nil {
			t.Fatal(err)
		}
		return len(asks) == 2
	})
	// The waits have begun: the process counts two blocked calls.
	testserver.Eventually(t, "askd_waiters 2", func() bool { return testserver.Metric(t, srv.URL, "askd_waiters") == "2" })

	took, exitErr := srv.terminate(t, 15*time.Second)
	if exitErr != nil {
		t.Errorf("askd exited with %v after SIGTERM, want status 0\n%s", exitErr, srv.log)
	}
	// At once, not after the waits' own deadlines (minutes); the bound is
	// loose because a loaded CI machine can be slow to schedule the exit.
	if took > 8*time.Second {
		t.Errorf("askd took %s to exit after SIGTERM, want under 8 s (the server gives up waiting at 10 s)", took)
	}
	t.Logf("exit after SIGTERM: %s", took.Round(time.Millisecond))

	const want = "server shutting down, call check_ask"
	const wantHTTP = "server shutting down: GET /api/asks/"
	select {
	case o := <-mcpDone:
		switch {
		case o.err != nil:
			t.Errorf("MCP ask_user_question: %v; want a tool error %q", o.err, want)
		case !o.res.IsError || !strings.Contains(resultText(o.res), want):
			t.Errorf("MCP ask_user_question: isError %v, %q; want a tool error %q", o.res.IsError, resultText(o.res), want)
		default:
			t.Logf("MCP: isError, %q", resultText(o.res))
		}
	case <-time.After(10 * time.Second):
		t.Error("the MCP call did not return within 10 s of SIGTERM")
	}
	select {
	case err := <-httpDone:
		var ce *client.Error
		switch {
		case !errors.As(err, &ce):
			t.Errorf("POST /api/asks?wait=: %v; want 503 %q", err, wantHTTP)
		case ce.Status != 503 || !strings.Contains(ce.Message, wantHTTP):
			t.Errorf("POST /api/asks?wait=: %d %q; want 503 %q", ce.Status, ce.Message, wantHTTP)
		default:
			t.Logf("HTTP: %d %q", ce.Status, ce.Message)
		}
	case <-time.After(10 * time.Second):
		t.Error("the HTTP call did not return within 10 s of SIGTERM")
	}
	// The event stream ends rather than holding the process.
	for range events {
	}

	// The asks are still there, pending, for check_ask after a restart.
	srv = startServer(t, db)
	agent.URL = srv.URL
	open, err := agent.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 1 || open[0].Summary() != "Blocked over HTTP?" {
		t.Errorf("after restart the HTTP agent's open asks are %v, want its question", open)
	}
}
