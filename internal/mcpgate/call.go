package mcpgate

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/askd-dev/askd"
)

// toolCall is one tools/call of the client's, from the moment the gate
// reads it until its result reaches the client.
type toolCall struct {
	msg    *message        // the request as the client sent it
	id     json.RawMessage // the client's id for it
	key    string          // idKey(id)
	tool   string
	args   json.RawMessage // as sent; nil when the call has none
	token  json.RawMessage // its progress token, nil for none
	params callParams

	ctx    context.Context // ends when the client gives up on it
	cancel context.CancelFunc

	mu        sync.Mutex
	forwarded bool            // the server has it
	upID      json.RawMessage // the id the server has it under, once forwarded
	// approval is the approval it waits on or went through with, nil when
	// --allow let it through or none was made.
	approval *askd.Ask
}

// giveUp ends c's wait, at once: its approval, pending or decided and
// untold, stays in askd for the same call again (onecall.go).
func (c *toolCall) giveUp() { c.cancel() }

// asked notes the approval c waits on.
func (c *toolCall) asked(a *askd.Ask) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.approval = a
}

// callParams are the members of tools/call's params the gate reads.
type callParams struct {
	Name           string          `json:"name"`
	Arguments      json.RawMessage `json:"arguments"`
	InputResponses json.RawMessage `json:"inputResponses"`
	RequestState   *string         `json:"requestState"`
}

func (c *toolCall) isForwarded() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.forwarded
}

// upstreamID is the id the server has the call under (the client's own,
// or one of the gate's for a retry it makes).
func (c *toolCall) upstreamID() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.upID == nil {
		return c.id
	}
	return c.upID
}

// pendingNote is what a result says of an approval that stays pending when
// a call ends without its decision.
func (c *toolCall) pendingNote() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.approval == nil {
		return ""
	}
	return fmt.Sprintf(" Approval #%d stays pending in askd; the same call again picks up its decision.", c.approval.ID)
}

// startCall takes a tools/call from the client: the gate holds it until it
// may go on (runCall). A call whose params the gate cannot read is refused
// as a JSON-RPC error: nothing can be asked about it.
func (s *session) startCall(m *message) {
	c := &toolCall{msg: m, id: m.ID, key: m.key(), token: progressToken(m.Params)}
	if err := json.Unmarshal(m.Params, &c.params); err != nil || c.params.Name == "" {
		s.toClient(withRelated(errorMessage(m.ID, -32602, "askd gate: tools/call params need a tool name; the call was not made"), c.key))
		return
	}
	c.tool, c.args = c.params.Name, c.params.Arguments
	c.ctx, c.cancel = context.WithCancel(s.ctx)
	s.mu.Lock()
	if old := s.calls[c.key]; old != nil {
		s.mu.Unlock()
		// JSON-RPC ids are unique among requests in flight: a second with
		// the same id is the client's mistake, refused so that no result
		// goes to the wrong call.
		s.toClient(withRelated(errorMessage(m.ID, codeInvalidRequest, "askd gate: a request with this id is already in flight; the call was not made"), c.key))
		return
	}
	s.calls[c.key] = c
	if c.token != nil {
		s.progress[idKey(c.token)] = c.key
	}
	s.mu.Unlock()
	go s.runCall(c)
}

// runCall lets c go to the server once it may: at once when --allow names
// its tool or it continues a call already let through; otherwise once a
// person approves it in askd. Anything else answers it with an error
// result, and the server never sees it.
func (s *session) runCall(c *toolCall) {
	continuing := c.params.InputResponses != nil || c.params.RequestState != nil
	switch {
	case continuing && s.continues(c):
		s.forward(c, c.msg)
		return
	case continuing:
		// Answers to questions the server did not ask through the gate:
		// a client could answer a server's confirmation itself, where
		// the person was to.
		s.reply(c, toolError(c.msg, fmt.Sprintf("askd gate: this call to %s carries answers (inputResponses, requestState) to questions the server did not ask through the gate; the MCP server did not get the call.", c.tool)))
		return
	case s.g.allow[c.tool]:
		s.forward(c, c.msg)
		return
	}
	v := s.g.approve(c.ctx, c, s.callProgress(c))
	if c.ctx.Err() != nil {
		// The client gave up (or the session ended): no reply is due, and
		// the call goes no further. Its approval, decided or not, stays
		// for the same call again, unless the gate had marked it used in
		// that moment (onecall.go).
		s.endCall(c)
		return
	}
	if v.refusal != "" {
		s.reply(c, toolError(c.msg, v.refusal))
		return
	}
	m := c.msg
	if v.args != nil {
		params, err := setMember(c.msg.Params, "arguments", v.args)
		if err != nil {
			s.reply(c, toolError(c.msg, "askd gate: "+err.Error()))
			return
		}
		m = c.msg.withParams(params)
	}
	// The decision is this call's (marked told, approve): a later
	// identical call asks anew.
	s.forward(c, m)
}

// forward passes call c to the server as m (the client's request, or it
// with the arguments the person wrote, and the gate's elicitation
// capability where the client's revision declares it in each request).
func (s *session) forward(c *toolCall, m *message) {
	m, _ = s.declare(m)
	c.mu.Lock()
	c.forwarded, c.upID = true, c.id
	c.mu.Unlock()
	s.toServer(m)
}

// reply answers c with m, and forgets it.
func (s *session) reply(c *toolCall, m *message) {
	s.endCall(c)
	s.toClient(withRelated(m, c.key))
}

// endCall forgets c.
func (s *session) endCall(c *toolCall) {
	c.cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls[c.key] == c {
		delete(s.calls, c.key)
	}
	if c.token != nil && s.progress[idKey(c.token)] == c.key {
		delete(s.progress, idKey(c.token))
	}
	for k, x := range s.upIDs {
		if x == c {
			delete(s.upIDs, k)
		}
	}
}

// callResult handles the server's response to c: an input_required result
// the gate fulfils is put to a person and the call retried (fulfil);
// anything else goes to the client, under the client's id.
func (s *session) callResult(c *toolCall, m *message) {
	if m.lost != "" {
		s.reply(c, toolError(c.msg, "askd gate: "+m.lost+"; the call may or may not have run."))
		return
	}
	if requests := inputRequests(m); requests != nil {
		if s.fulfils(c, requests) {
			go s.fulfil(c, m, requests)
			return
		}
		// The client answers it and retries: the retry is this call
		// going on, not a new one to approve.
		s.allowContinuation(c, m)
	}
	out := m
	if idKey(c.upstreamID()) != c.key {
		out = m.withID(c.id)
	}
	s.reply(c, out)
}
