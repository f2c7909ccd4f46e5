package mcpgate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// # The server's questions
//
// An MCP server asks its user in one of two ways: a legacy
// elicitation/create request (MCP 2025 revisions), or, on 2026-07-28, a
// tools/call result of resultType input_required whose inputRequests hold
// elicitation/create requests, answered by calling again with
// inputResponses and the requestState echoed. Either becomes a form ask in
// askd (SPEC §9, source NAME), and the person's answer goes back: accept
// with the content, decline, or cancel when the ask was dismissed, timed
// out or askd stopped. So that the server asks at all, the gate declares
// elicitation to it (form and url) whatever the client declares: in
// initialize on the 2025 revisions, in each request's _meta on 2026-07-28.
//
// With --elicitation client, a client that declares elicitation answers
// them itself: its capability goes to the server as it is, and the
// server's questions go to it. The client's retry of an input_required
// call it answered is that call going on: it passes without a new
// approval (continues).

// elicitationCaps is the elicitation capability the gate declares: form and
// url mode; {} on 2025-06-18, which knew only forms and no modes.
func elicitationCaps(version string) json.RawMessage {
	if version != "" && version < "2025-11-25" {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(`{"form":{},"url":{}}`)
}

// declaresElicitation reports whether capabilities hold elicitation.
func declaresElicitation(caps json.RawMessage) bool { return !isNull(member(caps, "elicitation")) }

// initialize notes the client's initialize request (2025 revisions) and
// returns it as the server is to get it: declaring elicitation, unless the
// client answers elicitations itself (--elicitation client).
func (s *session) initialize(m *message) *message {
	caps := member(m.Params, "capabilities")
	s.mu.Lock()
	s.clientElicits = declaresElicitation(caps)
	s.mu.Unlock()
	if !s.answersElicitation() {
		return m
	}
	var version string
	json.Unmarshal(member(m.Params, "protocolVersion"), &version)
	caps, err := setMember(caps, "elicitation", elicitationCaps(version))
	if err != nil {
		return m
	}
	params, err := setMember(m.Params, "capabilities", caps)
	if err != nil {
		return m
	}
	return m.withParams(params)
}

// declare returns request m as the server is to get it: on 2026-07-28,
// whose requests each carry the client's capabilities in _meta, declaring
// elicitation there unless the client answers elicitations itself.
// clientElicits reports whether m's own capabilities declare it.
func (s *session) declare(m *message) (_ *message, clientElicits bool) {
	meta := member(m.Params, "_meta")
	if isNull(member(meta, metaProtocolVersion)) {
		return m, false
	}
	caps := member(meta, metaClientCapabilities)
	if isNull(caps) {
		// A request without the capabilities its revision requires goes
		// as it came, for the server to refuse: the gate makes no invalid
		// request valid (the conformance suite's check of it).
		return m, false
	}
	clientElicits = declaresElicitation(caps)
	if clientElicits && s.g.elicitToClient {
		return m, true
	}
	caps, err := setMember(caps, "elicitation", elicitationCaps(""))
	if err != nil {
		return m, clientElicits
	}
	if meta, err = setMember(meta, metaClientCapabilities, caps); err != nil {
		return m, clientElicits
	}
	params, err := setMember(m.Params, "_meta", meta)
	if err != nil {
		return m, clientElicits
	}
	return m.withParams(params), clientElicits
}

// answersElicitation reports whether the gate answers the server's
// elicitations itself: unless --elicitation client and the client declared
// elicitation.
func (s *session) answersElicitation() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !(s.g.elicitToClient && s.clientElicits)
}

// startElicit puts the server's elicitation/create request m to a person
// and answers the server with what they did.
func (s *session) startElicit(m *message) {
	ctx, cancel := context.WithCancel(s.ctx)
	k := m.key()
	s.mu.Lock()
	s.elicits[k] = cancel
	s.mu.Unlock()
	go func() {
		defer cancel()
		res, err := s.g.elicit(ctx, m.Params)
		s.mu.Lock()
		delete(s.elicits, k)
		s.mu.Unlock()
		if err != nil && ctx.Err() != nil {
			return // the server cancelled it, or the session ended: no answer
		}
		s.toServer(resultMessage(m.ID, res))
	}()
}

// elicitCancelled handles the server's notifications/cancelled of an
// elicitation the gate is putting to a person: its form ask is withdrawn.
func (s *session) elicitCancelled(m *message) bool {
	k := idKey(member(m.Params, "requestId"))
	s.mu.Lock()
	cancel := s.elicits[k]
	s.mu.Unlock()
	if cancel == nil {
		return false
	}
	cancel()
	return true
}

// elicitResult is what an elicitation is answered.
type elicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// elicit puts an elicitation (its params) to a person as a form ask and
// waits for what to answer. A form askd refuses, or cannot take now (its
// pending cap), is declined at once, the reason on the gate's stderr; askd
// unreachable, cancelled. When ctx ends, the form ask is withdrawn and
// ctx's error returned.
func (g *gate) elicit(ctx context.Context, params json.RawMessage) (elicitResult, error) {
	var p struct {
		Mode            string          `json:"mode"`
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
		URL             string          `json:"url"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		g.say("an elicitation declined: its params do not parse: %v", err)
		return elicitResult{Action: askd.FormDecline}, nil
	}
	// The message is the server's words: control characters are written
	// as escapes, as askd would otherwise refuse them (and decline).
	in := &askd.AskInput{Kind: askd.KindForm, Title: clip(multiLine(p.Message), askd.MaxFormTitleChars), Source: g.name}
	switch p.Mode {
	case "", "form":
		in.Schema = p.RequestedSchema
		if in.Schema == nil {
			in.Schema = json.RawMessage("null")
		}
	case "url":
		in.URL = p.URL
	default:
		g.say("an elicitation declined: askd does not know its mode %q", oneLine(p.Mode))
		return elicitResult{Action: askd.FormDecline}, nil
	}
	// The first look waits with the ask's creation, up to an hour: a gate
	// stopped meanwhile (killed, say) withdraws the form in askd, which no
	// answer could reach now. Later looks do not (askd's waits by id change
	// nothing when cut): a form a killed gate left then times out in askd.
	a, err := g.askd.Create(ctx, in, g.longestWait)
	switch code := askd.ErrorCode(err); {
	case code == askd.EINVALID || code == askd.ELIMIT:
		g.say("an elicitation declined: askd cannot put it to a person: %s", errorText(err))
		return elicitResult{Action: askd.FormDecline}, nil
	case ctx.Err() != nil:
		return elicitResult{}, ctx.Err()
	case err != nil:
		g.say("an elicitation cancelled: %s", errorText(err))
		return elicitResult{Action: askd.FormCancel}, nil
	}
	for a.Pending() {
		b, err := g.askd.Check(ctx, a.ID, g.longestWait)
		switch {
		case ctx.Err() != nil:
			g.withdraw(a.ID)
			return elicitResult{}, ctx.Err()
		case err == nil:
			a = b
		case temporary(err):
			sleep(ctx, time.Second)
		default:
			g.say("an elicitation cancelled: form ask #%d: %s", a.ID, errorText(err))
			g.withdraw(a.ID)
			return elicitResult{Action: askd.FormCancel}, nil
		}
	}
	out := app.FormOutcome(a)
	return elicitResult{Action: out.Action, Content: out.Content}, nil
}

// withdraw takes back a pending form ask whose server no longer waits:
// nothing could carry a later answer to it.
func (g *gate) withdraw(id int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := g.askd.Withdraw(ctx, id); err != nil && askd.ErrorCode(err) != askd.ECONFLICT {
		g.say("withdraw form ask #%d: %s", id, errorText(err))
	}
}

// inputRequest is one of an input_required result's requests.
type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// inputRequests are the requests of an input_required tools/call result
// (MCP 2026-07-28), nil for any other response.
func inputRequests(m *message) map[string]inputRequest {
	var r struct {
		ResultType    string                  `json:"resultType"`
		InputRequests map[string]inputRequest `json:"inputRequests"`
	}
	if m.Result == nil || json.Unmarshal(m.Result, &r) != nil || r.ResultType != "input_required" {
		return nil
	}
	if r.InputRequests == nil {
		return map[string]inputRequest{}
	}
	return r.InputRequests
}

// fulfils reports whether the gate answers c's input_required result
// itself: it answers elicitations only, and leaves them to a client that
// declares elicitation under --elicitation client.
func (s *session) fulfils(c *toolCall, requests map[string]inputRequest) bool {
	if len(requests) == 0 {
		return false // load shedding: the client retries when it will
	}
	for _, r := range requests {
		if r.Method != "elicitation/create" {
			return false
		}
	}
	if !s.g.elicitToClient {
		return true
	}
	return !declaresElicitation(member(member(c.msg.Params, "_meta"), metaClientCapabilities))
}

// fulfil answers the elicitations of input_required result m to call c
// and calls again, with inputResponses and the requestState echoed, under
// an id of the gate's own; the answer to that comes to callResult as c's.
func (s *session) fulfil(c *toolCall, m *message, requests map[string]inputRequest) {
	responses := map[string]elicitResult{}
	for _, k := range slices.Sorted(maps.Keys(requests)) {
		res, err := s.g.elicit(c.ctx, requests[k].Params)
		if err != nil {
			s.endCall(c) // the client gave up: no reply is due
			return
		}
		responses[k] = res
	}
	params, err := setMember(c.msg.Params, "inputResponses", encode(responses))
	if err == nil {
		params, err = setMember(params, "requestState", member(m.Result, "requestState"))
	}
	if err != nil {
		s.reply(c, toolError(c.msg, "askd gate: "+err.Error()))
		return
	}
	id := s.nextID()
	retry, _ := s.declare(c.msg.withParams(params).withID(id))
	s.mu.Lock()
	s.upIDs[idKey(id)] = c
	c.mu.Lock()
	c.upID = id
	c.mu.Unlock()
	s.mu.Unlock()
	s.toServer(retry)
}

// continuationKey names the retry of an input_required result: the tool,
// its arguments and the requestState to be echoed.
func continuationKey(tool string, args json.RawMessage, state string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", tool, state)
	if canon, ok := canonicalObject(args); ok {
		h.Write(canon)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// allowContinuation lets the client's retry of c, which got input_required
// result m, pass without a new approval: it is c going on.
func (s *session) allowContinuation(c *toolCall, m *message) {
	var state string
	json.Unmarshal(member(m.Result, "requestState"), &state)
	s.mu.Lock()
	s.continued[continuationKey(c.tool, c.args, state)]++
	s.mu.Unlock()
}

// continues reports whether c is the client's retry of a call let through
// whose input_required result it answered (allowContinuation); it uses up
// that leave.
func (s *session) continues(c *toolCall) bool {
	var state string
	if c.params.RequestState != nil {
		state = *c.params.RequestState
	}
	k := continuationKey(c.tool, c.args, state)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.continued[k] == 0 {
		return false
	}
	if s.continued[k]--; s.continued[k] == 0 {
		delete(s.continued, k)
	}
	return true
}

// callProgress is how a held call reports that it waits: a progress
// notification under its progress token, if it has one.
func (s *session) callProgress(c *toolCall) func(id int64) {
	if c.token == nil {
		return nil
	}
	var n float64
	return func(id int64) {
		n++
		msg := fmt.Sprintf("waiting for a person to approve %s on %s in askd", c.tool, s.g.name)
		if id != 0 {
			msg += fmt.Sprintf(" (approval #%d)", id)
		}
		s.toClient(withRelated(notification("notifications/progress", map[string]any{
			"progressToken": c.token, "progress": n, "message": msg,
		}), c.key))
	}
}
