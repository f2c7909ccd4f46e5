package mcpgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/askd-dev/askd"
)

// session is the gate between one client and one server: it passes every
// message on as it came, both ways, but for what it takes itself (a tool
// call that waits for a person, the server's elicitations, the capability
// that lets the server elicit) and what it answers in their place.
type session struct {
	g    *gate
	down conn // the client
	up   conn // the server

	ctx    context.Context // ends with the session: every held call is cut off
	cancel context.CancelFunc

	mu sync.Mutex
	// calls are the client's tools/call requests in flight, by id key:
	// held for a decision, or passed to the server and watched for its
	// result. upIDs are those the gate retries under an id of its own (an
	// input_required result it fulfils), by that id's key.
	calls map[string]*toolCall
	upIDs map[string]*toolCall
	// forwarded are the client's other requests the server has, by id key
	// (each one's progress token key, "" for none): answered by the gate
	// if the server goes away.
	forwarded map[string]string
	// progress is the client request (id key) each progress token (idKey
	// of the token) was sent with.
	progress map[string]string
	// elicits are the server's elicitation requests the gate is putting to
	// a person, by id key: a cancellation from the server ends one.
	elicits map[string]context.CancelFunc
	// continued counts the retries the client may make without a new
	// approval: calls approved (or allowed) whose input_required result
	// went to the client, by continuation key.
	continued map[string]int
	// clientElicits: the client declared elicitation at initialize (MCP
	// 2025 revisions; 2026-07-28 declares it in each request).
	clientElicits bool
	ownIDs        uint64
}

func newSession(ctx context.Context, g *gate, down, up conn) *session {
	s := &session{
		g: g, down: down, up: up,
		calls: map[string]*toolCall{}, upIDs: map[string]*toolCall{},
		forwarded: map[string]string{}, progress: map[string]string{},
		elicits: map[string]context.CancelFunc{}, continued: map[string]int{},
	}
	s.ctx, s.cancel = context.WithCancel(ctx)
	return s
}

// errServerGone ends a session whose server went away.
type errServerGone struct{ err error }

func (e *errServerGone) Error() string { return e.err.Error() }
func (e *errServerGone) Unwrap() error { return e.err }

// run passes messages until the client is done (nil) or the server goes
// away (*errServerGone). Either way every held call is cut off: its
// approval stays pending in askd for the same call to pick up later.
func (s *session) run() error {
	fromServer := make(chan error, 1)
	go func() { fromServer <- s.readServer() }()
	fromClient := make(chan error, 1)
	go func() { fromClient <- s.readClient() }()
	var err error
	select {
	case err = <-fromClient:
	case err = <-fromServer:
		err = &errServerGone{err}
		s.serverGone(err)
	case <-s.ctx.Done():
	}
	s.cancel()
	s.up.close()
	s.down.close()
	return err
}

func (s *session) readClient() error {
	for {
		m, err := s.down.read(s.ctx)
		var bad *badMessage
		switch {
		case errors.As(err, &bad):
			s.g.say("the client sent %s", err)
			s.toClient(errorMessage(nil, codeInvalidRequest, "askd gate: "+err.Error()))
			continue
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
		if err := strict(m); err != nil {
			s.g.say("refused a message from the client: %v", err)
			if m.isRequest() {
				s.toClient(withRelated(errorMessage(m.ID, codeInvalidRequest, "askd gate: "+err.Error()+"; the message went no further"), m.key()))
			}
			continue
		}
		s.fromClient(m)
	}
}

// strict refuses a client's message that parsers could read two ways: a
// key given twice (encoding/json keeps the last, some parsers the first:
// {"method":"tools/call","method":"ping"} would pass the gate as a ping),
// text that is not UTF-8; and a tools/call sent as a notification, which
// no one could approve and some servers might run.
func strict(m *message) error {
	var probe struct{}
	if err := askd.DecodeOpen(m.raw, &probe); err != nil {
		return fmt.Errorf("not strict JSON (%s)", askd.ErrorMessage(err))
	}
	if m.isNotification() && m.Method == "tools/call" {
		return errors.New("a tools/call without an id")
	}
	return nil
}

func (s *session) readServer() error {
	for {
		m, err := s.up.read(s.ctx)
		var bad *badMessage
		if errors.As(err, &bad) {
			s.g.say("the MCP server sent %s", err)
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		s.fromServer(m)
	}
}

// fromClient handles one message from the client.
func (s *session) fromClient(m *message) {
	switch {
	case m.isRequest():
		switch m.Method {
		case "tools/call":
			s.startCall(m)
			return
		case "initialize":
			m = s.initialize(m)
		default:
			m, _ = s.declare(m)
		}
		s.mu.Lock()
		s.forwarded[m.key()] = ""
		if t := progressToken(m.Params); t != nil {
			s.forwarded[m.key()] = idKey(t)
			s.progress[idKey(t)] = m.key()
		}
		s.mu.Unlock()
	case m.isNotification() && m.Method == "notifications/cancelled":
		if m = s.clientCancelled(m); m == nil {
			return
		}
	}
	s.toServer(m)
}

// fromServer handles one message from the server.
func (s *session) fromServer(m *message) {
	switch {
	case m.isResponse():
		k := m.key()
		s.mu.Lock()
		c := s.upIDs[k]
		if c == nil {
			if c = s.calls[k]; c != nil && (!c.isForwarded() || idKey(c.upstreamID()) != k) {
				c = nil // held still: this is no answer to it
			}
		}
		if t, ok := s.forwarded[k]; ok {
			delete(s.forwarded, k)
			if t != "" && s.progress[t] == k {
				delete(s.progress, t)
			}
		}
		s.mu.Unlock()
		if c != nil {
			s.callResult(c, m)
			return
		}
		if s.isOwnID(k) {
			return // the answer to a retry whose call is over: no one's
		}
		m.related = k
	case m.isRequest() && m.Method == "elicitation/create" && s.answersElicitation():
		s.startElicit(m)
		return
	case m.isNotification():
		switch m.Method {
		case "notifications/cancelled":
			if s.elicitCancelled(m) {
				return
			}
		case "notifications/progress":
			s.mu.Lock()
			m.related = s.progress[idKey(member(m.Params, "progressToken"))]
			s.mu.Unlock()
		}
	}
	s.toClient(m)
}

func (s *session) toServer(m *message) {
	if err := s.up.write(s.ctx, m); err != nil && s.ctx.Err() == nil {
		s.g.say("pass a message to the MCP server: %v", err)
	}
}

func (s *session) toClient(m *message) {
	if err := s.down.write(s.ctx, m); err != nil && s.ctx.Err() == nil {
		s.g.say("pass a message to the client: %v", err)
	}
}

// serverGone answers every request the server had and will not answer now,
// a tool call with an error result: the client learns at once what
// happened. Calls still held for a decision are answered too; their
// approvals stay in askd as they are (cut off).
func (s *session) serverGone(err error) {
	s.mu.Lock()
	calls := make([]*toolCall, 0, len(s.calls))
	for _, c := range s.calls {
		calls = append(calls, c)
	}
	others := make([]string, 0, len(s.forwarded))
	for k := range s.forwarded {
		others = append(others, k)
	}
	s.forwarded = map[string]string{}
	s.mu.Unlock()
	if e, ok := s.up.(interface{ gone(error) error }); ok {
		err = e.gone(err)
	}
	what := fmt.Sprintf("the MCP server %s went away (%v)", s.g.name, err)
	for _, c := range calls {
		c.cancel()
		text := "askd gate: " + what + " before it answered this call; it may or may not have run."
		if !c.isForwarded() {
			text = "askd gate: " + what + "; the call was not made." + c.pendingNote()
		}
		s.toClient(withRelated(toolError(c.msg, text), c.key))
	}
	for _, k := range others {
		if id := rawID(k); id != nil {
			s.toClient(withRelated(errorMessage(id, codeInternal, "askd gate: "+what), k))
		}
	}
	if len(calls) > 0 || len(others) > 0 {
		s.g.say("%s", what)
	}
}

// rawID is the id an id key was made from (idKey), nil for none.
func rawID(k string) json.RawMessage {
	if k == "" {
		return nil
	}
	switch k[0] {
	case 's':
		return encode(k[1:])
	case 'n', 'r':
		return json.RawMessage(k[1:])
	}
	return nil
}

func withRelated(m *message, key string) *message {
	m.related = key
	return m
}

// clientCancelled handles the client's notifications/cancelled: a call the
// gate holds is cut off (its approval stays pending; the server never
// heard of the call, so the notification goes no further: nil); one the
// server has gets the notification, under the id the server knows it by.
func (s *session) clientCancelled(m *message) *message {
	k := idKey(member(m.Params, "requestId"))
	s.mu.Lock()
	c := s.calls[k]
	s.mu.Unlock()
	if c == nil {
		return m
	}
	up := c.upstreamID()
	forwarded := c.isForwarded()
	// Held, or put to a person for the server (input_required): that ends.
	c.giveUp()
	if !forwarded {
		return nil
	}
	s.endCall(c) // a result that comes all the same is no one's
	if idKey(up) == k {
		return m
	}
	params, err := setMember(m.Params, "requestId", up)
	if err != nil {
		return m
	}
	return m.withParams(params)
}

// clientGone is a client whose request k can no longer get its answer (the
// listener's stream for it closed): a held call is cut off, as by
// notifications/cancelled.
func (s *session) clientGone(k string) {
	s.mu.Lock()
	c := s.calls[k]
	s.mu.Unlock()
	if c != nil && !c.isForwarded() {
		c.giveUp()
	}
}

// isOwnID reports whether id key k is one of the gate's own (nextID).
func (s *session) isOwnID(k string) bool {
	return strings.HasPrefix(k, "s"+ownIDPrefix+s.g.instance+"-")
}

// ownIDPrefix starts the ids of the gate's own requests to the server.
const ownIDPrefix = "askd-gate-"

// nextID is a request id of the gate's own, for the server: a string no
// client of this session has in flight (clients' ids are numbers, or
// strings of their own making; one the same as the gate's is skipped).
func (s *session) nextID() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		s.ownIDs++
		id := encode(fmt.Sprintf("%s%s-%d", ownIDPrefix, s.g.instance, s.ownIDs))
		k := idKey(id)
		if _, busy := s.forwarded[k]; !busy && s.calls[k] == nil {
			return id
		}
	}
}
