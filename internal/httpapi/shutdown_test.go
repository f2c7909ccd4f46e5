package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/testserver"
)

// At shutdown every waiting call is answered 503 unavailable, in the words of
// its surface: a plain HTTP client is told to GET its ask again (or askd
// check it), a hook that Claude Code goes on without it; neither is told to
// call check_ask, a tool it may not have.
func TestShutdownAnswersEachSurfaceInItsWords(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)

	get, post := make(chan error, 1), make(chan error, 1)
	checked, err := srv.Agent("check").Create(ctx, question(false, "Which check first?"), 0)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_, err := srv.Agent("check").Check(context.Background(), checked.ID, time.Hour)
		get <- err
	}()
	go func() {
		_, err := srv.Agent("create").Create(context.Background(), question(false, "Which docs?"), time.Hour)
		post <- err
	}()
	hook := postAsync(t, srv, "", preToolUse("hook", "AskUserQuestion", colorQuestion), nil)
	created := srv.Pending(t, "create", 1)[0]
	hooked := srv.Pending(t, "hook", 1)[0]
	waitForWaiters(t, srv, 3)
	srv.App.Close()

	for _, tt := range []struct {
		name string
		ch   chan error
		id   int64
	}{
		{"GET /api/asks/{id}?wait=", get, checked.ID},
		{"POST /api/asks?wait=", post, created.ID},
	} {
		var got error
		select {
		case got = <-tt.ch:
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: no reply after shutdown", tt.name)
		}
		var ce *client.Error
		want := fmt.Sprintf("server shutting down: GET /api/asks/%d again once it is back (askd check %d) for the answer", tt.id, tt.id)
		if !errors.As(got, &ce) || ce.Status != 503 || ce.Code != askd.EUNAVAILABLE || ce.Message != want {
			t.Errorf("%s: %v, want 503 %s %q", tt.name, got, askd.EUNAVAILABLE, want)
		}
	}
	h := awaitReply(t, hook)
	want := fmt.Sprintf("askd gives no decision for ask %d, so Claude Code goes on without this hook", hooked.ID)
	if h.status != 503 || !strings.Contains(h.body, want) || strings.Contains(h.body, "check_ask") {
		t.Errorf("hook: %d %s, want 503 saying %q", h.status, h.body, want)
	}
}
