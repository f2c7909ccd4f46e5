package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/response"
)

// # The access log
//
// Every request gets one line when it ends, at info (a wrong token or
// sign-in code, or an address throttled for them: at warn): its method, its
// route (the mux pattern, never the path and query as sent: a sign-in link's
// query holds its code), status, duration, the caller's role (human, agent,
// browser or none) and token name, the ask it was about, and the client's
// address; for MCP, the JSON-RPC method and tool. No token, cookie, code or
// header is ever logged. Handlers fill in what only they know through the
// request's entry (noteCaller, noteAsk; the MCP handler through
// response.AccessLine, as it parses each request). Waits and event streams
// get their line when they end; a parked MCP call, which takes its
// connection out of net/http (internal/mcpserver/parked), when it ends the
// line itself (AccessLine.End) with the status it sent.

// accessEntry is what a request's line says beyond what the middleware sees.
// It is the request's response.AccessLine.
type accessEntry struct {
	start time.Time
	s     *Server

	mu       sync.Mutex
	role     string // "" until authenticated: none
	token    string // the token's name
	ask      int64
	rpc      string // an MCP request's JSON-RPC method
	tool     string // a tools/call's tool
	hook     string // a hook call's event
	failed   bool   // a wrong token or code, or a throttled address
	req      *http.Request
	hijacked bool
	ended    bool
	// The request's method, route and client, kept when its connection is
	// hijacked instead of the request, which would hold its headers for as
	// long as a parked call waits.
	method, route, client string
}

func entryOf(ctx context.Context) *accessEntry {
	e, _ := response.AccessLineOf(ctx).(*accessEntry)
	return e
}

// NoteRPC records an MCP request's JSON-RPC method and tool.
func (e *accessEntry) NoteRPC(method, tool string) {
	e.mu.Lock()
	e.rpc, e.tool = clip(method), clip(tool)
	e.mu.Unlock()
}

// Hijacked keeps what the line needs from the request, and lets it go.
func (e *accessEntry) Hijacked() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.req == nil || e.hijacked {
		return
	}
	e.hijacked = true
	e.method, e.route, e.client = e.req.Method, e.req.Pattern, e.req.RemoteAddr
	e.req = nil
}

// End writes a hijacked request's line, once.
func (e *accessEntry) End(status int) {
	e.mu.Lock()
	first := e.hijacked && !e.ended
	e.ended = true
	e.mu.Unlock()
	if first {
		e.s.logAccess(e, e.method, e.route, e.client, status)
	}
}

// noteCaller records who made the request: a browser is a human signed in
// with the inbox cookie.
func noteCaller(r *http.Request, c askd.Caller, browser bool) {
	if e := entryOf(r.Context()); e != nil {
		role := string(c.Role)
		if browser {
			role = "browser"
		}
		e.mu.Lock()
		e.role, e.token = role, c.Name
		e.mu.Unlock()
	}
}

// noteAsk records the ask the request is about: its path's, or the one it
// created.
func noteAsk(ctx context.Context, id int64) {
	if e := entryOf(ctx); e != nil {
		e.mu.Lock()
		e.ask = id
		e.mu.Unlock()
	}
}

// noteFailedAuth records that the request's token or code was wrong, or its
// address throttled for such: its line is a warning.
func noteFailedAuth(r *http.Request) {
	if e := entryOf(r.Context()); e != nil {
		e.mu.Lock()
		e.failed = true
		e.mu.Unlock()
	}
}

// noteHook records a hook call's event name.
func noteHook(r *http.Request, event string) {
	if e := entryOf(r.Context()); e != nil {
		e.mu.Lock()
		e.hook = clip(event)
		e.mu.Unlock()
	}
}

// logged serves r through serve and writes its access line when it ends.
func (s *Server) logged(w http.ResponseWriter, r *http.Request, serve http.HandlerFunc) {
	if !s.log.Enabled(r.Context(), slog.LevelWarn) {
		serve(w, r) // neither line could be written
		return
	}
	e := &accessEntry{start: time.Now(), s: s}
	// The request the mux sees, which it gives its pattern (r.Pattern).
	r = r.WithContext(response.WithAccessLine(r.Context(), e))
	e.req = r
	lw := &loggedWriter{ResponseWriter: w}
	serve(lw, r)
	e.mu.Lock()
	hijacked := e.hijacked
	e.req = nil
	e.mu.Unlock()
	if hijacked {
		return // End writes the line
	}
	if lw.sized {
		// The response is whole (its length was declared; net/http closes
		// a short one): it goes to the client now, and its line after it,
		// rather than the line's formatting and write delaying every answer.
		_ = http.NewResponseController(w).Flush()
	}
	if lw.status == 0 {
		lw.status = http.StatusOK // what net/http sends for a handler that wrote nothing
	}
	s.logAccess(e, r.Method, r.Pattern, r.RemoteAddr, lw.status)
}

// logAccess writes a request's line. The route is the pattern ServeMux
// matched (r.Pattern, "" for none: a refused Host, an unknown path).
func (s *Server) logAccess(e *accessEntry, method, route, client string, status int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	level := slog.LevelInfo
	if e.failed {
		level = slog.LevelWarn
	}
	ctx := context.Background() // r's context may have ended: the line is still due
	if !s.log.Enabled(ctx, level) {
		return
	}
	role := e.role
	if role == "" {
		role = "none"
	}
	attrs := make([]slog.Attr, 0, 11)
	attrs = append(attrs,
		slog.String("method", method),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Duration("duration", time.Since(e.start)),
		slog.String("role", role))
	if e.token != "" {
		attrs = append(attrs, slog.String("token", e.token))
	}
	if e.ask != 0 {
		attrs = append(attrs, slog.Int64("ask", e.ask))
	}
	if e.rpc != "" {
		attrs = append(attrs, slog.String("rpc", e.rpc))
	}
	if e.tool != "" {
		attrs = append(attrs, slog.String("tool", e.tool))
	}
	if e.hook != "" {
		attrs = append(attrs, slog.String("hook", e.hook))
	}
	attrs = append(attrs, slog.String("client", client))
	s.log.LogAttrs(ctx, level, "request", attrs...)
}

// loggedWriter notes the status a handler sends. Everything else goes to the
// ResponseWriter it wraps (http.ResponseController finds it with Unwrap).
// A handler that takes the connection over finds it with Unwrap too, and
// tells the request's line (response.AccessLine.Hijacked).
type loggedWriter struct {
	http.ResponseWriter
	status int
	sized  bool // the response declared its length (Content-Length)
}

func (w *loggedWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 { // 1xx responses are not the status
		w.status = code
		w.sized = w.Header().Get("Content-Length") != ""
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *loggedWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
		w.sized = w.Header().Get("Content-Length") != ""
	}
	return w.ResponseWriter.Write(b)
}

// Flush and FlushError keep the wrapped writer's flushing for code that asks
// for an http.Flusher itself rather than through http.ResponseController.
func (w *loggedWriter) Flush() { _ = w.FlushError() }

func (w *loggedWriter) FlushError() error {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *loggedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// clip bounds a name the client chose, for the log.
func clip(s string) string {
	const max = 100
	if len(s) > max {
		return strings.ToValidUTF8(s[:max], "") + "…"
	}
	return s
}
