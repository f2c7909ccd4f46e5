package mcpgate

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/hostcheck"
)

const synopsis = "--name NAME [--allow TOOL]... [flags] -- COMMAND [ARGS...]\n" +
	"       askd gate mcp --name NAME [--allow TOOL]... --upstream URL [--upstream-header 'K: V']... [flags]"

const help = `
An MCP server in front of another: the client (Claude Desktop, Cursor, an
agent built on an SDK) sees the server's tools unchanged; a tool call waits
for a person to approve it in askd, and the server's questions (elicitations)
go to a person in askd, whatever the client supports.

  -- COMMAND ARGS...   start the MCP server COMMAND as the gate's child, over
                       stdio (its environment is the gate's less every ASKD_*
                       variable; its stderr is the gate's)
  --upstream URL       or stand in front of a remote streamable HTTP server
  --listen ADDR        serve streamable HTTP on ADDR (at /mcp) instead of stdio

Pass --name: the client's key for the server, so that a tool's approval is
named mcp__NAME__TOOL, as Claude Code names it (one rule or policy covers a
tool through a hook or the gate). Without it, NAME is the last path element
of COMMAND's last argument that is not a flag, or the first label of the URL's
host: seldom the key the client uses.

A call to a tool --allow names goes to the server at once, askd not asked.
Any other call becomes an approval in askd, decided by its rules, policies or
a person: approved, the call goes on as it was (or with the arguments the
person wrote); rejected or dismissed, the client gets an error result naming
who and why, and the server never sees the call. No decision within --wait:
an error result says the approval is still pending, and the same call again
(same tool and arguments) picks it up. A call the client gives up on leaves
its approval pending, never withdrawn. askd unreachable: the call does not go
on (the gate fails closed).

askd is reached with ASKD_URL and ASKD_TOKEN (an agent token), or
--token-file for clients that pass no environment; the session is
ASKD_SESSION, else NAME. --allow, --name, --upstream, --upstream-header,
--listen, --listen-token-file and --allowed-host read no environment
variable: what the gate lets through is said on its command line.
`

// parseGate reads askd gate mcp's command line. Mistakes are UsageErrors;
// nothing is started.
func parseGate(e *cli.Env, args []string) (*gate, error) {
	fs := cli.Flags(e, "gate mcp", synopsis)
	g := &gate{e: e, allow: map[string]bool{}, headers: http.Header{}, instance: newInstance()}
	var allow, upHeaders, hosts stringList
	name := fs.String("name", "", "the client's key for the server: approvals are for mcp__`NAME`__TOOL, asked by NAME")
	fs.Var(&allow, "allow", "a `TOOL` that goes to the server without an ask (repeat for more)")
	fs.StringVar(&g.upstream, "upstream", "", "the `URL` of a remote streamable HTTP MCP server to stand in front of")
	fs.Var(&upHeaders, "upstream-header", "a header `'K: V'` for every request to --upstream (repeat for more)")
	fs.StringVar(&g.listen, "listen", "", "serve streamable HTTP on `ADDR` (host:port) instead of stdio")
	listenToken := fs.String("listen-token-file", "", "a file (mode 0600) at `PATH` holding the Bearer token the HTTP listener requires; required off loopback")
	fs.Var(&hosts, "allowed-host", "a host `NAME` the HTTP listener also answers to, besides loopback names and its own address (*.example.com: its subdomains; repeat for more)")
	askdURL := fs.String("url", "http://127.0.0.1:7777", "the askd server")
	tokenFile := fs.String("token-file", "", "a file (mode 0600) at `PATH` holding the agent token, for clients that pass no environment (else ASKD_TOKEN)")
	session := fs.String("session", "", "the askd session to ask in (default: NAME)")
	fs.DurationVar(&g.wait, "wait", defaultWait, "how long a call waits for a decision before its error result says it is still pending")
	elicitation := fs.String("elicitation", "server", "who answers the server's elicitations: server (askd puts them to a person) or client (a client that declares elicitation)")
	for _, f := range []string{"name", "allow", "upstream", "upstream-header", "listen", "listen-token-file", "allowed-host"} {
		e.SetEnvName(f, "")
	}
	usage := fs.Usage
	fs.Usage = func() { usage(); fmt.Fprint(fs.Output(), help) }

	flagArgs, argv, found := splitCommand(fs, args)
	if err := cli.Parse(e, fs, flagArgs); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, cli.UsageError(fmt.Sprintf("gate mcp: %q: the server's command goes after -- (askd gate mcp --name NAME -- COMMAND ARGS...)", fs.Arg(0)))
	case g.upstream != "" && found:
		return nil, cli.UsageError("gate mcp: give --upstream URL or a command after --, not both")
	case g.upstream == "" && (!found || len(argv) == 0):
		return nil, cli.UsageError("gate mcp: give the MCP server's command after -- (askd gate mcp --name NAME -- COMMAND ARGS...), or --upstream URL")
	case g.wait < 0:
		return nil, cli.UsageError(fmt.Sprintf("gate mcp: --wait %s: must be 0 or more", g.wait))
	case *elicitation != "server" && *elicitation != "client":
		return nil, cli.UsageError(fmt.Sprintf("gate mcp: --elicitation %q: say server or client", *elicitation))
	}
	for _, h := range hosts {
		if err := hostcheck.Valid(h); err != nil {
			return nil, cli.UsageError("gate mcp: --allowed-host: " + err.Error())
		}
	}
	g.command, g.elicitToClient, g.allowedHosts = argv, *elicitation == "client", hosts
	for _, t := range allow {
		g.allow[t] = true
	}
	if err := g.setUpstream(upHeaders); err != nil {
		return nil, err
	}
	if err := g.setName(*name); err != nil {
		return nil, err
	}
	g.session = *session
	if g.session == "" {
		g.session = g.name
	}
	if err := askd.ValidName("--session", g.session); err != nil {
		return nil, cli.UsageError("gate mcp: " + askd.ErrorMessage(err))
	}
	if err := g.setListen(*listenToken); err != nil {
		return nil, err
	}
	return g, g.connectAskd(*askdURL, *tokenFile)
}

// defaultWait is how long a call waits for its decision (SPEC §14).
const defaultWait = 10 * time.Minute

// askdTransport keeps idle connections to askd for as many calls as wait
// at once (net/http keeps 2), so that each look again reuses one.
var askdTransport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 256
	return t
}()

// setUpstream checks --upstream and its headers.
func (g *gate) setUpstream(headers []string) error {
	if g.upstream == "" {
		if len(headers) > 0 {
			return cli.UsageError("gate mcp: --upstream-header is for --upstream")
		}
		return nil
	}
	if u, err := url.Parse(g.upstream); err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return cli.UsageError(fmt.Sprintf("gate mcp: --upstream %q is not an http(s) URL", g.upstream))
	}
	for _, h := range headers {
		k, v, ok := strings.Cut(h, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || strings.ContainsAny(k, " \t\r\n") || strings.ContainsAny(v, "\r\n") {
			return cli.UsageError(fmt.Sprintf("gate mcp: --upstream-header %q: give 'Name: value'", h))
		}
		g.headers.Add(k, v)
	}
	return nil
}

// setName sets NAME: --name, else the one SPEC §14 derives.
func (g *gate) setName(name string) error {
	flagName := "--name"
	if name == "" {
		flagName = "NAME (from the command line; pass --name)"
		name = derivedName(g.command, g.upstream)
	}
	switch {
	case name == "":
		return cli.UsageError("gate mcp: pass --name NAME, the client's key for the server")
	case !utf8.ValidString(name) || askd.Printable(name) != name || strings.ContainsAny(name, " "):
		return cli.UsageError(fmt.Sprintf("gate mcp: %s %q: a name is one word of printable characters", flagName, name))
	case utf8.RuneCountInString(name) > askd.MaxSourceChars:
		return cli.UsageError(fmt.Sprintf("gate mcp: %s: %d characters, at most %d", flagName, utf8.RuneCountInString(name), askd.MaxSourceChars))
	}
	g.name = name
	return nil
}

// derivedName is NAME when --name is not given: the last path element of
// the command's last argument that is not a flag, or the first label of the
// upstream URL's host.
func derivedName(command []string, upstream string) string {
	if upstream != "" {
		u, err := url.Parse(upstream)
		if err != nil {
			return ""
		}
		first, _, _ := strings.Cut(u.Hostname(), ".")
		return first
	}
	for i := len(command) - 1; i >= 0; i-- {
		if a := command[i]; a != "" && !strings.HasPrefix(a, "-") {
			return path.Base(strings.ReplaceAll(strings.TrimRight(a, `/\`), `\`, "/"))
		}
	}
	return ""
}

// setListen checks --listen and reads the listener's token: required when
// the address is not loopback.
func (g *gate) setListen(tokenFile string) error {
	if g.listen == "" {
		if tokenFile != "" || len(g.allowedHosts) > 0 {
			return cli.UsageError("gate mcp: --listen-token-file and --allowed-host are for --listen")
		}
		return nil
	}
	host, _, err := net.SplitHostPort(g.listen)
	if err != nil {
		return cli.UsageError(fmt.Sprintf("gate mcp: --listen %q: give host:port, such as 127.0.0.1:7790", g.listen))
	}
	if tokenFile == "" {
		if !loopbackHost(host) {
			return cli.UsageError(fmt.Sprintf("gate mcp: --listen %s is not a loopback address: give --listen-token-file, a file (mode 0600) holding the Bearer token clients must send", g.listen))
		}
		return nil
	}
	tok, err := readSecret("--listen-token-file", tokenFile)
	if err != nil {
		return err
	}
	g.listenToken = tok
	return nil
}

// loopbackHost reports whether host names this machine only.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// connectAskd makes the askd client: the URL, and the agent token from
// --token-file or ASKD_TOKEN.
func (g *gate) connectAskd(askdURL, tokenFile string) error {
	token := strings.TrimSpace(g.e.Getenv("ASKD_TOKEN"))
	if tokenFile != "" {
		var err error
		if token, err = readSecret("--token-file", tokenFile); err != nil {
			return err
		}
	}
	switch {
	case token == "":
		return cli.UsageError("gate mcp: no agent token: set ASKD_TOKEN or pass --token-file (askd token create --agent NAME makes one)")
	case strings.HasPrefix(token, app.TokenPrefix(askd.RoleHuman)):
		return cli.UsageError("gate mcp: that is a human token; the gate asks as an agent: give an agent token (askd token create --agent NAME)")
	}
	if u, err := url.Parse(askdURL); err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return cli.UsageError(fmt.Sprintf("gate mcp: --url %q is not an http(s) URL such as http://127.0.0.1:7777", askdURL))
	}
	c := client.New(askdURL, token)
	c.Session = g.session
	c.HTTP = &http.Client{Transport: askdTransport}
	g.askd = c
	return nil
}

// readSecret reads a token from a file its owner alone may read: one the
// group or others may read is refused, naming the rule, before it is read.
func readSecret(flagName, path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", cli.UsageError(fmt.Sprintf("gate mcp: %s: %v", flagName, err))
	}
	if !fi.Mode().IsRegular() {
		return "", cli.UsageError(fmt.Sprintf("gate mcp: %s %s: not a regular file", flagName, path))
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", cli.UsageError(fmt.Sprintf("gate mcp: %s %s: mode %04o, but a token file must be readable by its owner only (mode 0600: chmod 600 %s)", flagName, path, perm, path))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", cli.UsageError(fmt.Sprintf("gate mcp: %s: %v", flagName, err))
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" {
		return "", cli.UsageError(fmt.Sprintf("gate mcp: %s %s: empty", flagName, path))
	}
	return tok, nil
}
