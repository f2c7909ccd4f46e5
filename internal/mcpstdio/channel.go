package mcpstdio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Claude Code's channel protocol (checked in its CLI): capabilities in the
// server's initialize result under "experimental", and three notifications.
const (
	capChannel           = "claude/channel"
	capChannelPermission = "claude/channel/permission"
	methodChannel        = "notifications/claude/channel"
	methodPermission     = "notifications/claude/channel/permission"
	methodPermissionReq  = "notifications/claude/channel/permission_request"
)

// channelCapabilities are askd mcp --channel's capabilities beside tools
// (which the SDK adds): both channel ones. Not the SDK's default logging,
// deprecated, which the bridge never uses.
func channelCapabilities() *mcp.ServerCapabilities {
	c := mcpserver.Capabilities()
	c.Experimental = map[string]any{
		capChannel:           map[string]any{},
		capChannelPermission: map[string]any{},
	}
	return c
}

// channelSettle is how long the bridge lets Claude Code settle after
// answering its tools/list before the first push. Claude Code registers its
// channel handler only once it has the server's tools, and drops a
// notification that comes before (no handler: ignored, and the answer would
// be told to no one); the gap is local work of milliseconds.
var channelSettle = time.Second

// channel is askd mcp --channel's side of Claude Code's channel: it pushes
// the session's told texts into the running session, and relays its
// permission prompts to the inbox (docs/clients.md).
type channel struct {
	api     *client.Client
	session string
	log     *slog.Logger
	conn    *stdioConn    // set once connected
	ready   chan struct{} // closed when Claude Code has askd's tools
	once    sync.Once

	mu    sync.Mutex
	open  map[string]*relayCall // relayed prompts waiting for the inbox, by request id
	relay sync.WaitGroup
}

func newChannel(api *client.Client, session string, log *slog.Logger) *channel {
	return &channel{api: api, session: session, log: log, ready: make(chan struct{}), open: map[string]*relayCall{}}
}

// toolsListed is called when the client's tools/list was answered.
func (ch *channel) toolsListed() { ch.once.Do(func() { close(ch.ready) }) }

// run pushes told texts until ctx ends: once Claude Code is ready, it
// attaches to the session and writes each text it is leased as a channel
// notification, then reports it told. A dropped stream is attached again.
func (ch *channel) run(ctx context.Context) {
	select {
	case <-ch.ready:
	case <-ctx.Done():
		return
	}
	wait := channelSettle
	for {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return
		}
		tells, err := ch.api.Attach(ctx, ch.session)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			ch.log.Warn("channel: attach to askd", "err", err)
			wait = min(2*wait+time.Second, 30*time.Second)
			continue
		}
		ch.log.Debug("channel: attached", "session", ch.session)
		wait = time.Second
		for t := range tells {
			if err := ch.push(ctx, t); err != nil {
				ch.log.Warn("channel: write to Claude Code", "err", err)
				return // stdout is gone: the lease runs out, the text goes elsewhere
			}
		}
	}
}

// relayCall is a relayed prompt waiting for the inbox; cancel ends the wait.
type relayCall struct{ cancel context.CancelFunc }

// channelParams is notifications/claude/channel's params.
type channelParams struct {
	Content string      `json:"content"`
	Meta    channelMeta `json:"meta"`
}

// channelMeta becomes the attributes of Claude Code's <channel> tag; its
// keys match ^[A-Za-z_][A-Za-z0-9_]*$, as Claude Code requires.
type channelMeta struct {
	AskID   string `json:"ask_id"`
	Kind    string `json:"kind"`
	Outcome string `json:"outcome"`
}

// push writes told text t to Claude Code, then reports it told: only once
// the line is written (to stdout, which is not buffered) does askd count the
// agent told. If the report is lost, the lease runs out and t is told again:
// the one window in which a text can reach the agent twice.
func (ch *channel) push(ctx context.Context, t askd.ChannelTell) error {
	params := channelParams{Content: t.Text, Meta: channelMeta{AskID: strconv.FormatInt(t.AskID, 10), Kind: string(t.Kind), Outcome: t.Outcome}}
	if err := ch.notify(ctx, methodChannel, params); err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := ch.api.ChannelTold(rctx, ch.session, t.Key); err != nil {
		ch.log.Warn("channel: report told", "ask", t.AskID, "err", err)
	}
	return nil
}

// notify writes one notification to Claude Code.
func (ch *channel) notify(ctx context.Context, method string, params any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the text as the person wrote it: no \u003c for <
	if err := enc.Encode(params); err != nil {
		return err
	}
	return ch.conn.Write(ctx, &jsonrpc.Request{Method: method, Params: bytes.TrimRight(buf.Bytes(), "\n")})
}

// permissionParams is notifications/claude/channel/permission's params.
type permissionParams struct {
	RequestID string `json:"request_id"`
	Behavior  string `json:"behavior"` // allow or deny
}

// permissionRequest takes a prompt Claude Code relays (the params of
// notifications/claude/channel/permission_request) to the inbox. Claude
// Code prompts for one tool call at a time, so prompts relayed before it
// were answered in the terminal: their cards close.
func (ch *channel) permissionRequest(ctx context.Context, params json.RawMessage) {
	var in askd.PermissionRelay
	// Lenient: fields Claude Code may add are not askd's to refuse.
	if err := json.Unmarshal(params, &in); err != nil {
		ch.log.Warn("channel: permission_request params", "err", err)
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	me := &relayCall{cancel: cancel}
	ch.mu.Lock()
	earlier := ch.open
	ch.open = map[string]*relayCall{in.RequestID: me}
	ch.relay.Add(1)
	ch.mu.Unlock()
	go func() {
		defer ch.relay.Done()
		defer cancel()
		for id, call := range earlier {
			call.cancel()
			if id != in.RequestID { // the same prompt again: this call takes its place
				ch.closeRelay(id, "terminal")
			}
		}
		ch.relayOne(rctx, &in)
		ch.mu.Lock()
		if ch.open[in.RequestID] == me {
			delete(ch.open, in.RequestID)
		}
		ch.mu.Unlock()
	}()
}

// relayOne makes the card of prompt in, waits for the person's decision and
// sends it to Claude Code. A timeout, a dismissal or a closed card sends
// nothing: the terminal's prompt stays, and no one's silence is a refusal.
func (ch *channel) relayOne(ctx context.Context, in *askd.PermissionRelay) {
	a, err := ch.api.RelayPermission(ctx, ch.session, in)
	if err != nil {
		if ctx.Err() == nil {
			ch.log.Warn("channel: relay a permission prompt", "request_id", in.RequestID, "err", err)
		}
		return
	}
	for a.Pending() {
		next, err := ch.api.Check(ctx, a.ID, 30*time.Second)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			ch.log.Warn("channel: wait for a relayed prompt's decision", "ask", a.ID, "err", err)
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return
			}
			continue
		}
		a = next
	}
	behavior := ""
	if a.Status == askd.StatusAnswered && a.Answer != nil {
		switch a.Answer.Decision {
		case askd.DecisionApproved:
			behavior = "allow"
		case askd.DecisionRejected:
			behavior = "deny"
		}
	}
	if behavior == "" {
		return
	}
	if err := ch.notify(ctx, methodPermission, permissionParams{RequestID: in.RequestID, Behavior: behavior}); err != nil {
		ch.log.Warn("channel: send a permission decision", "request_id", in.RequestID, "err", err)
	}
}

// closeRelay closes the card of prompt id, for reason.
func (ch *channel) closeRelay(id, reason string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := ch.api.CloseRelay(ctx, ch.session, id, reason)
	var ce *client.Error
	if err != nil && !(errors.As(err, &ce) && ce.Code == askd.ENOTFOUND) {
		ch.log.Warn("channel: close a relayed prompt's card", "request_id", id, "err", err)
	}
}

// close ends the channel: the cards of prompts still open close, as the
// Claude Code session they came from has ended.
func (ch *channel) close() {
	ch.mu.Lock()
	open := ch.open
	ch.open = map[string]*relayCall{}
	ch.mu.Unlock()
	for id, call := range open {
		call.cancel()
		ch.closeRelay(id, "ended")
	}
	ch.relay.Wait()
}
