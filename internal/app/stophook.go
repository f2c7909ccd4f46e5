package app

import (
	"context"
	"strings"
	"time"

	"github.com/askd-dev/askd"
)

// StopHook is what an agent's Stop hook (Claude Code's, and Codex's, which
// sends the same input) is told for sessions (the hook's own first; the
// others are told of too): the text of every outcome the agent must be told
// of and has not been, which becomes its next instruction (SPEC §5), marked
// told; "" when there is none. With wait > 0, while the sessions have
// pending asks whose outcome will be told, it waits up to wait for one to
// settle; with nothing to tell and nothing pending it returns "" at once, as
// it does when the service shuts down (the answers wait for the next Stop).
// Errors: EUNAUTHORIZED when the token is revoked meanwhile; ctx's error.
func (s *Service) StopHook(ctx context.Context, sessions []askd.Caller, wait time.Duration) (string, error) {
	until := time.Now().Add(wait)
	for _, c := range sessions {
		// The turn is over: a prompt relayed from it was answered (relay.go).
		if err := s.closeRelays(ctx, c); err != nil {
			return "", err
		}
	}
	for {
		var texts []string
		for _, c := range sessions {
			told, err := s.tellSession(ctx, c, "stop hook")
			if err != nil {
				return "", err
			}
			for _, a := range told {
				texts = append(texts, ToldText(a))
			}
		}
		if len(texts) > 0 {
			return strings.Join(texts, "\n"), nil
		}
		if wait <= 0 || !time.Now().Before(until) {
			return "", nil
		}
		var ids []int64
		for _, c := range sessions {
			pending, err := s.pendingToBeTold(ctx, c)
			if err != nil {
				return "", err
			}
			for _, a := range pending {
				ids = append(ids, a.ID)
			}
		}
		if len(ids) == 0 {
			return "", nil
		}
		if err := s.waitAny(ctx, sessions[0], ids, until); err != nil {
			return "", err // the token was revoked
		}
		if err := ctx.Err(); err != nil {
			return "", err
		}
		if s.Closed() {
			return "", nil
		}
	}
}

// waitAny blocks until any of c's asks ids changes, until passes, ctx ends
// or the service closes. It fails with EUNAUTHORIZED when c's token is
// revoked meanwhile, and returns nil otherwise.
func (s *Service) waitAny(ctx context.Context, c askd.Caller, ids []int64, until time.Time) error {
	revoked, release := s.Hold(c)
	defer release()
	ws := make([]*waiter, len(ids))
	wake := make(chan struct{}, 1)
	for i, id := range ids {
		ws[i] = s.hub.add(id, nil)
	}
	defer func() {
		for _, w := range ws {
			s.hub.remove(w)
		}
	}()
	stop := make(chan struct{})
	defer close(stop)
	for _, w := range ws {
		go func(w *waiter) {
			select {
			case <-w.ch:
				signal(wake)
			case <-stop:
			}
		}(w)
	}
	// The caller read these asks pending before we registered: one settled
	// in between would never wake us, so look again now that we listen.
	var settled bool
	_ = s.store.View(ctx, func(tx askd.Tx) error {
		for _, id := range ids {
			a, err := tx.Asks.Ask(ctx, id)
			if err != nil || !a.Pending() {
				settled = true
				return nil
			}
		}
		return nil
	})
	if settled {
		return nil
	}
	d := time.Until(until)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-wake:
	case <-t.C:
	case <-ctx.Done():
	case <-s.closing:
	case <-revoked:
		return errRevoked()
	}
	return nil
}
