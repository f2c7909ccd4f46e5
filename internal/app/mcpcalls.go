package app

import (
	"context"
	"time"

	"github.com/askd-dev/askd"
)

// MCP calls of clients on protocol revisions before 2026-07-28.
//
// Such a client cancels a call with notifications/cancelled, a request of its
// own that behind a load balancer may reach any agent process, not the one
// holding the call. So the call's ask is kept in the store under the call's
// key (agent, session, Mcp-Session-Id, JSON-RPC id), and whichever process
// the cancellation reaches records it there and cuts the ask off (it stays
// pending, to be told; SPEC §2.1); the process holding the call hears of the
// cut-off's event, finds the cancellation (Await.Look) and ends the call
// without a response.
//
// A call askd has answered stays kept, marked answered, as long as an early
// cancellation would be (keepCalls): a cancellation coming after the answer
// (OpenCode sends one after every completed call) is then ignored, stores
// nothing and counts toward no cap (SPEC §18), where it would otherwise be
// kept as a cancellation that overtook its call.

// callKey is the key of the caller's call: agent and session always come
// from the caller, never from the request, so one agent cannot cancel
// another's calls.
func callKey(c askd.Caller, mcpSession, requestID string) askd.MCPCallKey {
	return askd.MCPCallKey{Agent: c.Name, Session: c.Session, MCPSession: mcpSession, RequestID: requestID}
}

// keepCalls is how long a kept call may outlive its start before a purge
// takes it: longer than any call blocks (the question and approval timeouts),
// so only leftovers go (calls of a process that died, cancellations of calls
// that never came).
func (s *Service) keepCalls() time.Duration {
	return max(s.cfg.QuestionTimeout, s.cfg.ApprovalTimeout, s.cfg.ApprovalGrace) + time.Hour
}

// CallStarted records that the caller's MCP call (mcpSession, requestID)
// waits on ask id, until CallEnded. If the call's cancellation arrived first,
// the ask is cut off at once (the call's wait then ends, ErrCallCancelled).
func (s *Service) CallStarted(ctx context.Context, c askd.Caller, mcpSession, requestID string, id int64) error {
	k := callKey(c, mcpSession, requestID)
	var cancelled bool
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		// The call and its cancellation both read, then write the row:
		// writers take turns (askd.Store.Update), so the later sees the earlier's.
		if err := tx.Sessions.LockSession(ctx, c.Name, c.Session); err != nil {
			return err
		}
		old, err := tx.MCPCalls.MCPCall(ctx, k)
		switch {
		case err == nil:
			cancelled = old.Cancelled
		case askd.ErrorCode(err) != askd.ENOTFOUND:
			return err
		}
		return tx.MCPCalls.PutMCPCall(ctx, &askd.MCPCall{MCPCallKey: k, AskID: id, Cancelled: cancelled, CreatedAt: s.now()})
	})
	if err != nil {
		return err
	}
	if cancelled {
		return s.cutOff(ctx, c, id)
	}
	return nil
}

// CallEnded records that the caller's blocking MCP call is over (answered,
// or its client went): its cancellation from now on is ignored.
func (s *Service) CallEnded(ctx context.Context, c askd.Caller, mcpSession, requestID string) error {
	return s.callAnswered(ctx, c, mcpSession, requestID)
}

// CallAnswered records that the caller's MCP call (mcpSession, requestID)
// was answered at once, before its reply is written: a cancellation of it
// from now on is ignored. One that overtook it is replaced.
func (s *Service) CallAnswered(ctx context.Context, c askd.Caller, mcpSession, requestID string) error {
	return s.callAnswered(ctx, c, mcpSession, requestID)
}

// callAnswered marks the call answered, keeping the ask and cancellation
// recorded for it.
func (s *Service) callAnswered(ctx context.Context, c askd.Caller, mcpSession, requestID string) error {
	k := callKey(c, mcpSession, requestID)
	return s.store.Update(ctx, func(tx askd.Tx) error {
		call, err := tx.MCPCalls.MCPCall(ctx, k)
		switch {
		case askd.ErrorCode(err) == askd.ENOTFOUND:
			call = &askd.MCPCall{MCPCallKey: k}
		case err != nil:
			return err
		}
		call.Answered, call.CreatedAt = true, s.now()
		return tx.MCPCalls.PutMCPCall(ctx, call)
	})
}

// CallCancelled handles the client's cancellation of its MCP call
// (mcpSession, requestID), on whichever process it arrives: the cancellation
// is recorded, and the call's ask, if pending, is cut off — it stays pending
// to its deadline, to be told — and its id returned. When the call has not
// recorded its ask yet, the cancellation is kept for it and 0 returned,
// unless the agent token has askd.MaxEarlyCancellations kept already
// (ELIMIT; nothing is stored). A cancellation of a call already answered
// changes and stores nothing, and 0 is returned. Leftover calls are purged
// on the way.
func (s *Service) CallCancelled(ctx context.Context, c askd.Caller, mcpSession, requestID string) (int64, error) {
	if c.Role != askd.RoleAgent {
		return 0, askd.Errorf(askd.EFORBIDDEN, "only the agent that asked may cancel its call")
	}
	k := callKey(c, mcpSession, requestID)
	var id int64
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		if err := tx.Sessions.LockSession(ctx, c.Name, c.Session); err != nil {
			return err
		}
		now := s.now()
		if _, err := tx.MCPCalls.PurgeMCPCalls(ctx, now.Add(-s.keepCalls())); err != nil {
			return err
		}
		call, err := tx.MCPCalls.MCPCall(ctx, k)
		switch {
		case err == nil && call.Answered:
			return nil // too late to cancel: the answer went out
		case err == nil:
			id = call.AskID
		case askd.ErrorCode(err) == askd.ENOTFOUND:
			if err := checkEarlyCancellations(ctx, tx, c.Name); err != nil {
				return err
			}
			call = &askd.MCPCall{MCPCallKey: k, CreatedAt: now}
		default:
			return err
		}
		call.Cancelled = true
		return tx.MCPCalls.PutMCPCall(ctx, call)
	})
	if err != nil || id == 0 {
		return 0, err
	}
	return id, s.cutOff(ctx, c, id)
}

// checkEarlyCancellations refuses (ELIMIT) to keep one more cancellation of
// a call not recorded for agent, past askd.MaxEarlyCancellations.
func checkEarlyCancellations(ctx context.Context, tx askd.Tx, agent string) error {
	n, err := tx.MCPCalls.CountEarlyCancellations(ctx, agent)
	if err != nil {
		return err
	}
	if n >= askd.MaxEarlyCancellations {
		return askd.Errorf(askd.ELIMIT, "agent token %q has %d cancellations kept of calls askd has not seen, at most %d: cancel only calls that were sent", agent, n, askd.MaxEarlyCancellations)
	}
	return nil
}
