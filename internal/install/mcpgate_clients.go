package install

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/jsonedit"
)

// mcpClient is an MCP client whose config askd install mcp-gate edits: where
// its file keeps the servers, what else than JSON the file may hold, and
// how an entry refers to an environment variable, as the client's own
// documentation and, where we ran it, the client itself say.
type mcpClient struct {
	id      string // --client's word
	name    string // how install names it
	servers string // the top-level key of the servers map; "" for Codex's TOML
	syntax  jsonedit.Syntax
	// ref spells a reference to the environment variable name that the
	// client expands when it starts the server, with fallback where it has
	// a syntax for one (ok false: it has none, and fallback is left out).
	// nil: the client expands no variables in an entry.
	ref func(name, fallback string) (spelled string, ok bool)
	// urlKeys hold a streamable HTTP server's URL, in the order the client
	// prefers them.
	urlKeys []string
	// dropType: a command entry has no "type" here (Gemini CLI's type is
	// only "http" or "sse"); elsewhere a gated entry's type is "stdio".
	dropType bool
	// timeoutKey and timeoutValue: a per-server timeout the gated entry
	// gets if it has none, where the client's default would cut a call off
	// before the gate's own --wait (10 minutes) says it is still pending.
	timeoutKey   string
	timeoutValue int
	// approveKey and approveValue: what makes the client leave each call's
	// approval to the gate, written where the entry says nothing of it.
	// Without it Codex's exec, whose approval policy is never, refuses every
	// call of the server, and Gemini CLI's -p offers the model none of its
	// tools; interactively, each call would be approved twice.
	approveKey   string
	approveValue any
}

// gateWaitSeconds is askd gate mcp's default --wait: how long a call waits
// for a decision before the gate answers that it is still pending.
const gateWaitSeconds = 600

// dollarRef is ${NAME}, ${NAME:-fallback} (Claude Code: "command, args,
// env, url, headers"; Gemini CLI expands $NAME, ${NAME} and
// ${NAME:-fallback} in every string of settings.json).
func dollarRef(name, fallback string) (string, bool) {
	if fallback != "" {
		return "${" + name + ":-" + fallback + "}", true
	}
	return "${" + name + "}", true
}

// envRef is ${env:NAME} (VS Code's variables; Cursor's config
// interpolation), which has no fallback.
func envRef(name, fallback string) (string, bool) {
	return "${env:" + name + "}", fallback == ""
}

// passThrough is a variable's name in Codex's env_vars, which passes it
// from Codex's environment as it is, with no fallback.
func passThrough(name, fallback string) (string, bool) {
	return name, fallback == ""
}

// mcpClients are the clients install mcp-gate knows, in the order its help
// lists them.
var mcpClients = []*mcpClient{
	{id: "claude-desktop", name: "Claude Desktop", servers: "mcpServers", syntax: jsonedit.JSON, urlKeys: []string{"url"}},
	{id: "cursor", name: "Cursor", servers: "mcpServers", syntax: jsonedit.JSON, ref: envRef, urlKeys: []string{"url"}},
	{id: "claude-code", name: "Claude Code", servers: "mcpServers", syntax: jsonedit.JSON, ref: dollarRef, urlKeys: []string{"url"}},
	// Gemini CLI reads settings.json as JSON once its comments are
	// stripped (strip-json-comments; trailing commas stay refused). Its
	// default timeout is 600000 ms, the gate's --wait to the second.
	{id: "gemini", name: "Gemini CLI", servers: "mcpServers", syntax: jsonedit.Syntax{Comments: true}, ref: dollarRef,
		urlKeys: []string{"httpUrl", "url"}, dropType: true, timeoutKey: "timeout", timeoutValue: (gateWaitSeconds + 60) * 1000,
		approveKey: "trust", approveValue: true},
	{id: "vscode", name: "VS Code", servers: "servers", syntax: jsonedit.JSONC, ref: envRef, urlKeys: []string{"url"}},
	// Codex passes the variables env_vars names from its own environment
	// (it expands none in a value); its tool_timeout_sec defaults to 300 s
	// (codex.md).
	{id: "codex", name: "Codex", ref: passThrough, timeoutKey: "tool_timeout_sec", timeoutValue: gateWaitSeconds + 60,
		approveKey: "default_tools_approval_mode", approveValue: "approve"},
}

func clientIDs() string {
	ids := make([]string, len(mcpClients))
	for i, c := range mcpClients {
		ids[i] = c.id
	}
	return strings.Join(ids, ", ")
}

// detectClient says whose config file path is: --client if given, else the
// file's name (and its directory's), else its shape. why says how it
// decided, for the person to check.
func detectClient(path string, data []byte, named string) (c *mcpClient, why string, err error) {
	if named != "" {
		for _, c := range mcpClients {
			if c.id == named {
				return c, "--client", nil
			}
		}
		return nil, "", cli.UsageError(fmt.Sprintf("install mcp-gate: --client %q: say one of %s", named, clientIDs()))
	}
	base, dir := filepath.Base(path), filepath.Base(filepath.Dir(path))
	byName := func(id, why string) (*mcpClient, string, error) {
		i := slices.IndexFunc(mcpClients, func(c *mcpClient) bool { return c.id == id })
		return mcpClients[i], why, nil
	}
	switch {
	case filepath.Ext(base) == ".toml":
		return byName("codex", "a .toml file")
	case base == "claude_desktop_config.json":
		return byName("claude-desktop", "by its name")
	case base == ".mcp.json" || base == ".claude.json":
		return byName("claude-code", "by its name")
	case base == "mcp.json" && dir == ".cursor":
		return byName("cursor", "mcp.json in a .cursor directory")
	case base == "mcp.json" && dir == ".vscode":
		return byName("vscode", "mcp.json in a .vscode directory")
	case base == "settings.json" && dir == ".gemini":
		return byName("gemini", "settings.json in a .gemini directory")
	}
	// By its shape: read as leniently as any of the clients would.
	root, err := jsonedit.Parse(data, jsonedit.JSONC)
	if err != nil || !root.IsObject() {
		return nil, "", fmt.Errorf("%s: its name does not say whose config it is, and it is no JSON object (%v); pass --client (%s)", path, err, clientIDs())
	}
	_, mcpServers := root.Lookup("mcpServers")
	_, servers := root.Lookup("servers")
	switch {
	case servers > 0 && mcpServers == 0:
		return byName("vscode", `a "servers" map, as VS Code's mcp.json has`)
	case mcpServers > 0:
		return nil, "", fmt.Errorf("%s: an mcpServers map, as Claude Desktop's, Cursor's, Claude Code's and Gemini CLI's files have, and its name does not say whose: pass --client claude-desktop, cursor, claude-code or gemini", path)
	}
	return nil, "", fmt.Errorf("%s: no mcpServers or servers map, and its name does not say whose config it is; pass --client (%s)", path, clientIDs())
}

// gateSpec is what the gated entry's command line says besides the server:
// the gate's name for it, the tools it lets through, where it finds askd.
type gateSpec struct {
	key       string
	allow     []string
	askd      string // the command the client runs
	url       string // --url on the command line, or "" (the gate reads ASKD_URL)
	tokenFile string // --token-file on the command line, or "" (the gate reads ASKD_TOKEN)
}

// upstream is the server an entry runs or reaches: a command with its
// arguments, or a streamable HTTP URL with its headers ("K: V").
type upstream struct {
	command []string
	url     string
	headers []string
}

func (u upstream) String() string {
	if u.url != "" {
		return "a URL entry (" + u.url + ")"
	}
	return "a command entry (" + shellWords(u.command) + ")"
}

// args is the gate's command line after its command, in SPEC §14's order:
// askd gate mcp --name KEY [--allow TOOL]... [--url U] [--token-file F]
// then -- COMMAND ARGS..., or --upstream URL [--upstream-header 'K: V']...
func (g gateSpec) args(u upstream) []string {
	args := []string{"gate", "mcp", "--name", g.key}
	for _, t := range g.allow {
		args = append(args, "--allow", t)
	}
	if g.url != "" {
		args = append(args, "--url", g.url)
	}
	if g.tokenFile != "" {
		args = append(args, "--token-file", g.tokenFile)
	}
	if u.url != "" {
		args = append(args, "--upstream", u.url)
		for _, h := range u.headers {
			args = append(args, "--upstream-header", h)
		}
		return args
	}
	return append(append(args, "--"), u.command...)
}

// isGate reports whether command and args run askd gate mcp: the
// arguments gate mcp, to a command whose file name starts with askd (askd,
// askd.exe, an askd-dev build) or, for an askd by another name (--askd),
// followed by --name as install writes them.
func isGate(command string, args []string) bool {
	if len(args) < 2 || args[0] != "gate" || args[1] != "mcp" {
		return false
	}
	base := filepath.Base(strings.ReplaceAll(command, `\`, "/"))
	return strings.HasPrefix(base, "askd") || len(args) > 2 && args[2] == "--name"
}

// gateFlags returns the --name and --allow values of a gate's arguments
// up to --; every flag of askd gate mcp takes a value (--flag V or
// --flag=V).
func gateFlags(args []string) (name string, allow []string) {
	for i := 2; i < len(args) && args[i] != "--"; i++ {
		flag, value, inline := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !inline && i+1 < len(args) {
			i++
			value = args[i]
		}
		switch flag {
		case "name":
			name = value
		case "allow":
			allow = append(allow, value)
		}
	}
	return name, allow
}

// alreadyGated is the refusal of an entry that already runs the gate:
// nothing is changed, and the command says whether it is gated as asked.
type alreadyGated struct {
	command string
	args    []string
}

func (a *alreadyGated) Error() string { return "already runs through askd's gate" }

// askdEnv are the variables the gate reads from its environment; an
// entry's env that sets one of them is refused.
var askdEnv = []string{"ASKD_TOKEN", "ASKD_URL", "ASKD_SESSION", "ASKD_TOKEN_FILE"}

// refsFor returns the variables the gated entry passes to the gate, each
// with the client's reference to it (for Codex, its name in env_vars): the
// token unless the gate reads a file, and ASKD_URL unless the command line
// says --url. None for a client that expands no variables.
func refsFor(c *mcpClient, g gateSpec, url string) [][2]string {
	if c.ref == nil {
		return nil
	}
	var refs [][2]string
	if g.tokenFile == "" {
		ref, _ := c.ref("ASKD_TOKEN", "")
		refs = append(refs, [2]string{"ASKD_TOKEN", ref})
	}
	if g.url == "" {
		ref, ok := c.ref("ASKD_URL", url)
		if !ok { // no fallback syntax: the URL is the gate's default (urlFlag)
			ref, _ = c.ref("ASKD_URL", "")
		}
		refs = append(refs, [2]string{"ASKD_URL", ref})
	}
	return refs
}

// urlFlag is the --url the gated command line carries for client c: none
// where the entry refers to ASKD_URL with the URL as its fallback, or the
// URL is the gate's own default; else the URL itself (Claude Desktop, which
// passes no environment; Cursor, VS Code and Codex when the URL is not the
// default, having no fallback syntax).
func urlFlag(c *mcpClient, url string) string {
	if c.ref == nil {
		return url
	}
	if _, ok := c.ref("ASKD_URL", url); ok || url == cli.DefaultURL {
		return ""
	}
	return url
}
