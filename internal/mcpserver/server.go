package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	httpresponse "github.com/askd-dev/askd/internal/response"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure the MCP server.
type Options struct {
	// ProgressInterval is how often a blocked tool call that carries a
	// progress token gets notifications/progress; 0 means 30 s.
	ProgressInterval time.Duration
	// Version is reported as the server's version.
	Version string
	// Logger gets askd's own lines (cut-off calls, undelivered results);
	// the go-sdk gets it only when it logs at debug level (see sdkLogger).
	Logger *slog.Logger
}

// ServerName is the MCP server's name; Claude Code calls its tools
// mcp__askd__<tool>.
const ServerName = "askd"

// capabilities are what askd's MCP server declares, in the initialize result
// and the server/discover result alike: exactly what it answers.
//
// The go-sdk answers prompts/list, prompts/get, resources/list,
// resources/templates/list and resources/read on every server (empty lists,
// "unknown prompt", "Resource not found"), but on its own declares prompts
// and resources only once one is registered. askd registers none, so it
// answered prompt and resource methods without declaring them, where MCP says
// a server that supports prompts MUST declare them (the conformance suite's
// check sep-2575-server-declares-prompts-in-discover). Declared, with
// nothing in them, they say what askd serves.
//
// No list ever changes: the six tools are added once, before serving, and
// there are no prompts or resources. So listChanged is false throughout; the
// SDK's default for tools, true, made a 2026-07-28 client's
// subscriptions/listen hold its connection open for a notification that
// never comes. Resource subscriptions and completions are not declared:
// their methods are "method not found".
// Capabilities is what askd's MCP server declares, here and through the
// stdio bridge (askd mcp), which serves the same tools.
func Capabilities() *mcp.ServerCapabilities {
	return &mcp.ServerCapabilities{
		Tools:     &mcp.ToolCapabilities{},
		Prompts:   &mcp.PromptCapabilities{},
		Resources: &mcp.ResourceCapabilities{},
		// The SDK answers logging/setLevel on the 2025 revisions, as it
		// declared by default; askd sends no log messages.
		//lint:ignore SA1019 deprecated from 2026-07-28 only; askd serves the 2025 revisions too
		Logging: &mcp.LoggingCapabilities{},
	}
}

// New returns the MCP server with askd's six tools. The caller of each tool
// call comes from app.CallerFrom(ctx); a call without one is refused.
func New(svc *app.Service, opts Options) *mcp.Server {
	return newTools(svc, opts).server()
}

// Handler serves the tools over streamable HTTP, stateless (see the package
// doc), for mounting behind askd's authentication at /mcp. It runs tools/call
// itself and parks waiting calls on their connections (see park.go); the SDK
// serves everything else.
func Handler(svc *app.Service, opts Options) *HTTPHandler {
	t := newTools(svc, opts)
	srv := t.server()
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless: true,
		// 2026-07-28 clients cancel by closing the response stream.
		PropagateRequestCancellation: true,
		// Every request carries a bearer token checked before this handler, so
		// a DNS-rebinding page cannot call it; and behind a reverse proxy on
		// the same host the Host header is the public name, not localhost.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        askd.MaxBodyBytes,
		Logger:                     sdkLogger(t.log),
	})
	go func() {
		<-svc.Closing()
		t.lot.Close()
	}()
	return &HTTPHandler{tools: t, next: sdk}
}

// sdkLogger is the logger the go-sdk gets: askd's own at debug level, and
// otherwise one that passes only its warnings and errors. At info the SDK
// logs three lines for every request it serves ("server connecting", "server
// session connected", "server session disconnected", with an empty session
// id when stateless), which tell an operator nothing the access log does not.
func sdkLogger(log *slog.Logger) *slog.Logger {
	log = log.With("from", "go-sdk")
	if log.Enabled(context.Background(), slog.LevelDebug) {
		return log
	}
	return slog.New(minLevel{log.Handler(), slog.LevelWarn})
}

// minLevel is h without its records below min.
type minLevel struct {
	h   slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.h.Enabled(ctx, l)
}
func (m minLevel) Handle(ctx context.Context, r slog.Record) error { return m.h.Handle(ctx, r) }
func (m minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{m.h.WithAttrs(as), m.min}
}
func (m minLevel) WithGroup(name string) slog.Handler { return minLevel{m.h.WithGroup(name), m.min} }

// Drain waits until every parked call has been answered after the service
// closed (each with "server shutting down, call check_ask"), or ctx ends.
// http.Server.Shutdown does not wait for them: they left net/http.
func (h *HTTPHandler) Drain(ctx context.Context) error {
	select {
	case <-h.tools.lot.Drained():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Parked is the number of tool calls parked on their connections.
func (h *HTTPHandler) Parked() int { return h.tools.lot.Len() }

// callID names one tools/call of an old-revision client for cancellation
// routing; the agent and askd session come from the caller.
type callID struct {
	mcpSession string // the Mcp-Session-Id askd gave the client
	request    string // the JSON-RPC id, as raw JSON
}

// HTTPHandler looks at each POST before the SDK does: it runs well-formed
// tools/calls of askd's tools itself, gives old-revision clients a session id
// at initialize, and turns notifications/cancelled into a cut-off of the
// call's ask. Whatever it does not serve goes to the SDK, which also answers
// malformed requests. It parses each body once (parseMessage), and tells the
// access log the method and tool it read (response.AccessLine).
type HTTPHandler struct {
	tools *tools
	next  http.Handler
}

// jsonrpcMessage is the part of a JSON-RPC message the handler reads, all
// of it from one parse of the body (parseMessage).
type jsonrpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  jsonrpcParams   `json:"params"`
	// badParams: params is not an object, or a field below has another
	// type; only a notifications/cancelled's requestId may still be read.
	badParams bool
}

// jsonrpcParams is what the handler reads of a message's params: a
// tools/call's name, arguments and _meta, a notifications/cancelled's
// requestId.
type jsonrpcParams struct {
	Name      string                     `json:"name"`
	Arguments json.RawMessage            `json:"arguments"`
	Meta      map[string]json.RawMessage `json:"_meta"`
	RequestID json.RawMessage            `json:"requestId"`
}

// parseMessage parses an MCP request's body, the one time askd does: the
// access log, the tools and cancellation all read the message it returns.
// ok is false for anything but an object with a string jsonrpc and method
// (a batch, garbage), which the SDK answers; even then msg holds what could
// be read of it, for the access log.
func parseMessage(body []byte) (msg jsonrpcMessage, ok bool) {
	err := json.Unmarshal(body, &msg)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return msg, true
	case errors.As(err, &te) && (te.Field == "params" || strings.HasPrefix(te.Field, "params.")):
		// Unmarshal goes on past a value of the wrong type: the rest of the
		// message is read, and which of the params are is not known.
		msg.badParams = true
		return msg, true
	}
	return msg, false
}

// tool is a tools/call's tool name, "" for another method.
func (msg *jsonrpcMessage) tool() string {
	if msg.Method != "tools/call" {
		return ""
	}
	return msg.Params.Name
}

const (
	sessionIDHeader       = "Mcp-Session-Id"
	protocolVersionHeader = "Mcp-Protocol-Version"
	methodHeader          = "Mcp-Method"
	nameHeader            = "Mcp-Name"
	statelessRevision     = "2026-07-28"
)

func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Body == nil {
		h.next.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, askd.MaxBodyBytes))
	if err != nil {
		http.Error(w, "request body larger than 1 MiB", http.StatusRequestEntityTooLarge)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body)) // for the SDK, whatever askd does not serve
	msg, ok := parseMessage(body)
	if line := httpresponse.AccessLineOf(r.Context()); line != nil {
		line.NoteRPC(msg.Method, msg.tool())
	}
	if !ok { // a batch or garbage: the SDK answers it
		h.next.ServeHTTP(w, r)
		return
	}
	caller, ok := app.CallerFrom(r.Context())
	if !ok {
		http.Error(w, errNoCaller.Error(), http.StatusUnauthorized)
		return
	}
	oldRevision := r.Header.Get(protocolVersionHeader) < statelessRevision
	switch msg.Method {
	case "initialize":
		if r.Header.Get(sessionIDHeader) == "" {
			w.Header().Set(sessionIDHeader, rand.Text())
		}
	case "tools/call":
		rpc, f := h.toolCall(r, &msg)
		if f == nil {
			break // not one askd serves: the SDK answers it
		}
		// Only old-revision clients carry the session id askd gave them, and
		// only they cancel with a separate request.
		var id *callID
		if s := r.Header.Get(sessionIDHeader); s != "" {
			id = &callID{mcpSession: s, request: string(msg.ID)}
		}
		h.tools.serveCall(w, r, caller, rpc, f, id)
		return
	case "notifications/cancelled":
		// On 2026-07-28 closing the stream is the cancellation, handled by the
		// call itself; a notice there carries no session to tell clients apart.
		if oldRevision {
			if err := h.cancelled(r.Context(), caller, r.Header.Get(sessionIDHeader), msg.Params.RequestID); askd.ErrorCode(err) == askd.ELIMIT {
				// Refused, and not kept: a notification has no JSON-RPC
				// response, so the HTTP status says it.
				http.Error(w, askd.ErrorMessage(err), httpresponse.Status(askd.ELIMIT))
				return
			}
		}
	}
	h.next.ServeHTTP(w, r)
}

// toolCall returns the call and askd's tool for a well-formed tools/call of
// one of askd's tools, or a nil tool for anything the SDK should answer
// (including every error the transport and the protocol define).
func (h *HTTPHandler) toolCall(r *http.Request, msg *jsonrpcMessage) (*jsonrpcRequest, toolFunc) {
	version := r.Header.Get(protocolVersionHeader)
	accJSON, accStream := accepts(r.Header.Values("Accept"))
	if msg.JSONRPC != "2.0" || len(msg.ID) == 0 || string(msg.ID) == "null" ||
		!accJSON || !accStream || mediaType(r.Header.Get("Content-Type")) != "application/json" ||
		version != "" && !supportedRevision(version) {
		return nil, nil
	}
	if msg.badParams {
		return nil, nil
	}
	params := &msg.Params
	f := h.tools.byName[params.Name]
	if f == nil || version >= statelessRevision &&
		(r.Header.Get(methodHeader) != msg.Method || r.Header.Get(nameHeader) != params.Name) {
		return nil, nil
	}
	rpc := &jsonrpcRequest{id: msg.ID, name: params.Name, version: version, call: call{args: params.Arguments}}
	if tok := params.Meta["progressToken"]; len(tok) > 0 && string(tok) != "null" {
		rpc.progress = tok // sent back as it came: a string or an integer of any size
	}
	_ = json.Unmarshal(params.Meta[claudeToolUseMeta], &rpc.call.toolUseID) // not a string: none
	return rpc, f
}

// accepts is what an Accept header allows, as the SDK reads it.
func accepts(values []string) (json, stream bool) {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				json = true
			case "text/event-stream", "text/*":
				stream = true
			case "*/*":
				json, stream = true, true
			}
		}
	}
	return json, stream
}

func mediaType(v string) string {
	t, _, err := mime.ParseMediaType(v)
	if err != nil {
		return ""
	}
	return t
}

// cancelled handles a notifications/cancelled: whichever agent process holds
// the call it names (found in the store; see app.Service.CallCancelled), the
// call ends without a response and its ask is cut off — it stays pending,
// to be told (SPEC §2.1). Its error, logged here, is CallCancelled's.
func (h *HTTPHandler) cancelled(ctx context.Context, c askd.Caller, mcpSession string, requestID json.RawMessage) error {
	if mcpSession == "" || len(requestID) == 0 {
		return nil
	}
	id, err := h.tools.svc.CallCancelled(context.WithoutCancel(ctx), c, mcpSession, string(requestID))
	switch {
	case err != nil:
		h.tools.log.Warn("cancel MCP call", "request", string(requestID), "err", err)
	case id != 0:
		h.tools.log.Info("call cut off", "id", id, "why", "the client cancelled the call")
	}
	return err
}

var errNoCaller = errors.New("no authenticated caller: askd's MCP tools are served behind its /mcp endpoint")
