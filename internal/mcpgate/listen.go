package mcpgate

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/askd-dev/askd/internal/hostcheck"
)

// # The streamable HTTP listener (--listen)
//
// The gate serves MCP's streamable HTTP at /mcp. An initialize request
// (MCP 2025 revisions) starts a session: an Mcp-Session-Id, a server of its
// own (the child started anew, or a session with the remote server), and a
// gate session between them. A request without a session id that is not
// initialize (2026-07-28's stateless requests, server/discover) goes to one
// shared session whose server every such client uses: the listener gives
// each request an id of its own there, and its progress token, so that two
// clients' ids never meet, and puts theirs back on what comes back.
//
// Each request's answer, and what the server sends about it (progress, an
// elicitation the client answers), goes on that request's SSE stream (or,
// to a client that accepts only JSON, the answer alone as JSON); anything
// else on the session's GET stream, else on its newest open stream. A
// stream that closes before its answer cuts its call off, as
// notifications/cancelled does.
//
// Every request is checked before its body is read, by askd's own rules
// (SPEC §7): its Host must name the gate (loopback names, the address it
// listens on, any address when it listens on all, --allowed-host names), an
// Origin must be the Host's own, and with --listen-token-file the
// Authorization must be that Bearer token (required off loopback).

// frontPath is where the listener serves MCP.
const frontPath = "/mcp"

// front is the listener: its sessions, by id.
type front struct {
	g     *gate
	ctx   context.Context
	hosts *hostcheck.Policy // the Host headers served (DNS rebinding: internal/hostcheck)

	running   sync.WaitGroup // sessions still running
	starting  sync.Mutex     // one stateless session is started at a time
	mu        sync.Mutex
	sessions  map[string]*frontConn
	stateless *frontConn
}

func (g *gate) serveHTTP(ctx context.Context) error {
	ln, err := net.Listen("tcp", g.listen)
	if err != nil {
		return fmt.Errorf("gate mcp: --listen %s: %w", g.listen, err)
	}
	f := &front{g: g, ctx: ctx, hosts: hostcheck.New(g.allowedHosts, ln.Addr().String()), sessions: map[string]*frontConn{}}
	srv := &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second}
	g.say("serving MCP at http://%s%s for %s", ln.Addr(), frontPath, g.name)
	if g.listening != nil {
		g.listening(ln.Addr().String())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
	}
	f.closeAll()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	f.running.Wait() // each has stopped its server
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := f.refuse(r); err != nil {
		if err.status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="askd gate mcp"`)
		}
		http.Error(w, "askd gate mcp: "+err.msg, err.status)
		return
	}
	if r.URL.Path != frontPath {
		http.Error(w, "askd gate mcp: MCP is served at "+frontPath, http.StatusNotFound)
		return
	}
	switch r.Method {
	case http.MethodPost:
		f.post(w, r)
	case http.MethodGet:
		f.listenStream(w, r)
	case http.MethodDelete:
		// The session is gone from the map before the 204 is written: a
		// request naming it after the DELETE is answered 404, as the
		// transport says, not served by a session still closing.
		if c := f.end(r.Header.Get("Mcp-Session-Id")); c != nil {
			c.close()
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "askd gate mcp: GET, POST or DELETE", http.StatusMethodNotAllowed)
	}
}

// refusal is why a request is refused, with its status.
type refusal struct {
	status int
	msg    string
}

// refuse checks r's Host, Origin and token, before its body is read.
func (f *front) refuse(r *http.Request) *refusal {
	if !f.hosts.Allows(r.Host) {
		return &refusal{http.StatusForbidden, fmt.Sprintf("Host %q is not one this gate serves: it answers loopback names, the address it listens on and --allowed-host names (DNS rebinding protection)", r.Host)}
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return &refusal{http.StatusForbidden, fmt.Sprintf("cross-origin request refused: Origin %q is not this gate's", o)}
		}
	}
	if f.g.listenToken != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(f.g.listenToken)) != 1 {
			return &refusal{http.StatusUnauthorized, "this gate requires Authorization: Bearer with the token of its --listen-token-file"}
		}
	}
	return nil
}

func (f *front) session(id string) *frontConn {
	if id == "" {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sessions[id]
}

// post takes one message: into the session its Mcp-Session-Id names, a new
// session for initialize, the shared stateless one otherwise.
func (f *front) post(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxLine+1))
	if err != nil || len(body) > maxLine {
		http.Error(w, "askd gate mcp: the body could not be read whole", http.StatusBadRequest)
		return
	}
	m, err := parseMessage(body)
	if err != nil {
		writeMessage(w, http.StatusBadRequest, errorMessage(nil, codeInvalidRequest, "askd gate: "+err.Error()))
		return
	}
	var c *frontConn
	switch sid := r.Header.Get("Mcp-Session-Id"); {
	case sid != "":
		if c = f.session(sid); c == nil {
			writeMessage(w, http.StatusNotFound, errorMessage(m.ID, codeInvalidRequest, "askd gate: no such session (it ended): initialize again"))
			return
		}
	case m.isRequest() && m.Method == "initialize":
		if c, err = f.start(newSessionID()); err != nil {
			writeMessage(w, http.StatusBadGateway, errorMessage(m.ID, codeInternal, err.Error()))
			return
		}
		w.Header().Set("Mcp-Session-Id", c.id)
	default:
		if c, err = f.statelessConn(); err != nil {
			writeMessage(w, http.StatusBadGateway, errorMessage(m.ID, codeInternal, err.Error()))
			return
		}
	}
	if !m.isRequest() {
		c.receive(c.inbound(m))
		w.WriteHeader(http.StatusAccepted)
		return
	}
	st, m := c.open(m, acceptsStream(r))
	c.receive(m)
	c.serve(w, r, st)
}

// listenStream serves a session's standalone GET stream.
func (f *front) listenStream(w http.ResponseWriter, r *http.Request) {
	c := f.session(r.Header.Get("Mcp-Session-Id"))
	if c == nil {
		w.Header().Set("Allow", "POST, DELETE")
		http.Error(w, "askd gate mcp: a GET stream needs a session (Mcp-Session-Id)", http.StatusMethodNotAllowed)
		return
	}
	c.serve(w, r, c.openGET())
}

// start starts a session: its server, and the gate between.
func (f *front) start(id string) (*frontConn, error) {
	up, err := f.g.dialUpstream(f.ctx)
	if err != nil {
		return nil, err
	}
	c := newFrontConn(id)
	s := newSession(f.ctx, f.g, c, up)
	c.sess = s
	f.mu.Lock()
	if id == "" {
		f.stateless = c
	} else {
		f.sessions[id] = c
	}
	f.mu.Unlock()
	f.running.Add(1)
	go func() {
		defer f.running.Done()
		if err := s.run(); err != nil {
			f.g.say("session %s: %v", id, err)
		}
		f.mu.Lock()
		if f.stateless == c {
			f.stateless = nil
		}
		if f.sessions[id] == c {
			delete(f.sessions, id)
		}
		f.mu.Unlock()
	}()
	return c, nil
}

// end takes the session id out of the listener's map and returns it, nil
// when there is none.
func (f *front) end(id string) *frontConn {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.sessions[id]
	delete(f.sessions, id)
	return c
}

// statelessConn is the shared session of requests that name none, started
// with the first of them.
func (f *front) statelessConn() (*frontConn, error) {
	f.starting.Lock()
	defer f.starting.Unlock()
	f.mu.Lock()
	c := f.stateless
	f.mu.Unlock()
	if c != nil {
		return c, nil
	}
	return f.start("")
}

func (f *front) closeAll() {
	f.mu.Lock()
	conns := make([]*frontConn, 0, len(f.sessions)+1)
	for _, c := range f.sessions {
		conns = append(conns, c)
	}
	if f.stateless != nil {
		conns = append(conns, f.stateless)
	}
	f.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

func newSessionID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// acceptsStream reports whether the client takes an SSE stream in answer.
func acceptsStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			if mt == "text/event-stream" || mt == "*/*" {
				return true
			}
		}
	}
	return false
}

// writeMessage answers with one message as JSON.
func writeMessage(w http.ResponseWriter, status int, m *message) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(m.raw)
}
