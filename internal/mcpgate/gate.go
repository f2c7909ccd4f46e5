package mcpgate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/cli"
)

// gate is one askd gate mcp: what its command line says, and what the
// client sessions it serves share (askd).
type gate struct {
	e       *cli.Env
	name    string          // NAME: source of its asks, mcp__NAME__TOOL
	session string          // the askd session it asks in
	allow   map[string]bool // tools that pass without an ask (--allow)
	wait    time.Duration   // how long a call waits for a decision
	// elicitToClient: --elicitation client.
	elicitToClient bool

	command  []string    // the server to start (COMMAND ARGS...), or
	upstream string      // the remote server's URL (--upstream)
	headers  http.Header // sent to it (--upstream-header)

	listen       string   // --listen ADDR, "" for stdio
	listenToken  string   // the Bearer token the listener requires ("" for none)
	allowedHosts []string // --allowed-host

	askd *client.Client
	// instance tells this process's own request ids from anyone else's.
	instance string

	tunables
	sayMu sync.Mutex
}

// tunables are the gate's clocks, shorter in tests.
type tunables struct {
	// progressEvery: a held call with a progress token is told it waits at
	// least this often (MCP clients with idle timers keep it alive).
	progressEvery time.Duration
	// longestWait bounds each request that waits on askd (askd's own bound
	// on ?wait=). A call's wait is one request for its whole --wait, so
	// that askd sees a cut-off the moment the gate stops waiting, and not
	// before: a request that ended by its wait's end, while the gate still
	// waited, would mark the approval as its agent's no longer.
	longestWait time.Duration
	// childGrace: a child has this long to exit once its stdin is closed,
	// and again after SIGTERM.
	childGrace time.Duration
	// listening, when set, is told the listener's address (tests).
	listening func(addr string)
}

var defaultTunables = tunables{progressEvery: 25 * time.Second, longestWait: time.Hour, childGrace: 2 * time.Second}

// Run is askd gate mcp (SPEC §14): an MCP server in front of another, on
// stdio or, with --listen, streamable HTTP, that lets a tool call through
// once a person approved it in askd and puts the server's questions to a
// person. It returns when the client is done (nil), or with an error
// carrying the exit status: a usage mistake (2), the server gone (1).
func Run(ctx context.Context, e *cli.Env, args []string) error {
	return run(ctx, e, args, defaultTunables)
}

func run(ctx context.Context, e *cli.Env, args []string, t tunables) error {
	g, err := parseGate(e, args)
	if err != nil {
		return err
	}
	g.tunables = t
	if g.listen != "" {
		return g.serveHTTP(ctx)
	}
	up, err := g.dialUpstream(ctx)
	if err != nil {
		return err
	}
	s := newSession(ctx, g, newLineConn(e.Stdin, e.Stdout, nil), up)
	err = s.run()
	var gone *errServerGone
	if errors.As(err, &gone) {
		return g.upstreamGone(up, gone)
	}
	return err
}

// upstreamGone is the error Run ends with when the server went away: how
// the child exited, or why the remote server could not be reached.
func (g *gate) upstreamGone(up conn, gone *errServerGone) error {
	if c, ok := up.(*child); ok {
		return fmt.Errorf("gate mcp: %w", c.exitError())
	}
	return fmt.Errorf("gate mcp: the MCP server at %s: %w", g.upstream, gone.err)
}

// dialUpstream starts the server (COMMAND) or connects to it (--upstream).
func (g *gate) dialUpstream(ctx context.Context) (conn, error) {
	if g.upstream != "" {
		return newHTTPUpstream(g.upstream, g.headers), nil
	}
	c, err := startChild(g.command, stdioEnv(), g.e.Stderr, g.childGrace)
	if err != nil {
		return nil, fmt.Errorf("gate mcp: %w", err)
	}
	return c, nil
}

// say writes a line of the gate's own on stderr: "askd gate mcp: ...",
// third-party text in it made safe for a terminal.
func (g *gate) say(format string, args ...any) {
	g.sayMu.Lock()
	defer g.sayMu.Unlock()
	fmt.Fprintln(g.e.Stderr, "askd gate mcp:", cli.Term(fmt.Sprintf(format, args...)))
}

func newInstance() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// stringList is a flag given any number of times.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ", ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// splitCommand splits args at the "--" that ends the gate's flags (not one
// that is a flag's value): the gate's part, COMMAND and its arguments, and
// whether there was a "--". COMMAND's own flags are never read as the
// gate's.
func splitCommand(fs *flag.FlagSet, args []string) (flagArgs, argv []string, found bool) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return args[:i], args[i+1:], true
		case len(a) > 1 && a[0] == '-' && cli.NeedsValue(fs, a):
			i++
		}
	}
	return args, nil, false
}
