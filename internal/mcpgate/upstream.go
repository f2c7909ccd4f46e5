package mcpgate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"
)

// httpUpstream is the gate's conn to a remote MCP server over streamable
// HTTP: each message the client sends is POSTed as it is; what the server
// answers (a JSON body, or an SSE stream of messages) comes back through
// read, each message as it came. It is written by hand rather than taken
// from the go-sdk, whose client transport decodes and re-encodes messages
// and learns the session's protocol revision only from its own client.
//
// The session id (Mcp-Session-Id) and protocol revision (from the
// initialize result, or a 2026-07-28 request's _meta) go on every request,
// with 2026-07-28's Mcp-Method and Mcp-Name; after a 2025 initialize the
// standalone GET stream carries what the server sends unasked. A request
// the server does not answer (an HTTP error, the connection lost) gets a
// JSON-RPC error from the gate, marked so that a tool call's becomes an
// error result. --upstream-header headers go on every request; askd's token
// never does.
type httpUpstream struct {
	url     string
	headers http.Header
	client  *http.Client

	ctx      context.Context
	cancel   context.CancelFunc
	incoming chan *message
	failed   chan struct{} // closed with failErr: the session is gone
	failOnce sync.Once
	failErr  error

	mu        sync.Mutex
	sessionID string
	version   string // the negotiated revision, once initialize answered
	getOpen   bool
}

func newHTTPUpstream(url string, headers http.Header) *httpUpstream {
	u := &httpUpstream{
		url: url, headers: headers, client: &http.Client{},
		incoming: make(chan *message, 64), failed: make(chan struct{}),
	}
	u.ctx, u.cancel = context.WithCancel(context.Background())
	return u
}

func (u *httpUpstream) read(ctx context.Context) (*message, error) {
	select {
	case m := <-u.incoming:
		return m, nil
	case <-u.failed:
		return nil, u.failErr
	case <-ctx.Done():
		return nil, io.EOF
	case <-u.ctx.Done():
		return nil, io.EOF
	}
}

func (u *httpUpstream) fail(err error) {
	u.failOnce.Do(func() { u.failErr = err; close(u.failed) })
}

func (u *httpUpstream) deliver(m *message) {
	select {
	case u.incoming <- m:
	case <-u.ctx.Done():
	}
}

// write POSTs m. A request's answer is read on a goroutine of its own, so
// that a slow call holds up nothing else; notifications and responses are
// sent before write returns, in order.
func (u *httpUpstream) write(ctx context.Context, m *message) error {
	if !m.isRequest() {
		resp, err := u.post(u.ctx, m)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			return fmt.Errorf("the MCP server at %s answered %s to %s", u.url, resp.Status, describe(m))
		}
		return nil
	}
	go u.call(m)
	return nil
}

// call POSTs request m and delivers what comes back.
func (u *httpUpstream) call(m *message) {
	resp, err := u.post(u.ctx, m)
	if err != nil {
		if u.ctx.Err() == nil {
			u.deliver(lostCall(m, fmt.Sprintf("the MCP server at %s could not be reached: %v", u.url, err)))
		}
		return
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound && u.session() != "":
		u.fail(fmt.Errorf("the MCP server at %s ended the session (404 for session %s)", u.url, u.session()))
		return
	case resp.StatusCode >= 300:
		u.deliver(httpFailure(m, resp, u.url))
		return
	case resp.StatusCode == http.StatusAccepted:
		return // the answer comes on the standalone stream
	}
	if m.Method == "initialize" {
		u.mu.Lock()
		u.sessionID = resp.Header.Get("Mcp-Session-Id")
		u.mu.Unlock()
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	answered := false
	onMessage := func(got *message) {
		got.related = m.key()
		if got.isResponse() && got.key() == m.key() {
			answered = true
			if m.Method == "initialize" {
				u.initialized(got)
			}
		}
		u.deliver(got)
	}
	switch ct {
	case "application/json":
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxLine))
		if err == nil {
			var got *message
			if got, err = parseMessage(body); err == nil {
				onMessage(got)
			}
		}
	case "text/event-stream":
		err = readEvents(resp.Body, func(data []byte) {
			if got, perr := parseMessage(data); perr == nil {
				onMessage(got)
			}
		})
	default:
		err = fmt.Errorf("a response of type %q", ct)
	}
	if !answered && u.ctx.Err() == nil {
		why := "closed the stream before answering"
		if err != nil {
			why = "sent " + err.Error()
		}
		u.deliver(lostCall(m, fmt.Sprintf("the MCP server at %s %s", u.url, why)))
	}
}

// post sends m with the session's headers.
func (u *httpUpstream) post(ctx context.Context, m *message) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.url, bytes.NewReader(m.raw))
	if err != nil {
		return nil, err
	}
	u.setHeaders(req, m)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	return u.client.Do(req)
}

// setHeaders sets --upstream-header's headers, then the MCP ones: the
// session, the protocol revision (m's own on 2026-07-28, else the
// negotiated one), and on 2026-07-28 Mcp-Method and Mcp-Name.
func (u *httpUpstream) setHeaders(req *http.Request, m *message) {
	for k, vs := range u.headers {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	u.mu.Lock()
	session, version := u.sessionID, u.version
	u.mu.Unlock()
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	var own string
	if m != nil {
		json.Unmarshal(member(member(m.Params, "_meta"), metaProtocolVersion), &own)
	}
	if own != "" {
		version = own
	}
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if m == nil || version < "2026-07-28" || m.Method == "" {
		return
	}
	req.Header.Set("Mcp-Method", m.Method)
	var named struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	json.Unmarshal(m.Params, &named)
	switch m.Method {
	case "tools/call", "prompts/get":
		req.Header.Set("Mcp-Name", named.Name)
	case "resources/read":
		req.Header.Set("Mcp-Name", named.URI)
	}
}

func (u *httpUpstream) session() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.sessionID
}

// initialized notes the revision the server answered initialize with and,
// on a 2025 revision, opens the standalone stream.
func (u *httpUpstream) initialized(m *message) {
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	json.Unmarshal(m.Result, &r)
	u.mu.Lock()
	u.version = r.ProtocolVersion
	open := !u.getOpen && r.ProtocolVersion != "" && r.ProtocolVersion < "2026-07-28"
	u.getOpen = u.getOpen || open
	u.mu.Unlock()
	if open {
		go u.listen()
	}
}

// listen keeps the standalone GET stream open, resuming after its last
// event when it drops, until the server says it has none (405) or the
// conn closes.
func (u *httpUpstream) listen() {
	var lastID string
	for tries := 0; u.ctx.Err() == nil && tries < 5; {
		req, err := http.NewRequestWithContext(u.ctx, http.MethodGet, u.url, nil)
		if err != nil {
			return
		}
		u.setHeaders(req, nil)
		req.Header.Set("Accept", "text/event-stream")
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := u.client.Do(req)
		if err == nil && resp.StatusCode == http.StatusOK {
			tries = 0
			readEventsWithID(resp.Body, func(id string, data []byte) {
				if id != "" {
					lastID = id
				}
				if m, perr := parseMessage(data); perr == nil {
					u.deliver(m)
				}
			})
		}
		if resp != nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode >= 400 && resp.StatusCode < 500 {
				return // no standalone stream here
			}
		}
		tries++
		sleep(u.ctx, time.Duration(tries)*time.Second)
	}
}

func (u *httpUpstream) close() error {
	session := u.session()
	u.cancel()
	if session == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, u.url, nil)
	if err != nil {
		return err
	}
	u.setHeaders(req, nil)
	if resp, err := u.client.Do(req); err == nil {
		resp.Body.Close()
	}
	return nil
}

// lostCall is the gate's answer to request m that the server did not
// answer: a JSON-RPC error, and for a tool call (callResult) an error
// result saying why.
func lostCall(m *message, why string) *message {
	out := withRelated(errorMessage(m.ID, codeInternal, "askd gate: "+why), m.key())
	out.lost = why
	return out
}

// httpFailure is the answer to request m that the server refused with an
// HTTP error: its JSON-RPC error when the body holds one, else lostCall.
func httpFailure(m *message, resp *http.Response, url string) *message {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if got, err := parseMessage(body); err == nil && got.isResponse() && got.Error != nil {
		got.related = m.key()
		return got
	}
	return lostCall(m, fmt.Sprintf("the MCP server at %s answered %s", url, resp.Status))
}

// describe names a message in an error.
func describe(m *message) string {
	switch {
	case m.Method != "":
		return m.Method
	case m.ID != nil:
		return "a response"
	}
	return "a message"
}

// readEvents calls fn with each event's data from an SSE stream until it
// ends; the error is why, nil at its end.
func readEvents(r io.Reader, fn func(data []byte)) error {
	return readEventsWithID(r, func(_ string, data []byte) { fn(data) })
}

func readEventsWithID(r io.Reader, fn func(id string, data []byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var data []byte
	var id, event string
	for {
		line, err := br.ReadString('\n')
		if len(line) > maxLine {
			return errLineTooLong
		}
		trimmed := strings.TrimRight(line, "\r\n")
		switch {
		case trimmed == "" && line != "":
			if len(data) > 0 && (event == "" || event == "message") {
				fn(id, data)
			}
			data, event = nil, ""
		case strings.HasPrefix(trimmed, ":"):
		default:
			field, value, _ := strings.Cut(trimmed, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "data":
				if data != nil {
					data = append(data, '\n')
				}
				data = append(data, value...)
			case "id":
				id = value
			case "event":
				event = value
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
