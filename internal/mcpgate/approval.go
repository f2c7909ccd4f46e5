package mcpgate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
)

// verdict is what became of a call the gate put to askd.
type verdict struct {
	ask *askd.Ask // the approval as last read; nil when none was made
	// args, when the person changed the arguments, are theirs: the call
	// goes on with them.
	args json.RawMessage
	// refusal, when not "", is the error result's text: the call does not
	// go on.
	refusal string
}

// approve puts call c to askd as an approval and waits, up to --wait, for
// the decision, which it uses only when its mark told it (onecall.go: one
// approval, one call). progress is called every progressEvery while it
// waits, with the approval's id once it has one. When ctx ends the wait
// is cut off: askd keeps the approval, pending or decided and untold, for
// the same call again. A gate fails closed: askd unreachable or refusing
// is a refusal saying so.
func (g *gate) approve(ctx context.Context, c *toolCall, progress func(id int64)) verdict {
	in, refusal := g.approvalInput(c)
	if refusal != "" {
		return verdict{refusal: refusal}
	}
	in.Key, in.OneCall = callKey(g.session, &in), true
	var id atomic.Int64
	if progress != nil {
		stop := g.every(ctx, func() { progress(id.Load()) })
		defer stop()
	}
	deadline := time.Now().Add(g.wait)
	for range maxAsks {
		// Asked without a wait first, so that progress names the approval
		// from the first tick: a call held still can say which it is.
		a, err := g.askd.CreateUntold(ctx, &in, 0)
		switch {
		case ctx.Err() != nil:
			g.cutOff(in)
			return verdict{}
		case err != nil:
			return verdict{refusal: g.askdFailed(c, nil, err)}
		}
		c.asked(a)
		id.Store(a.ID)
		if a, err = g.await(ctx, &in, a, deadline); err != nil {
			return g.unanswered(c, a, err)
		}
		used, err := g.use(ctx, a)
		switch {
		case ctx.Err() != nil && !used:
			return verdict{ask: a} // cut off: untold, for the same call again
		case err != nil:
			return verdict{ask: a, refusal: g.markFailed(c, a, err)}
		case !used:
			continue // another call's mark was the one: this call asks anew
		}
		return g.judge(c, a)
	}
	return verdict{refusal: fmt.Sprintf("askd gate: %d approvals of this very call went to other calls of it while this one waited; the gate asks no further, and the MCP server did not get the call.", maxAsks)}
}

// maxAsks bounds the approvals one call asks for, each of which another
// call of the same key used (onecall.go): a gate never asks askd without
// end.
const maxAsks = 1000

// use marks decided approval a told, as used by this call: used reports
// whether this mark was the one (askd lets one mark of an ask mark it). A
// mark once sent is seen through, the call given up or not, so that the
// gate knows whether it used the decision.
func (g *gate) use(ctx context.Context, a *askd.Ask) (used bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markTimeout)
	defer cancel()
	_, used, err = g.askd.MarkTold(ctx, a.ID)
	return used, err
}

// markTimeout bounds a mark, and the request that tells askd of a cut-off.
const markTimeout = 10 * time.Second

// waitFor is how long the next request may wait for a decision: until
// deadline, at most longestWait, and at least a moment (a request with no
// wait at all would not say, on its end, that the call stopped waiting).
func (g *gate) waitFor(deadline time.Time) time.Duration {
	return min(max(time.Until(deadline), time.Millisecond), g.longestWait)
}

// await waits for approval a, asked as in, to be decided, until deadline.
// askd unreachable for a moment (restarting, say): it looks again until
// deadline.
func (g *gate) await(ctx context.Context, in *askd.AskInput, a *askd.Ask, deadline time.Time) (*askd.Ask, error) {
	var lastErr error
	for a.Pending() {
		left := time.Until(deadline)
		if left <= 0 {
			return a, &stillPending{lastErr}
		}
		// Asking again with the key waits on the same approval. askd
		// takes a request cut short (the call given up, the gate stopped
		// or killed) as a cut-off; one that ends at its wait's end, as the
		// call's end: pending, to be told once decided. Either way a
		// decision stays untold until the gate marks it (use).
		b, err := g.askd.CreateUntold(ctx, in, g.waitFor(deadline))
		switch {
		case ctx.Err() != nil:
			g.cutOff(*in)
			return a, ctx.Err()
		case err == nil:
			a, lastErr = b, nil
		case temporary(err):
			lastErr = err
			sleep(ctx, min(left, time.Second))
		default:
			return a, err
		}
	}
	return a, nil
}

// cutOff makes sure askd knows that call in stopped waiting on its
// approval: a request that waits a moment and ends, which askd takes as
// the call's end (the approval pending, to be told, shown as no longer
// waited on). askd sees the cut request of a wait as a cut-off itself
// (with a cut_off row in its history), but not one cut before askd began
// to wait (between the gate's ask and its wait, or in askd's create):
// this covers those, and changes nothing where the cut-off is recorded.
// A decision it reads stays untold, for the same call again.
func (g *gate) cutOff(in askd.AskInput) {
	ctx, cancel := context.WithTimeout(context.Background(), markTimeout)
	defer cancel()
	g.askd.CreateUntold(ctx, &in, time.Millisecond)
}

// stillPending ends a wait that saw no decision within --wait; err is why
// the last look failed, if it did (askd unreachable).
type stillPending struct{ err error }

func (e *stillPending) Error() string { return "still pending" }

// every calls fn every progressEvery until stop is called or ctx ends.
func (g *gate) every(ctx context.Context, fn func()) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(g.progressEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				fn()
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() { close(done); <-finished }
}

// unanswered is the verdict of a call whose approval's wait ended with
// err: no decision within --wait, or askd failing.
func (g *gate) unanswered(c *toolCall, a *askd.Ask, err error) verdict {
	v := verdict{ask: a}
	var pending *stillPending
	switch {
	case errors.As(err, &pending):
		why := fmt.Sprintf("no decision within %s", g.wait)
		if pending.err != nil {
			why = "askd could not be reached (" + errorText(pending.err) + ")"
		}
		v.refusal = fmt.Sprintf("askd gate: %s: approval #%d to call %s on %s is still pending (askd check %d); the MCP server did not get the call. The same call again (same tool, same arguments) picks up the decision once it is made.",
			why, a.ID, c.tool, g.name, a.ID)
	default:
		v.refusal = g.askdFailed(c, a, err)
	}
	return v
}

// judge turns decided approval a, used by call c, into its verdict.
func (g *gate) judge(c *toolCall, a *askd.Ask) verdict {
	v := verdict{ask: a}
	ans := a.Answer
	if a.Status == askd.StatusAnswered && ans != nil {
		switch ans.Decision {
		case askd.DecisionApproved:
			return v
		case askd.DecisionModified:
			if ans.Payload == nil {
				return v
			}
			var obj map[string]json.RawMessage
			if json.Unmarshal(ans.Payload, &obj) != nil || obj == nil {
				v.refusal = fmt.Sprintf("askd gate: approval #%d was approved by %s with arguments that are not a JSON object; the MCP server did not get the call.", a.ID, a.SettledBy)
				return v
			}
			v.args = ans.Payload
			return v
		}
	}
	v.refusal = fmt.Sprintf("askd gate: %s; the MCP server did not get the call.", refusalText(a, c.tool, g.name))
	return v
}

// refusalText says who refused decided approval a, and why.
func refusalText(a *askd.Ask, tool, server string) string {
	what := fmt.Sprintf("approval #%d to call %s on %s", a.ID, tool, server)
	if a.Status == askd.StatusCancelled {
		msg := fmt.Sprintf("%s was %s", what, a.CancelReason)
		switch a.CancelReason {
		case askd.ReasonTimeout:
			msg = what + " timed out with no decision"
		case askd.ReasonDismissed:
			msg = what + " was dismissed"
		}
		if a.SettledBy != "" && a.CancelReason != askd.ReasonTimeout {
			msg += " by " + a.SettledBy
		}
		if a.Answer != nil && a.Answer.Response != "" {
			msg += ": " + a.Answer.Response
		}
		return msg
	}
	msg := fmt.Sprintf("%s was rejected by %s", what, a.SettledBy)
	if a.Answer != nil && a.Answer.Comment != "" {
		msg += ": " + a.Answer.Comment
	}
	return msg
}

// askdFailed is the error result of a call askd could not decide: it
// refused the approval as asked, was at its pending cap, or could not be
// reached. A gate fails closed: the call does not go on.
func (g *gate) askdFailed(c *toolCall, a *askd.Ask, err error) string {
	var refused *client.Error
	msg := fmt.Sprintf("askd could not be reached to approve %s on %s (%s)", c.tool, g.name, errorText(err))
	switch {
	case errors.As(err, &refused) && refused.Status == http.StatusTooManyRequests:
		msg = "askd refused to ask for another approval, at its limit of pending asks (askd serve --max-pending): " + refused.Message
	case errors.As(err, &refused):
		msg = "askd refused the approval: " + refused.Message
	}
	msg = "askd gate: " + msg + "; the MCP server did not get the call."
	if a != nil && a.Pending() {
		msg += fmt.Sprintf(" Approval #%d stays pending in askd (askd check %d); the same call again picks it up.", a.ID, a.ID)
	}
	return msg
}

// markFailed is the error result of a call whose decided approval a askd
// could not mark used (use): the call does not go on, and the decision
// stays untold, for the same call again.
func (g *gate) markFailed(c *toolCall, a *askd.Ask, err error) string {
	return fmt.Sprintf("askd gate: approval #%d to call %s on %s is decided, but askd could not mark it used (%s); the MCP server did not get the call. The decision stays untold in askd (askd check %d): the same call again picks it up.",
		a.ID, c.tool, g.name, errorText(err), a.ID)
}

func errorText(err error) string {
	var ce *client.Error
	if errors.As(err, &ce) {
		return ce.Message
	}
	return err.Error()
}

// temporary reports whether err may pass if tried again later: no
// response from askd, a server error, or its shutting down.
func temporary(err error) bool {
	var ce *client.Error
	if !errors.As(err, &ce) {
		return true
	}
	return ce.Status >= 500 || ce.Code == askd.EUNAVAILABLE
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

// canonicalObject is a JSON object in one spelling: members sorted,
// numbers as written, no space, no HTML escaping. ok is false when raw is
// no JSON object.
func canonicalObject(raw json.RawMessage) (out []byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil || dec.More() {
		return nil, false
	}
	return encode(obj), true
}
