package app

import (
	"context"
	"errors"
	"time"

	"github.com/askd-dev/askd"
)

// # The outcome of an ask, as its agent learns it
//
// Every front end that holds an agent until a person answers makes one
// call here and shapes the result for its wire:
//
//   - AwaitOutcome, the blocking face, on the caller's goroutine: POST
//     /api/asks?wait=, GET /api/asks/{id}?wait=, the Claude Code hooks
//     (PreToolUse, PermissionRequest), MCP calls on the SDK's sessions
//     (in-memory, stdio);
//   - Expect, the completion face, for calls parked on their connection
//     without a goroutine (MCP tools/call over streamable HTTP): Done is
//     called once with the outcome;
//   - StopHook (stophook.go), which waits for any of a session's asks.
//
// What a wait is (Wait): one of the caller's asks, until when (Until; zero:
// the ask's own deadline, set by its kind when it was created: create.go),
// and what its end means (AwaitMode). Its states:
//
//	waiting ──answer/dismissal──────────▶ settled ─▶ told (markTold, told.go)
//	   │  ──deadline (expire.go)────────▶ settled (cancelled, timeout) ─▶ told
//	   │  ──Until passes, AwaitGrace────▶ returned pending, to be told later
//	   │  ──Until passes, AwaitCheck────▶ returned as it is
//	   │  ──caller gone (ctx ends, Gone)▶ cut off: pending, to be told later
//	   │  ──notifications/cancelled─────▶ cut off, and no reply (ErrCallCancelled)
//	   └──server stops──────────────────▶ ShutdownError: no outcome now
//
// A wait registers with the hub (hub.go) before it first reads the ask, so
// an answer that races its start is never lost; it is woken by the store's
// change notifications (in-process after a SQLite commit, LISTEN/NOTIFY on
// PostgreSQL: Service.Run), never by polling, and looks again at the ask's
// deadline or Until.
//
// The caller going away — its client's own timeout, notifications/cancelled,
// a closed stream, a dropped connection — is a cut-off, not a withdrawal
// (SPEC §2.1): the ask stays pending to its own deadline and is marked to be
// told, so an answer given meanwhile reaches the session once, at its Stop
// hook, check_ask or channel; the same call again re-attaches to it (Create)
// and returns that answer. Only Withdraw takes an ask back.

// Wait is what a front end waits for: one of the caller's asks.
type Wait struct {
	Ask  int64
	Mode AwaitMode
	// Until ends the wait before the ask's deadline: a check's wait, an
	// approval's grace window (Grace). Zero: only the ask's deadline.
	Until time.Time
	// Call is the MCP call (of a 2025 protocol revision) the wait serves, so
	// that its notifications/cancelled, reaching any process, ends it
	// without a reply (Expect only).
	Call *CallRef
	// Progress is how often a wait still going reports so (its progress
	// callback): 0 for never.
	Progress time.Duration
	// KeepUntold returns a settled ask without telling it (keep_untold over
	// HTTP): the caller hands the outcome on and then marks it told itself
	// (MarkTold, told.go). The MCP gate reads its approvals so.
	KeepUntold bool
}

// CallRef names an MCP call: its MCP session and JSON-RPC request id.
type CallRef struct{ MCPSession, Request string }

// Grace is how long a request for approval waits for a decision before it
// returns pending: its grace_seconds, else the server's --approval-grace.
func (s *Service) Grace(graceSeconds *int) time.Duration {
	if graceSeconds != nil {
		return time.Duration(*graceSeconds) * time.Second
	}
	return s.cfg.ApprovalGrace
}

// AwaitMode says what the end of a wait means.
type AwaitMode int

const (
	// AwaitAnswer: the caller returns the outcome (ask_user_question, a
	// permission prompt, a hook). An ask settled within the wait counts as
	// told by that return; a caller that goes away cuts the ask off.
	AwaitAnswer AwaitMode = iota
	// AwaitGrace: request_approval's grace window. Past Until, the ask is
	// returned pending and marked to be told once decided; a caller that goes
	// away cuts it off.
	AwaitGrace
	// AwaitCheck: check_ask's wait_seconds, GET ?wait=: the ask as it is at
	// the end (a settled one counts as told, as Check); a caller that goes
	// away changes nothing.
	AwaitCheck
)

// ErrCallCancelled ends a wait whose MCP call the client cancelled with
// notifications/cancelled, on whichever process that arrived: no response is
// to be sent for it (SPEC §2.1).
var ErrCallCancelled = errors.New("the client cancelled the call")

// ErrCallerGone ends an expected outcome whose caller went away (Gone): the
// ask was cut off, and there is no one to reply to.
var ErrCallerGone = errors.New("the caller went away")

// ShutdownError is what a wait on ask Ask ends with when the server stops
// (Service.Close): no outcome now, and the ask left as it is, for the caller
// to look at again once askd is back. Its code is EUNAVAILABLE (errors.As
// finds its *askd.Error); its words are for MCP clients, which call
// check_ask. A front end whose callers look again another way (plain HTTP,
// hooks) finds it with errors.As and says how in its own words.
type ShutdownError struct{ Ask int64 }

func (e *ShutdownError) Error() string { return e.Unwrap().Error() }

// Unwrap is the *askd.Error that carries the code and the MCP wording.
func (e *ShutdownError) Unwrap() error {
	return askd.Errorf(askd.EUNAVAILABLE, "server shutting down, call check_ask with id %d for the answer", e.Ask)
}

// ShuttingDown is the error a wait on ask id ends with when the server
// stops: a *ShutdownError.
func ShuttingDown(id int64) error { return &ShutdownError{Ask: id} }

// AwaitOutcome blocks until c's wait w is over and returns the outcome to
// give the agent: a settled ask, marked told before it returns (told.go)
// unless w.KeepUntold; past an approval's grace window (AwaitGrace) the ask pending, marked to be
// told once decided; a check's (AwaitCheck) ask as it is. progress, when not
// nil and w.Progress > 0, is called every w.Progress while the ask is
// pending, with how many times it has been (1, 2, ...).
//
// When ctx ends, the ask is cut off (the caller went away; a check changes
// nothing) and ctx's error returned. When the server stops, a
// *ShutdownError; when c's token is revoked, EUNAUTHORIZED. A database that
// is unavailable is tried again until the wait's end (retry.go).
func (s *Service) AwaitOutcome(ctx context.Context, c askd.Caller, w Wait, progress func(n float64)) (*askd.Ask, error) {
	aw := s.startAwait(c, w, nil)
	defer aw.stop()
	var sent float64
	for {
		var tick time.Time
		if progress != nil && w.Progress > 0 {
			tick = time.Now().Add(w.Progress)
		}
		a, done, err := aw.wait(ctx, tick)
		if done {
			return aw.finish(context.WithoutCancel(ctx), a, err)
		}
		sent++
		progress(sent)
	}
}
