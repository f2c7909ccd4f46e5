package askd

import (
	"context"
	"time"
)

// MCPCallKey names one MCP tools/call of a client on a protocol revision
// before 2026-07-28. Such a client cancels a call with a separate
// notifications/cancelled request, which behind a load balancer may reach
// another askd process than the one holding the call; the key is what both
// requests carry.
type MCPCallKey struct {
	Agent      string // the agent token's name
	Session    string // the askd session
	MCPSession string // the Mcp-Session-Id askd gave the client at initialize
	RequestID  string // the call's JSON-RPC id, as raw JSON
}

// MCPCall is an MCP call as the store keeps it: the ask a blocking call
// waits on, whether the client cancelled it, and whether askd answered it.
// A cancellation that arrives before the call recorded its ask is kept with
// AskID 0 and Cancelled set, so the call withdraws its ask as soon as it
// records it. A call answered (Answered, with or without an ask) is kept
// as long as an early cancellation would be, so that a cancellation of it
// coming after the answer (OpenCode sends one after every call) is known
// for what it is and ignored (SPEC §18).
type MCPCall struct {
	MCPCallKey
	AskID     int64 // 0 until the call recorded its ask; 0 for a call answered at once
	Cancelled bool
	Answered  bool
	CreatedAt time.Time
}

// MaxEarlyCancellations bounds the cancellations kept for one agent token's
// calls that askd has not seen (AskID 0, not Answered): a cancellation
// overtakes its call by moments, so a handful are ever kept; without a cap,
// cancellations of made-up calls would each be stored until purged.
const MaxEarlyCancellations = 100

// MCPCallTx is what a transaction may do with blocking MCP calls.
type MCPCallTx interface {
	// MCPCall returns the blocking MCP call with key k; ENOTFOUND when none is kept.
	MCPCall(ctx context.Context, k MCPCallKey) (*MCPCall, error)
	// PutMCPCall stores c, replacing the call with its key.
	PutMCPCall(ctx context.Context, c *MCPCall) error
	// DeleteMCPCall removes the call with key k, if one is kept.
	DeleteMCPCall(ctx context.Context, k MCPCallKey) error
	// CountEarlyCancellations returns how many calls of the agent token
	// agent are kept with AskID 0 and not Answered: cancellations of calls
	// not recorded.
	CountEarlyCancellations(ctx context.Context, agent string) (int, error)
	// PurgeMCPCalls removes every call created before createdBefore, and
	// returns how many went.
	PurgeMCPCalls(ctx context.Context, createdBefore time.Time) (int, error)
}
