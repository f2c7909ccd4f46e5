// Package client is a Go client for askd's HTTP API (SPEC §3.1). The askd CLI
// and the end-to-end tests use it; so can any Go program.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/askd-dev/askd"
)

// Client talks to one askd server with one token.
type Client struct {
	URL     string // the server's base URL, e.g. http://127.0.0.1:7777
	Token   string
	Session string // agents: the Askd-Session header; "" uses the token's name
	HTTP    *http.Client
}

// New returns a client for the server at baseURL.
func New(baseURL, token string) *Client {
	return &Client{URL: strings.TrimRight(baseURL, "/"), Token: token, HTTP: &http.Client{Transport: transport}}
}

// transport is shared by clients: it keeps more idle connections per host
// than Go's default of 2, so concurrent agents reuse them instead of
// reconnecting for every request.
var transport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 256
	return t
}()

// Error is an error response from the server. It unwraps to an *askd.Error,
// so askd.ErrorCode works on it.
type Error struct {
	Status  int
	Code    string
	Message string
	Ask     *askd.Ask // the ask's current state, on a 409
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the error as an *askd.Error.
func (e *Error) Unwrap() error { return &askd.Error{Code: e.Code, Message: e.Message, Ask: e.Ask} }

// AskDetail is an ask with its history, as people read it.
type AskDetail struct {
	askd.Ask
	History []*askd.Event `json:"history"`
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	_, err := c.doHeader(ctx, method, path, body, out)
	return err
}

// doHeader is do, returning the response's headers too.
func (c *Client) doHeader(ctx context.Context, method, path string, body, out any) (http.Header, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, rd)
	if err != nil {
		return nil, err
	}
	c.header(req)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, fmt.Errorf("askd at %s: %w", c.URL, transportError(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("askd at %s: %w", c.URL, err)
	}
	if resp.StatusCode >= 300 {
		return nil, c.responseError(resp, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return nil, fmt.Errorf("askd at %s: decode %s %s: %w", c.URL, method, path, err)
		}
	}
	return resp.Header, nil
}

// responseError is the error of a response that is no success, whose body
// is data: the server's code, words and ask when it sent askd's error JSON,
// else (a proxy answered, say) its status and body, coded EINTERNAL.
func (c *Client) responseError(resp *http.Response, data []byte) *Error {
	var e struct {
		Error string    `json:"error"`
		Code  string    `json:"code"`
		Ask   *askd.Ask `json:"ask"`
	}
	if json.Unmarshal(data, &e) != nil || e.Error == "" {
		return &Error{Status: resp.StatusCode, Code: askd.EINTERNAL, Message: fmt.Sprintf("askd at %s: %s: %s", c.URL, resp.Status, bytes.TrimSpace(data))}
	}
	return &Error{Status: resp.StatusCode, Code: e.Code, Message: e.Error, Ask: e.Ask}
}

// transportError is why a request got no response, in a person's words:
// the cause without Go's "Get "URL":" wrapping, and a hint where the cause
// is the usual one. The error it wraps stays in the chain (errors.As).
func transportError(err error) error {
	var dns *net.DNSError
	var ue *url.Error
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, syscall.ECONNREFUSED):
		return &plainError{"nothing answers there (is askd serve running? check --url or ASKD_URL)", err}
	case errors.As(err, &dns):
		return &plainError{fmt.Sprintf("no such host %q (check --url or ASKD_URL)", dns.Name), err}
	case errors.As(err, &ue):
		return &plainError{ue.Err.Error(), err}
	}
	return err
}

// plainError says err in other words.
type plainError struct {
	msg string
	err error
}

func (e *plainError) Error() string { return e.msg }
func (e *plainError) Unwrap() error { return e.err }

func (c *Client) header(req *http.Request) { setAuth(req.Header, c.Token, c.Session) }

// setAuth sets the headers that say who is asking: the bearer token and, for
// agents, the askd session.
func setAuth(h http.Header, token, session string) {
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		h.Set("Askd-Session", session)
	}
}

// Transport adds a token, and an agent's askd session, to every request it
// passes on to Base: for HTTP clients of askd's other endpoints, such as an
// MCP client of /mcp. A nil Base is this package's shared transport.
type Transport struct {
	Token, Session string
	Base           http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	setAuth(r.Header, t.Token, t.Session)
	base := t.Base
	if base == nil {
		base = transport
	}
	return base.RoundTrip(r)
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func waitQuery(wait time.Duration) string {
	if wait <= 0 {
		return ""
	}
	return "?wait=" + url.QueryEscape(wait.String())
}

// Me returns the token's name and role (and for agents, the session).
func (c *Client) Me(ctx context.Context) (map[string]string, error) {
	var out map[string]string
	return out, c.do(ctx, http.MethodGet, "/api/me", nil, &out)
}

// Create asks (agent token). With wait > 0 the call returns once the ask
// settles or the wait ends.
func (c *Client) Create(ctx context.Context, in *askd.AskInput, wait time.Duration) (*askd.Ask, error) {
	var a askd.Ask
	return &a, c.do(ctx, http.MethodPost, "/api/asks"+waitQuery(wait), in, &a)
}

// Check returns the agent's own ask, waiting up to wait for it to settle.
func (c *Client) Check(ctx context.Context, id int64, wait time.Duration) (*askd.Ask, error) {
	var a askd.Ask
	return &a, c.do(ctx, http.MethodGet, fmt.Sprintf("/api/asks/%d%s", id, waitQuery(wait)), nil, &a)
}

// CreateUntold is Create, but a settled ask it returns is not told: the
// agent hands the outcome on, then marks it told with MarkTold (SPEC §14:
// the MCP gate). keep_untold over HTTP.
func (c *Client) CreateUntold(ctx context.Context, in *askd.AskInput, wait time.Duration) (*askd.Ask, error) {
	var a askd.Ask
	return &a, c.do(ctx, http.MethodPost, "/api/asks"+untoldQuery(wait), in, &a)
}

// CheckUntold is Check, but a settled ask it returns is not told (see
// CreateUntold).
func (c *Client) CheckUntold(ctx context.Context, id int64, wait time.Duration) (*askd.Ask, error) {
	var a askd.Ask
	return &a, c.do(ctx, http.MethodGet, fmt.Sprintf("/api/asks/%d%s", id, untoldQuery(wait)), nil, &a)
}

// MarkTold records that the agent handed on the outcome of its settled ask
// id, read with CreateUntold or CheckUntold: the ask as told, and told true
// when this call marked it. An ask told already, by this call's earlier
// try or by anyone else, is told false, with the ask as it is, and no
// error: of several marks one marks it. A pending ask is an error
// (ECONFLICT).
func (c *Client) MarkTold(ctx context.Context, id int64) (a *askd.Ask, told bool, err error) {
	a = new(askd.Ask)
	err = c.do(ctx, http.MethodPost, fmt.Sprintf("/api/asks/%d/told", id), struct{}{}, a)
	var ce *Error
	if errors.As(err, &ce) && ce.Status == http.StatusConflict && ce.Ask != nil && ce.Ask.ToldAt != nil {
		return ce.Ask, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return a, true, nil
}

// untoldQuery is the query of a read that keeps an outcome untold, waiting
// up to wait.
func untoldQuery(wait time.Duration) string {
	if q := waitQuery(wait); q != "" {
		return q + "&keep_untold=true"
	}
	return "?keep_untold=true"
}

// Open lists the agent session's pending asks.
func (c *Client) Open(ctx context.Context) ([]*askd.Ask, error) {
	var out struct{ Asks []*askd.Ask }
	return out.Asks, c.do(ctx, http.MethodGet, "/api/asks", nil, &out)
}

// Withdraw cancels the agent's own pending ask.
func (c *Client) Withdraw(ctx context.Context, id int64) (*askd.Ask, error) {
	var a askd.Ask
	return &a, c.do(ctx, http.MethodDelete, fmt.Sprintf("/api/asks/%d", id), nil, &a)
}

// ListOptions filter List.
type ListOptions struct {
	Status askd.Status
	// Agent and Session scope the list to one agent token's asks, or one
	// session of it (a session name alone matches that name under every
	// agent token).
	Agent   string
	Session string
	Kind    askd.Kind
	Limit   int
	Before  int64
	// Mine lists only the asks routed to the person, a team of theirs, or
	// nobody (SPEC §10).
	Mine bool
	// Cursor, when set, asks for the page of pending asks it names: the
	// Next of the page before (see ListPage). Limit is then the page's
	// size, at most 200.
	Cursor string
}

// List returns asks as the inbox shows them (human token).
func (c *Client) List(ctx context.Context, o ListOptions) ([]*askd.Ask, error) {
	var out struct{ Asks []*askd.Ask }
	return out.Asks, c.do(ctx, http.MethodGet, o.path(o.Cursor != ""), nil, &out)
}

// PageInfo is what a page of a list says besides its items.
type PageInfo struct {
	Next  string // the cursor of the next page; "" on the last
	Total int    // how many items the whole list holds
}

// pageInfo reads a page's headers.
func pageInfo(h http.Header) PageInfo {
	n, _ := strconv.Atoi(h.Get("Askd-Total"))
	return PageInfo{Next: h.Get("Askd-Next-Cursor"), Total: n}
}

// ListPage returns one page of pending asks in urgency order (human
// token): those with a deadline first, soonest first, then the others
// newest first. o.Cursor "" is the first page; the Next of a page is the
// cursor of the one after. Limit 0 is the server's default (50).
func (c *Client) ListPage(ctx context.Context, o ListOptions) ([]*askd.Ask, PageInfo, error) {
	var out struct{ Asks []*askd.Ask }
	h, err := c.doHeader(ctx, http.MethodGet, o.path(true), nil, &out)
	if err != nil {
		return nil, PageInfo{}, err
	}
	return out.Asks, pageInfo(h), nil
}

// path is o's request; paged, with cursor= however empty.
func (o ListOptions) path(paged bool) string {
	q := url.Values{}
	if o.Status != "" {
		q.Set("status", string(o.Status))
	}
	if o.Agent != "" {
		q.Set("agent", o.Agent)
	}
	if o.Session != "" {
		q.Set("session", o.Session)
	}
	if o.Kind != "" {
		q.Set("kind", string(o.Kind))
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Before > 0 {
		q.Set("before", strconv.FormatInt(o.Before, 10))
	}
	if o.Mine {
		q.Set("mine", "true")
	}
	if paged {
		q.Set("cursor", o.Cursor)
	}
	return withQuery("/api/asks", q)
}

// withQuery is path with q, if any.
func withQuery(path string, q url.Values) string {
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return path
}

// Show returns one ask with its history (human token).
func (c *Client) Show(ctx context.Context, id int64) (*AskDetail, error) {
	var d AskDetail
	return &d, c.do(ctx, http.MethodGet, fmt.Sprintf("/api/asks/%d", id), nil, &d)
}

// Answer settles an ask (human token).
func (c *Client) Answer(ctx context.Context, id int64, ans *askd.Answer) (*askd.Ask, error) {
	var a askd.Ask
	return &a, c.do(ctx, http.MethodPost, fmt.Sprintf("/api/asks/%d/answer", id), ans, &a)
}

// Dismiss closes an ask without answering it, passing response to the agent.
func (c *Client) Dismiss(ctx context.Context, id int64, response string) (*askd.Ask, error) {
	var body any
	if response != "" {
		body = map[string]string{"response": response}
	}
	var a askd.Ask
	return &a, c.do(ctx, http.MethodDelete, fmt.Sprintf("/api/asks/%d", id), body, &a)
}

// Snooze hides an ask from the inbox for d.
func (c *Client) Snooze(ctx context.Context, id int64, d time.Duration) (*askd.Ask, error) {
	var a askd.Ask
	return &a, c.do(ctx, http.MethodPost, fmt.Sprintf("/api/asks/%d/snooze", id), map[string]string{"for": d.String()}, &a)
}

// Sessions lists sessions with pending counts (human token).
func (c *Client) Sessions(ctx context.Context) ([]*askd.SessionInfo, error) {
	ss, _, err := c.SessionsWith(ctx, SessionOptions{})
	return ss, err
}

// PageOptions choose a page of a list: Cursor "" the first, then the Next
// of the page before; Limit 0 is the server's default (50), at most 200.
type PageOptions struct {
	Cursor string
	Limit  int
}

// set adds o to q.
func (o PageOptions) set(q url.Values) {
	q.Set("cursor", o.Cursor)
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
}

// SessionsPage returns one page of sessions, by agent then name (human token).
func (c *Client) SessionsPage(ctx context.Context, o PageOptions) ([]*askd.SessionInfo, PageInfo, error) {
	return c.SessionsWith(ctx, SessionOptions{Page: &o})
}

// SessionOptions choose the sessions SessionsWith lists.
type SessionOptions struct {
	// Mine lists only the sessions with asks routed to the person, a team
	// of theirs, or nobody, counting only those asks (SPEC §10).
	Mine bool
	// Page, when not nil, asks for one page; nil for the whole list.
	Page *PageOptions
}

// SessionsWith lists sessions as o says, by agent then name (human token).
func (c *Client) SessionsWith(ctx context.Context, o SessionOptions) ([]*askd.SessionInfo, PageInfo, error) {
	q := url.Values{}
	if o.Mine {
		q.Set("mine", "true")
	}
	if o.Page != nil {
		o.Page.set(q)
	}
	var out struct{ Sessions []*askd.SessionInfo }
	h, err := c.doHeader(ctx, http.MethodGet, withQuery("/api/sessions", q), nil, &out)
	if err != nil {
		return nil, PageInfo{}, err
	}
	return out.Sessions, pageInfo(h), nil
}

// HistoryOptions filter History. Zero fields match everything.
type HistoryOptions struct {
	// Query holds words every ask found has, in its text or its answer;
	// the last also matches as the start of a word.
	Query   string
	Agent   string
	Session string
	Kind    askd.Kind
	Outcome askd.Outcome // answered, dismissed, timeout, withdrawn or replaced
	By      string       // who settled the ask
	PageOptions
}

// History returns one page of settled asks, most recently settled first
// (human token).
func (c *Client) History(ctx context.Context, o HistoryOptions) ([]*askd.Ask, PageInfo, error) {
	q := url.Values{}
	for k, v := range map[string]string{"q": o.Query, "agent": o.Agent, "session": o.Session,
		"kind": string(o.Kind), "outcome": string(o.Outcome), "by": o.By} {
		if v != "" {
			q.Set(k, v)
		}
	}
	o.PageOptions.set(q)
	var out struct{ Asks []*askd.Ask }
	h, err := c.doHeader(ctx, http.MethodGet, withQuery("/api/history", q), nil, &out)
	if err != nil {
		return nil, PageInfo{}, err
	}
	return out.Asks, pageInfo(h), nil
}

// SetChannel sets how session's agent is told of settled asks (agent token,
// SPEC §5) and returns the channel as stored, its secret hidden.
func (c *Client) SetChannel(ctx context.Context, session string, ch askd.Channel) (*askd.Channel, error) {
	var out askd.Channel
	var reply struct {
		Session string `json:"session"`
		*askd.Channel
	}
	reply.Channel = &out
	return &out, c.do(ctx, http.MethodPut, "/api/sessions/"+url.PathEscape(session)+"/channel", ch, &reply)
}

// Event is one Server-Sent Event from /api/events.
type Event struct {
	ID    int64
	Type  string
	Event askd.Event
}

// Events opens the event stream, resuming after lastEventID when it is ≥ 0,
// and returns events until ctx ends or the connection drops (then the channel
// closes; call again with the last id to resume).
func (c *Client) Events(ctx context.Context, lastEventID int64) (<-chan Event, error) {
	return c.EventsWith(ctx, lastEventID, EventFilter{})
}

// EventFilter narrows an event stream. Zero fields match everything.
type EventFilter struct {
	Agent   string // the asks of this agent token
	Session string // of sessions of this name
	// Mine: the asks routed to the person, a team of theirs, or nobody
	// (SPEC §10).
	Mine bool
}

// EventsWith is Events, of the events f matches.
func (c *Client) EventsWith(ctx context.Context, lastEventID int64, f EventFilter) (<-chan Event, error) {
	q := url.Values{}
	if f.Agent != "" {
		q.Set("agent", f.Agent)
	}
	if f.Session != "" {
		q.Set("session", f.Session)
	}
	if f.Mine {
		q.Set("mine", "true")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+withQuery("/api/events", q), nil)
	if err != nil {
		return nil, err
	}
	c.header(req)
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID >= 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(lastEventID, 10))
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, fmt.Errorf("askd at %s: %w", c.URL, transportError(err))
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return nil, c.responseError(resp, data)
	}
	ch := make(chan Event, 64)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		var ev Event
		var data []byte
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if data != nil {
					if json.Unmarshal(data, &ev.Event) == nil {
						select {
						case ch <- ev:
						case <-ctx.Done():
							return
						}
					}
				}
				ev, data = Event{}, nil
			case strings.HasPrefix(line, "id: "):
				ev.ID, _ = strconv.ParseInt(line[4:], 10, 64)
			case strings.HasPrefix(line, "event: "):
				ev.Type = line[7:]
			case strings.HasPrefix(line, "data: "):
				data = append(data, line[6:]...)
			}
		}
	}()
	return ch, nil
}

// sessionPath is the path of agent session's resource under /api/sessions.
func sessionPath(session, rest string) string {
	return "/api/sessions/" + url.PathEscape(session) + rest
}

// Attach attaches a channel bridge to session (agent token) and returns its
// told texts as the server leases them, until ctx ends or the stream drops
// (then the channel closes; attach again). Report each one told with
// ChannelTold once it has reached the agent.
func (c *Client) Attach(ctx context.Context, session string) (<-chan askd.ChannelTell, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+sessionPath(session, "/channel/deliveries"), nil)
	if err != nil {
		return nil, err
	}
	c.header(req)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, fmt.Errorf("askd at %s: %w", c.URL, transportError(err))
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return nil, c.responseError(resp, data)
	}
	ch := make(chan askd.ChannelTell, 16)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		var data []byte
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				var t askd.ChannelTell
				if data != nil && json.Unmarshal(data, &t) == nil {
					select {
					case ch <- t:
					case <-ctx.Done():
						return
					}
				}
				data = nil
			case strings.HasPrefix(line, "data: "):
				data = append(data, line[6:]...)
			}
		}
	}()
	return ch, nil
}

// ChannelTold reports that the told text key of session reached the agent
// (agent token); the ask is marked told, by channel.
func (c *Client) ChannelTold(ctx context.Context, session, key string) (*askd.Ask, error) {
	var a askd.Ask
	return &a, c.do(ctx, http.MethodPost, sessionPath(session, "/channel/told"), map[string]string{"key": key}, &a)
}

// RelayPermission makes the inbox card of a permission prompt Claude Code
// relayed to session's channel bridge, or finds it again (agent token).
func (c *Client) RelayPermission(ctx context.Context, session string, in *askd.PermissionRelay) (*askd.Ask, error) {
	var a askd.Ask
	return &a, c.do(ctx, http.MethodPost, sessionPath(session, "/channel/permissions"), in, &a)
}

// CloseRelay closes the card of relayed prompt requestID of session, which
// was answered without the inbox: reason "terminal" or "ended".
func (c *Client) CloseRelay(ctx context.Context, session, requestID, reason string) (*askd.Ask, error) {
	var a askd.Ask
	return &a, c.do(ctx, http.MethodDelete, sessionPath(session, "/channel/permissions/"+url.PathEscape(requestID)), map[string]string{"reason": reason}, &a)
}

// Hook posts a Claude Code or Codex hook's input to askd's hook endpoint
// (/hooks/claude) and returns askd's hook output, as the hook prints it;
// wait > 0 lets a Stop hook wait that long for pending asks (?wait=).
func (c *Client) Hook(ctx context.Context, input json.RawMessage, wait time.Duration) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.do(ctx, http.MethodPost, "/hooks/claude"+waitQuery(wait), input, &out)
	return out, err
}

// AgentHook posts the hook input of a coding-agent CLI other than Claude
// Code and Codex (copilot, qwen, gemini, opencode) to askd's /hooks/CLI and
// returns askd's reply in the CLI's own shape (SPEC §18). event names the
// hook's event ("" for the input's hook_event_name); wait bounds a
// pre-tool hook's wait for a decision, and a next-prompt hook's for the
// session's pending asks (0: none).
func (c *Client) AgentHook(ctx context.Context, cli, event string, input json.RawMessage, wait time.Duration) (json.RawMessage, error) {
	q := url.Values{}
	if event != "" {
		q.Set("event", event)
	}
	if wait > 0 {
		q.Set("wait", wait.String())
	}
	path := "/hooks/" + url.PathEscape(cli)
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out json.RawMessage
	err := c.do(ctx, http.MethodPost, path, input, &out)
	return out, err
}

// HookOnlyPolicies is Hook for a PermissionRequest hook that takes only the
// prompts a policy covers (/hooks/claude?only=policies); for any other it
// returns {}, no decision.
func (c *Client) HookOnlyPolicies(ctx context.Context, input json.RawMessage) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.do(ctx, http.MethodPost, "/hooks/claude?only=policies", input, &out)
	return out, err
}
