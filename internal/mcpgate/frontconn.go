package mcpgate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// frontConn is the client side of one listener session (listen.go): what
// its clients POST comes out of read; what the gate writes goes on the HTTP
// response it belongs to.
type frontConn struct {
	id        string // Mcp-Session-Id; "" for the shared stateless session
	sess      *session
	incoming  chan *message
	closed    chan struct{}
	closeOnce sync.Once

	mu      sync.Mutex
	streams map[string]*stream // open requests' streams, by the id key the gate knows each by
	order   []*stream          // open streams, oldest first
	get     *stream            // the standalone GET stream
	// The stateless session's own ids and progress tokens, given to each
	// request (stateless only): what the client sent, by the key given.
	given  uint64
	ids    map[string]json.RawMessage
	tokens map[string]json.RawMessage
}

// stream is one HTTP response that messages go out on.
type stream struct {
	key    string // the id key the gate knows its request by; "" for GET
	answer string // the id key of the answer that ends it, as the client sees it
	ch     chan *message
	done   chan struct{} // closed when the response ends
	json   bool          // the client takes JSON only: the answer alone
	listen bool          // a subscriptions/listen request: it carries what the server sends unasked
}

func newFrontConn(id string) *frontConn {
	return &frontConn{
		id: id, incoming: make(chan *message, 16), closed: make(chan struct{}),
		streams: map[string]*stream{}, ids: map[string]json.RawMessage{}, tokens: map[string]json.RawMessage{},
	}
}

func (c *frontConn) read(ctx context.Context) (*message, error) {
	select {
	case m := <-c.incoming:
		return m, nil
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, io.EOF
	}
}

func (c *frontConn) close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// receive hands a client's message to the gate.
func (c *frontConn) receive(m *message) {
	select {
	case c.incoming <- m:
	case <-c.closed:
	}
}

// open registers the stream that request m's answer goes on, and returns
// m as the gate is to get it: in the stateless session, under an id (and
// progress token) of the listener's own.
func (c *frontConn) open(m *message, sse bool) (*stream, *message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := &stream{answer: m.key(), ch: make(chan *message, 16), done: make(chan struct{}), json: !sse, listen: m.Method == "subscriptions/listen"}
	if c.id == "" {
		c.given++
		id := encode(fmt.Sprintf("askd-listener-%d", c.given))
		c.ids[idKey(id)] = m.ID
		if t := progressToken(m.Params); t != nil {
			mine := encode(fmt.Sprintf("askd-listener-%d", c.given))
			c.tokens[idKey(mine)] = t
			if meta, err := setMember(member(m.Params, "_meta"), "progressToken", mine); err == nil {
				if params, err := setMember(m.Params, "_meta", meta); err == nil {
					m = m.withParams(params)
				}
			}
		}
		m = m.withID(id)
	}
	st.key = m.key()
	c.streams[st.key] = st
	c.order = append(c.order, st)
	return st, m
}

// inbound is a client's notification or response as the gate is to get
// it: in the stateless session, a cancellation names the request by the
// id the listener gave it.
func (c *frontConn) inbound(m *message) *message {
	if c.id != "" || m.Method != "notifications/cancelled" {
		return m
	}
	theirs := idKey(member(m.Params, "requestId"))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.order) - 1; i >= 0; i-- {
		if st := c.order[i]; st.answer == theirs && st.key != "" {
			if params, err := setMember(m.Params, "requestId", rawID(st.key)); err == nil {
				return m.withParams(params)
			}
		}
	}
	return m
}

// openGET registers a standalone stream; it takes the place of an older.
func (c *frontConn) openGET() *stream {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := &stream{ch: make(chan *message, 16), done: make(chan struct{})}
	c.get = st
	c.order = append(c.order, st)
	return st
}

// write sends m, from the gate, on the stream it belongs to: an answer on
// its request's; what the server sends about a request on that request's
// (unless that client takes JSON only); anything else on the GET stream,
// else the newest open one (the stateless session: every subscriptions/
// listen stream). An answer whose stream closed is dropped: its client is
// gone.
func (c *frontConn) write(ctx context.Context, m *message) error {
	key := m.related
	if m.isResponse() {
		key = m.key()
	}
	c.mu.Lock()
	var targets []*stream
	st := c.streams[key]
	switch {
	case st != nil && (m.isResponse() || !st.json):
		targets = []*stream{st}
		if m.isResponse() {
			delete(c.streams, key)
		}
	case m.isResponse():
	case c.get != nil:
		targets = []*stream{c.get}
	case c.id == "":
		for _, o := range c.order {
			if o.listen {
				targets = append(targets, o)
			}
		}
	default:
		for i := len(c.order) - 1; i >= 0; i-- {
			if !c.order[i].json {
				targets = []*stream{c.order[i]}
				break
			}
		}
	}
	m = c.restore(m)
	c.mu.Unlock()
	for _, st := range targets {
		select {
		case st.ch <- m:
		case <-st.done:
		case <-c.closed:
		case <-ctx.Done():
		}
	}
	return nil
}

// restore is m as its client is to see it: in the stateless session, with
// the id and progress token the client sent.
func (c *frontConn) restore(m *message) *message {
	if c.id != "" {
		return m
	}
	if m.isResponse() {
		k := m.key()
		if id, ok := c.ids[k]; ok {
			delete(c.ids, k)
			delete(c.tokens, k)
			return m.withID(id)
		}
		return m
	}
	if m.Method == "notifications/progress" {
		if t, ok := c.tokens[idKey(member(m.Params, "progressToken"))]; ok {
			if params, err := setMember(m.Params, "progressToken", t); err == nil {
				return m.withParams(params)
			}
		}
	}
	return m
}

// serve writes stream st's messages on w until its answer has gone (a
// request's), the client goes away or the session ends. A request whose
// client went away first is cut off (session.clientGone).
func (c *frontConn) serve(w http.ResponseWriter, r *http.Request, st *stream) {
	defer c.closeStream(st)
	if st.json {
		select {
		case m := <-st.ch:
			writeMessage(w, http.StatusOK, m)
		case <-r.Context().Done():
			c.sess.clientGone(st.key)
		case <-c.closed:
			http.Error(w, "askd gate mcp: the session ended", http.StatusServiceUnavailable)
		}
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	for {
		select {
		case m := <-st.ch:
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", strings.ReplaceAll(string(m.raw), "\n", ""))
			if flusher != nil {
				flusher.Flush()
			}
			if st.key != "" && m.isResponse() && m.key() == st.answer {
				return
			}
		case <-r.Context().Done():
			if st.key != "" {
				c.sess.clientGone(st.key)
			}
			return
		case <-c.closed:
			return
		}
	}
}

func (c *frontConn) closeStream(st *stream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.streams[st.key] == st {
		delete(c.streams, st.key)
		delete(c.ids, st.key) // its answer, if one comes, is no one's
		delete(c.tokens, st.key)
	}
	if c.get == st {
		c.get = nil
	}
	for i, o := range c.order {
		if o == st {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
	close(st.done)
}
