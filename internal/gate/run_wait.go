package gate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
)

// How askd gate run asks and waits for the decision (run.go).

// checkEvery bounds each request that waits for the decision: a reverse
// proxy in front of askd may cut a request that stays silent for a minute
// (nginx's default), which a wait of 10m in one request would be.
const checkEvery = 50 * time.Second

// awaitDecision asks and waits up to g.wait for the decision. It returns
// the ask once decided, or a gateStop: no decision (75), askd refused the
// ask as given (2), or a signal came first (128 + the signal). A signal in
// sigs ends the wait; askd is unreachable for a moment (restarting, say):
// it looks again until the wait is over.
func (g *gateRunner) awaitDecision(ctx context.Context, sigs <-chan os.Signal) (*askd.Ask, error) {
	// The wait ends on a signal in sigs, seen here, and on nothing else:
	// main's context also ends on SIGINT and SIGTERM, and which of the two
	// hears of one first is up to the runtime.
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case s := <-sigs:
			cancel(gotSignal{s})
		case <-ctx.Done():
		}
	}()
	a, err := g.decide(ctx)
	cancel(nil)
	<-watched
	var sig gotSignal
	if errors.As(context.Cause(ctx), &sig) {
		return nil, sig.stop(a)
	}
	if err != nil {
		return nil, err
	}
	// A signal since the wait ended, and before CMD starts, is for CMD:
	// then it is not started.
	select {
	case s := <-sigs:
		return nil, gotSignal{s}.stop(a)
	default:
	}
	return a, nil
}

// decide creates the ask and waits for it to settle, until g.wait is over.
// It returns the ask as last seen (nil before it was made) with the error
// that ended the wait, if one did.
func (g *gateRunner) decide(ctx context.Context) (*askd.Ask, error) {
	deadline := time.Now().Add(g.wait)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	a, err := g.create(ctx)
	switch {
	case ctx.Err() != nil && err == nil:
		return a, ctx.Err() // asked: the signal's message names the approval left pending
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return nil, gateError(err, notAsked(err))
	}
	if a.Pending() && g.wait > 0 {
		// For a job's log: which card it waits on.
		gateSay(g.e, fmt.Sprintf("waiting up to %s for approval #%d: %s", g.wait, a.ID, a.Title))
	}
	var lastErr error // why the last look failed, askd unreachable
	for a.Pending() {
		left := time.Until(deadline)
		if left <= 0 {
			why := fmt.Sprintf("no decision within %s", g.wait)
			if lastErr != nil {
				why = gateErrorText(lastErr)
			}
			return a, stopGate(gateUndecided, "%s: approval #%d is still pending (askd check %d)%s\nthe command did not run", why, a.ID, a.ID, g.again())
		}
		b, err := g.c.Check(ctx, a.ID, min(left, checkEvery))
		switch {
		case ctx.Err() != nil:
			return a, ctx.Err()
		case err == nil:
			a, lastErr = b, nil
		case temporary(err):
			lastErr = err
			sleep(ctx, min(left, time.Second))
		default:
			return a, gateError(err, fmt.Sprintf("approval #%d: the command did not run", a.ID))
		}
	}
	return a, nil
}

// createGrace is how long the ask's creation may still take once a signal
// came while it was on its way.
const createGrace = 5 * time.Second

// create makes the ask. A signal (ctx ending) while the request is on its
// way does not cut it at once: askd may have made the ask already, and then
// the gate's last line is to name the approval it leaves pending, not say
// that nothing was asked. A server that does not answer within createGrace
// of the signal is given up on.
func (g *gateRunner) create(ctx context.Context) (*askd.Ask, error) {
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	// A timer left running past the return only cancels cctx again.
	defer context.AfterFunc(ctx, func() { time.AfterFunc(createGrace, cancel) })()
	return g.c.Create(cctx, &g.in, 0)
}

// notAsked says what became of the ask whose creation failed with err: a
// refusal, or no connection, asked nothing; a connection lost on the way may
// have lost only the reply.
func notAsked(err error) string {
	var refused *client.Error
	var dns *net.DNSError
	if errors.As(err, &refused) || errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dns) {
		return "nothing was asked; the command did not run"
	}
	return "the approval may have been asked before the connection was lost; the command did not run"
}

// again is what to do once no decision came: with a key, run again.
func (g *gateRunner) again() string {
	if g.in.Key != "" {
		return "\nrun the same command again (the same --key) to pick up the decision"
	}
	return ""
}

// gotSignal is a signal that came before CMD ran.
type gotSignal struct{ os.Signal }

func (s gotSignal) Error() string { return s.String() }

// stop is the gateStop of a signal that came while ask a (nil if none was
// made yet) waited, or once it was decided: 128 + the signal, CMD not run.
func (s gotSignal) stop(a *askd.Ask) error {
	n := 0
	if sig, ok := s.Signal.(syscall.Signal); ok {
		n = int(sig)
	}
	switch {
	case a == nil:
		return stopGate(gateSignalBase+n, "%s: stopped before the approval was asked or decided; the command did not run", s)
	case a.Pending():
		return stopGate(gateSignalBase+n, "%s: stopped waiting: approval #%d is still pending (askd check %d); the command did not run", s, a.ID, a.ID)
	}
	return stopGate(gateSignalBase+n, "%s: stopped once approval #%d was settled, before the command started; the command did not run", s, a.ID)
}

// gateError is err, an error from askd, as a gateStop with what: askd's
// refusal of the ask as given is exit 2 (it would be refused again); askd
// unreachable, busy or at a limit is 75 (try again later).
func gateError(err error, what string) error {
	if temporary(err) {
		return stopGate(gateUndecided, "%s\n%s", gateErrorText(err), what)
	}
	return stopGate(gateMistake, "%s\n%s", gateErrorText(err), what)
}

func gateErrorText(err error) string {
	var ce *client.Error
	if errors.As(err, &ce) {
		return "askd refused: " + ce.Message
	}
	return err.Error()
}

// temporary reports whether err may pass if tried again later: no response
// from askd, a server error, or a limit (HTTP 429).
func temporary(err error) bool {
	var ce *client.Error
	if !errors.As(err, &ce) {
		return true
	}
	return ce.Status >= 500 || ce.Status == 429 || ce.Code == askd.ELIMIT || ce.Code == askd.EUNAVAILABLE
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
