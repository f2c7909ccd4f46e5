package mcpserver_test

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/mcpserver"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Waiting calls are parked: no net/http connection goroutine and no SDK
// session stays behind each, only the one goroutine reading its connection.
func TestWaitingCallsPark(t *testing.T) {
	var h *mcpserver.HTTPHandler
	srv := testserver.Start(t, testserver.Options{MCP: func(svc *app.Service) http.Handler {
		h = mcpserver.Handler(svc, mcpserver.Options{ProgressInterval: progressEvery})
		return h
	}})
	const sessions, perSession = 3, 20 // 20: the default pending limit
	var calls []<-chan outcome
	for s := range sessions {
		cs := connect(t, srv, transports[s%len(transports)], fmt.Sprintf("parked-%d", s), nil)
		for i := range perSession {
			args := map[string]any{"questions": []map[string]any{{
				"question": fmt.Sprintf("Parked %d?", i), "header": "Park",
				"options": []map[string]any{{"label": "yes"}, {"label": "no"}},
			}}}
			calls = append(calls, callAsync(context.Background(), cs, &mcp.CallToolParams{Name: "ask_user_question", Arguments: args}))
		}
	}
	const n = sessions * perSession
	waitParked(t, h, n)
	// A call counts as parked before its handler hands the connection to its
	// watch and returns: the goroutines settle a moment later, longer on a
	// busy machine. Wait for them to, then check what they settled to. On
	// Linux one epoll set watches every parked connection (parked/hangup_linux.go):
	// no goroutine per call at all; elsewhere each has one reader.
	want := n
	if runtime.GOOS == "linux" {
		want = 0
	}
	// The clients' idle keep-alive connections may each hold a net/http
	// connection goroutine; the parked calls must not.
	testserver.Eventually(t, fmt.Sprintf("%d connection readers and under %d net/http connection goroutines for %d parked calls", want, n/2, n), func() bool {
		return goroutines("parked.watchAlone") == want && goroutines("net/http.(*conn).serve") < n/2
	})
	for s := range sessions {
		for _, a := range pending(t, srv, fmt.Sprintf("parked-%d", s), perSession) {
			answer(t, srv, a.ID, &askd.Answer{Answers: map[string]askd.Choice{a.Questions[0].Question: {Values: []string{"no"}}}})
		}
	}
	for _, ch := range calls {
		var out questionOut
		structured(t, await(t, ch), &out)
		if len(out.Answers) != 1 {
			t.Errorf("answers %+v", out.Answers)
		}
	}
	waitParked(t, h, 0)
}

func waitParked(t *testing.T, h *mcpserver.HTTPHandler, n int) {
	t.Helper()
	testserver.Eventually(t, fmt.Sprintf("%d calls parked", n), func() bool { return h.Parked() == n })
}

// goroutines counts the goroutines whose stack mentions fn.
func goroutines(fn string) int {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			n++
		}
	}
	return n
}

// noHijack hides the connection from the handler, as a wrapper without
// Unwrap, or HTTP/2, would.
type noHijack struct{ http.ResponseWriter }

func (w noHijack) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// A call whose connection cannot be taken over waits on its handler's
// goroutine instead, with the same progress, answer and cancellation.
func TestWaitingCallWithoutHijack(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{MCP: func(svc *app.Service) http.Handler {
		h := mcpserver.Handler(svc, mcpserver.Options{ProgressInterval: progressEvery})
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(noHijack{w}, r) })
	}})
	var progress atomic.Int32
	cs := connect(t, srv, transports[0], "nohijack", &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
		progress.Add(1)
	}})
	params := &mcp.CallToolParams{Name: "ask_user_question", Arguments: threeQuestions}
	params.SetProgressToken("p")
	ch := callAsync(context.Background(), cs, params)
	a := pending(t, srv, "nohijack", 1)[0]
	testserver.Eventually(t, "progress notifications while blocked", func() bool { return progress.Load() >= 2 })
	answer(t, srv, a.ID, &askd.Answer{Answers: map[string]askd.Choice{
		"Which database?": {Values: []string{"SQLite"}},
		"Which checks?":   {Values: []string{"lint"}, Multi: true},
		"Project name?":   {Values: []string{"harbor"}},
	}})
	var out questionOut
	structured(t, await(t, ch), &out)
	if out.Answers["Which database?"] != "SQLite" {
		t.Fatalf("answers %+v", out.Answers)
	}

	// The told record is written beside the result: until it is, the same
	// questions again would re-attach to the answered ask (as after a
	// cut-off), so wait for it before asking them again.
	toldWait(t, srv, a.ID)

	// Closing the stream (2026-07-28) cancels the call: the ask is cut off,
	// still pending.
	ctx, cancel := context.WithCancel(context.Background())
	ch = callAsync(ctx, cs, &mcp.CallToolParams{Name: "ask_user_question", Arguments: threeQuestions})
	b := pending(t, srv, "nohijack", 1)[0]
	cancel()
	<-ch
	cutOffWait(t, srv, b.ID)
}
