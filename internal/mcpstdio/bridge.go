// Package mcpstdio is `askd mcp`: askd's MCP tools on stdin/stdout, for MCP
// clients that start their tools as a process rather than reach a URL.
//
// The bridge (Serve, bridge.go) is a local MCP server that runs no tool of its
// own. At start it checks that an askd answers at --url and takes the agent
// token, then lists the tools and instructions of that server's /mcp and
// offers them as its own. Each tools/call goes on to the server over
// streamable HTTP, so schemas, validation messages, results and progress are
// the server's, and what the server promises of a call the client cancels
// (the ask stays pending; calling again re-attaches to it) holds over stdio
// too. stdout carries the protocol alone; logs go to stderr.
//
// The channel (channel.go, with --channel) makes the same process Claude
// Code's channel: it pushes the answers askd tells the session into the
// running Claude Code as notifications/claude/channel, reporting each told
// only once written, and relays Claude Code's permission prompts to the inbox
// as approval cards, sending the person's allow or deny back.
//
// Who runs them: the MCP client, never a person. Any client configured with
// `askd mcp` as a stdio server starts the bridge (docs/clients.md, "Any MCP
// client over stdio"); `askd install claude --channel` writes such an entry
// into Claude Code's .mcp.json, and Claude Code started with ASKD_CHANNEL=1
// (which sets --channel) and its development-channels flag runs it as its
// channel too. Each process serves one client in one session, until the
// client closes its stdin.
package mcpstdio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Version is the version the bridge gives as its own, to the MCP client it
// serves and to the askd it calls; cmd/askd sets it to askd's version.
var Version = "dev"

// Serve is `askd mcp`: an MCP server on stdin/stdout for clients that start
// their tools as a process, bridging every call to a running askd's /mcp.
// It returns once the client closes stdin or ctx ends (nil), or with the
// error that kept it from starting: a cli.UsageError for a bad flag or no
// token, else why no askd accepted the token.
//
// The bridge runs no tool itself. It lists the server's tools and forwards
// each tools/call over streamable HTTP with the go-sdk client, so schemas,
// validation messages and results are the server's own, byte for byte.
// Progress notifications come back under the caller's progress token. A
// call the client cancels (notifications/cancelled) cancels the forwarded
// request, which the server takes as a cut-off: the ask stays pending, and
// calling again with the same questions re-attaches to it. The cancelled call
// gets no response (see stdioTransport). Logs go to stderr only: stdout
// carries the protocol.
//
// With --channel the bridge is also Claude Code's channel (channel.go): it
// declares claude/channel and claude/channel/permission, pushes the
// session's told texts into the running session, and relays its permission
// prompts to the inbox. Off by default: Claude Code listens to a channel
// only when started with --channels or --dangerously-load-development-channels
// naming it, which a bridge cannot see, and a text pushed to a Claude Code
// that does not listen is told to no one.
func Serve(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "mcp", "[flags]   (speaks MCP on stdin/stdout)")
	url := fs.String("url", "http://127.0.0.1:7777", "the askd server to bridge to")
	token := fs.String("token", "", "an agent token")
	session := fs.String("session", "", "the session to ask in (default: the token's name)")
	asChannel := fs.Bool("channel", false, "be Claude Code's channel: push answers into the running session and relay its permission prompts\n(only with claude --dangerously-load-development-channels server:askd; see docs/clients.md)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error (logs go to stderr)")
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.UsageError(fmt.Sprintf("mcp: unexpected argument %q", fs.Arg(0)))
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return cli.UsageError(fmt.Sprintf("--log-level: %q is not debug, info, warn or error", *logLevel))
	}
	log := slog.New(slog.NewTextHandler(e.Stderr, &slog.HandlerOptions{Level: level}))
	if *token == "" {
		return cli.UsageError("mcp: no token: set ASKD_TOKEN to an agent token (askd token create --agent NAME)")
	}
	base := strings.TrimRight(*url, "/")
	b, err := dialBridge(ctx, base, *token, *session, *asChannel, log)
	if err != nil {
		return err
	}
	defer b.upstream.Close()
	log.Info("askd mcp bridging stdio", "server", *url, "session", b.session, "tools", b.tools, "channel", *asChannel)
	in, ok := e.Stdin.(io.ReadCloser)
	if !ok {
		in = io.NopCloser(e.Stdin)
	}
	t := &stdioTransport{in: in, out: e.Stdout}
	if *asChannel {
		api := client.New(base, *token)
		api.Session = b.session
		ch := newChannel(api, b.session, log)
		t.channel = ch
		cctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { ch.run(cctx); close(done) }()
		defer func() { stop(); <-done; ch.close() }()
	}
	err = b.server.Run(ctx, t)
	if err != nil && (ctx.Err() != nil || errors.Is(err, mcp.ErrConnectionClosed)) {
		return nil // the client went away, or we were told to stop
	}
	return err
}

// bridge is a stdio MCP server whose tools are a remote askd's.
type bridge struct {
	server   *mcp.Server
	upstream *mcp.ClientSession
	session  string
	tools    int
	log      *slog.Logger

	next     atomic.Int64
	mu       sync.Mutex
	progress map[string]progressTarget // upstream token → where to forward
}

type progressTarget struct {
	session *mcp.ServerSession
	token   any
}

// dialBridge checks that an askd answers at url and accepts the token, then
// connects to its /mcp and mirrors its tools.
func dialBridge(ctx context.Context, url, token, session string, asChannel bool, log *slog.Logger) (*bridge, error) {
	c := client.New(url, token)
	c.Session = session
	me, err := c.Me(ctx)
	if err != nil {
		var ce *client.Error
		switch {
		case errors.As(err, &ce) && ce.Status == http.StatusUnauthorized:
			return nil, fmt.Errorf("the askd server at %s does not accept ASKD_TOKEN (%s); create an agent token with askd token create --agent NAME", url, ce.Message)
		case errors.As(err, &ce):
			return nil, fmt.Errorf("the askd server at %s refused the token: %s", url, ce.Message)
		}
		return nil, fmt.Errorf("no askd server answers at %s (set ASKD_URL, or start one with askd serve): %v", url, err)
	}
	if me["role"] != string(askd.RoleAgent) {
		return nil, fmt.Errorf("ASKD_TOKEN is a %s token; askd mcp needs an agent token (askd token create --agent NAME)", me["role"])
	}
	b := &bridge{session: me["session"], log: log, progress: map[string]progressTarget{}}
	cl := mcp.NewClient(&mcp.Implementation{Name: "askd-mcp", Version: Version}, &mcp.ClientOptions{
		Logger:                      log,
		ProgressNotificationHandler: b.forwardProgress,
	})
	hc := &http.Client{Transport: client.Transport{Token: token, Session: session, Base: http.DefaultTransport}}
	b.upstream, err = cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to %s/mcp: %w", url, err)
	}
	instructions := ""
	if ir := b.upstream.InitializeResult(); ir != nil {
		instructions = ir.Instructions
	}
	opts := &mcp.ServerOptions{Instructions: instructions, Logger: log, Capabilities: mcpserver.Capabilities()}
	if asChannel {
		opts.Capabilities = channelCapabilities()
	}
	b.server = mcp.NewServer(&mcp.Implementation{Name: mcpserver.ServerName, Version: Version}, opts)
	for tool, err := range b.upstream.Tools(ctx, nil) {
		if err != nil {
			b.upstream.Close()
			return nil, fmt.Errorf("list tools of %s/mcp: %w", url, err)
		}
		b.server.AddTool(tool, b.forward)
		b.tools++
	}
	return b, nil
}

// forward sends one tools/call to the server and returns its result as is.
func (b *bridge) forward(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	params := &mcp.CallToolParams{Name: req.Params.Name, Arguments: req.Params.Arguments, Meta: copyMeta(req.Params.Meta)}
	if token := req.Params.GetProgressToken(); token != nil {
		up := fmt.Sprintf("askd-mcp-%d", b.next.Add(1))
		b.mu.Lock()
		b.progress[up] = progressTarget{session: req.Session, token: token}
		b.mu.Unlock()
		defer func() {
			b.mu.Lock()
			delete(b.progress, up)
			b.mu.Unlock()
		}()
		params.SetProgressToken(up)
	}
	if params.Arguments == nil {
		params.Arguments = map[string]any{}
	}
	res, err := b.upstream.CallTool(ctx, params)
	if err != nil {
		var rpcErr *jsonrpc.Error
		switch {
		case ctx.Err() != nil:
			// The client cancelled the call (stdioTransport drops this
			// response) or went away; the SDK has told the server, for which
			// it is a cut-off. Not ctx.Err() itself: the SDK would write that,
			// as any error that is not a *jsonrpc.Error, with code 0.
			return nil, &jsonrpc.Error{Code: codeServerError, Message: cutOffMessage(req)}
		case errors.As(err, &rpcErr):
			return nil, rpcErr // the server's own protocol error, as it sent it
		}
		b.log.Warn("forward tool call", "tool", req.Params.Name, "err", err)
		return &mcp.CallToolResult{
			Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("askd did not answer the %s call: %v; if you had asked something, call check_ask {} to find it", req.Params.Name, err)}},
			IsError: true,
		}, nil
	}
	return res, nil
}

// codeServerError is JSON-RPC's first implementation-defined server error.
const codeServerError = -32000

// cutOffMessage says what became of a call cut off before the server answered.
func cutOffMessage(req *mcp.CallToolRequest) string {
	ask := "your ask"
	if args := map[string]any{}; json.Unmarshal(req.Params.Arguments, &args) == nil {
		if id, ok := args["id"].(float64); ok {
			ask = fmt.Sprintf("ask %d", int64(id))
		}
	}
	return fmt.Sprintf("the %s call was cut off before askd answered; %s stays as it was: call check_ask {} to find it and its answer", req.Params.Name, ask)
}

// copyMeta passes the caller's _meta on (Claude Code's tool use id among it),
// without its progress token, which the bridge replaces with its own.
func copyMeta(m mcp.Meta) mcp.Meta {
	out := mcp.Meta{}
	for k, v := range m {
		if k != "progressToken" {
			out[k] = v
		}
	}
	return out
}

// forwardProgress relays the server's progress to the client that made the call.
func (b *bridge) forwardProgress(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
	up, _ := req.Params.ProgressToken.(string)
	b.mu.Lock()
	to, ok := b.progress[up]
	b.mu.Unlock()
	if !ok {
		return
	}
	p := *req.Params
	p.ProgressToken = to.token
	if err := to.session.NotifyProgress(ctx, &p); err != nil {
		b.log.Debug("forward progress", "err", err)
	}
}

// stdioTransport is the bridge's side of stdin/stdout: newline-delimited
// JSON-RPC, as mcp.IOTransport speaks it, plus two promises the go-sdk
// server does not keep by itself. A request the client cancelled gets no
// response, as MCP asks of a receiver (the SDK writes the handler's error
// anyway, and TypeScript clients warn of a response to an unknown message
// ID). And no error response goes out with code 0, which is what the SDK
// gives any error that is not a *jsonrpc.Error.
//
// With a channel (askd mcp --channel) it also takes Claude Code's
// permission_request notifications, which the SDK does not know, to the
// channel, and tells it once the client has askd's tools.
type stdioTransport struct {
	in      io.ReadCloser
	out     io.Writer
	channel *channel // nil without --channel
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := (&mcp.IOTransport{Reader: t.in, Writer: nopWriteCloser{t.out}}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	c := &stdioConn{Connection: conn, calls: map[jsonrpc.ID]bool{}, lists: map[jsonrpc.ID]bool{}, channel: t.channel}
	if t.channel != nil {
		t.channel.conn = c
	}
	return c, nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// stdioConn notes the client's calls as they are read and its cancellations
// of them, and drops the response of a cancelled one.
type stdioConn struct {
	mcp.Connection
	channel *channel
	mu      sync.Mutex
	calls   map[jsonrpc.ID]bool // unanswered calls → cancelled
	lists   map[jsonrpc.ID]bool // unanswered tools/list calls
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		req, ok := msg.(*jsonrpc.Request)
		if err != nil || !ok {
			return msg, err
		}
		if c.channel != nil && req.Method == methodPermissionReq {
			c.channel.permissionRequest(ctx, req.Params)
			continue
		}
		c.note(req)
		return msg, nil
	}
}

// note records a call as it is read, or a cancellation of one.
func (c *stdioConn) note(req *jsonrpc.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case req.IsCall():
		c.calls[req.ID] = false
		if req.Method == "tools/list" {
			c.lists[req.ID] = true
		}
	case req.Method == "notifications/cancelled":
		var p mcp.CancelledParams
		if json.Unmarshal(req.Params, &p) != nil {
			break
		}
		// Only calls still unanswered: a cancellation crossing the response
		// on the wire leaves nothing behind.
		if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
			if _, open := c.calls[id]; open {
				c.calls[id] = true
			}
		}
	}
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return c.Connection.Write(ctx, msg)
	}
	c.mu.Lock()
	cancelled, listed := c.calls[resp.ID], c.lists[resp.ID]
	delete(c.calls, resp.ID)
	delete(c.lists, resp.ID)
	c.mu.Unlock()
	if cancelled {
		return nil
	}
	err := c.Connection.Write(ctx, withErrorCode(resp))
	if err == nil && listed && c.channel != nil {
		c.channel.toolsListed()
	}
	return err
}

// withErrorCode is resp, its error given a JSON-RPC code if it has none.
func withErrorCode(resp *jsonrpc.Response) *jsonrpc.Response {
	var rpcErr *jsonrpc.Error
	if resp.Error == nil || errors.As(resp.Error, &rpcErr) && rpcErr.Code != 0 {
		return resp
	}
	out := *resp
	out.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: resp.Error.Error()}
	return &out
}
