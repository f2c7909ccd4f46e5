package install

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/hookcmd"
)

const mcpGateSynopsis = "--config FILE --server KEY [--allow TOOL]... [--undo] [--client NAME] [--url URL] [--token-file FILE] [--askd PATH]"

const mcpGateHelp = `
Rewrites one server entry of an MCP client's config so that the server runs
behind askd's MCP gate, askd gate mcp --name KEY: each call of its tools
waits for a person's approval in askd (but the tools --allow names), and the
server's questions reach a person in askd, whatever the client supports.

  client          file                        servers            the gate's token
  Claude Desktop  claude_desktop_config.json  mcpServers         --token-file, a 0600 file beside it
  Cursor          .cursor/mcp.json            mcpServers         env ${env:ASKD_TOKEN}
  Claude Code     .mcp.json                   mcpServers         env ${ASKD_TOKEN}
  Gemini CLI      .gemini/settings.json       mcpServers         env ${ASKD_TOKEN}
  VS Code         .vscode/mcp.json (JSONC)    servers            env ${env:ASKD_TOKEN}
  Codex           config.toml                 [mcp_servers.KEY]  env_vars = ["ASKD_TOKEN"]

A command entry becomes askd gate mcp --name KEY -- COMMAND ARGS..., its env
kept; a streamable HTTP entry becomes askd gate mcp --name KEY --upstream URL,
its headers as --upstream-header. The token is never written into the file.
Every byte outside the entry stays as it was (VS Code's comments and trailing
commas too). Before a change, the file is copied to FILE.askd-DATE-TIME.bak;
the entry as it was is kept in FILE.askd-gate.json, from which --undo puts it
back byte for byte. Run again on a gated entry, install changes nothing.
`

// installMCPGate is askd install mcp-gate: it puts one server of an MCP
// client's config behind askd gate mcp, or with --undo puts it back.
func installMCPGate(e *cli.Env, args []string) error {
	o, err := parseMCPGate(e, args)
	if err != nil {
		return err
	}
	f, err := readConfig(e, o.config, o.client)
	if err != nil {
		return err
	}
	if o.undo {
		return f.undo(e, o.server)
	}
	c := f.client
	g := gateSpec{key: o.server, allow: o.allow, askd: o.askd, url: urlFlag(c, o.url)}
	if g.askd == "" {
		g.askd = defaultAskd(c)
	}
	token, file, write, err := tokenSource(e, c, o.config, o.tokenFile)
	if err != nil {
		return err
	}
	g.tokenFile = file
	return f.gate(e, g, o.url, token, write)
}

// mcpGateOptions are install mcp-gate's flags, checked.
type mcpGateOptions struct {
	config, server, client string
	allow                  []string
	undo                   bool
	url                    string // without a trailing slash
	tokenFile, askd        string
}

// parseMCPGate reads install mcp-gate's command line; a mistake is a
// UsageError.
func parseMCPGate(e *cli.Env, args []string) (*mcpGateOptions, error) {
	o := &mcpGateOptions{}
	fs := cli.Flags(e, "install mcp-gate", mcpGateSynopsis)
	fs.StringVar(&o.config, "config", "", "the client's config `FILE` (which client's, install says; --client if its name does not tell)")
	fs.StringVar(&o.server, "server", "", "the `KEY` of the server's entry: the gate's --name, so a tool's approval is mcp__KEY__TOOL")
	var allow stringList
	fs.Var(&allow, "allow", "a `TOOL` of the server whose calls go through without an ask (repeat for more)")
	fs.BoolVar(&o.undo, "undo", false, "put the entry back as it was before install gated it")
	fs.StringVar(&o.client, "client", "", "the client whose file it is, by `NAME`: "+clientIDs())
	fs.StringVar(&o.url, "url", cli.DefaultURL, "the askd server's `URL`, as the gate reaches it: the entry's fallback where ASKD_URL is unset where the client runs,\nor --url on the gate's command line for a client that cannot say so")
	fs.StringVar(&o.tokenFile, "token-file", "", "a `FILE` (mode 0600) holding the agent token, for the gate to read instead of ASKD_TOKEN\n(default for Claude Desktop, which passes no environment: install writes ASKD_TOKEN into "+tokenFileName+" beside the config)")
	fs.StringVar(&o.askd, "askd", "", "the `PATH` of the askd the client runs (default: askd, found on the client's PATH; for Claude Desktop,\nwhich starts servers with a short PATH, the full path of the askd on this PATH)")
	for _, f := range []string{"config", "server", "allow", "undo", "client", "askd"} {
		e.SetEnvName(f, "") // what is gated, and how, is said on the command line
	}
	usage := fs.Usage
	fs.Usage = func() { usage(); fmt.Fprint(fs.Output(), mcpGateHelp) }
	if err := cli.Parse(e, fs, args); err != nil {
		return nil, err
	}
	o.allow, o.url = allow, strings.TrimRight(o.url, "/")
	switch {
	case fs.NArg() > 0:
		return nil, cli.UsageError(fmt.Sprintf("install mcp-gate: unexpected argument %q", fs.Arg(0)))
	case o.config == "" || o.server == "":
		return nil, cli.UsageError("install mcp-gate: give --config FILE and --server KEY (askd install mcp-gate -h)")
	case o.undo && len(o.allow) > 0:
		return nil, cli.UsageError("install mcp-gate: --undo takes no --allow")
	}
	if err := checkServerKey(o.server); err != nil {
		return nil, err
	}
	for _, t := range o.allow {
		if err := checkTool(o.server, t); err != nil {
			return nil, err
		}
	}
	return o, hookcmd.CheckURL(o.url)
}

// readConfig reads the config at path (where it points, if a symlink) and
// says whose it took it for.
func readConfig(e *cli.Env, path, client string) (*configFile, error) {
	target, err := followSymlink(path)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(target)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, errors.Unwrap(err))
	}
	c, why, err := detectClient(path, data, client)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(e.Stdout, "%s: %s's config (%s)\n", path, c.name, why)
	return &configFile{client: c, path: path, target: target, data: data}, nil
}

// configFile is the client's config as install read it.
type configFile struct {
	client       *mcpClient
	path, target string // as named, and where it points if a symlink
	data         []byte
}

// gatedEntry is the edit that gates one entry: its bytes in the file and
// what replaces them.
type gatedEntry struct {
	start, end int
	text       string
	upstream   upstream
	argv       []string // the command the client will run
	added      []string // keys install added to the entry besides the gate's (addedKeys)
}

// addedKeys are the keys of client c a gated entry gets where it has none
// (has says whether it has one).
func addedKeys(c *mcpClient, has func(key string) bool) []string {
	var added []string
	for _, k := range []string{c.timeoutKey, c.approveKey} {
		if k != "" && !has(k) {
			added = append(added, k)
		}
	}
	return added
}

func (e *gatedEntry) apply(data []byte) []byte {
	return slices.Concat(data[:e.start], []byte(e.text), data[e.end:])
}

// gate puts the server behind the gate: the edit, then the backup, the
// token file (writeToken: install's own, beside the config), the file, and
// the record --undo reads.
func (f *configFile) gate(e *cli.Env, g gateSpec, url, token string, writeToken bool) error {
	c := f.client
	var edit *gatedEntry
	var err error
	if c.id == "codex" {
		edit, err = gateCodex(c, f.path, f.data, g, url)
	} else {
		edit, err = gateJSON(c, f.path, f.data, g, url)
	}
	var ag *alreadyGated
	if errors.As(err, &ag) {
		return f.alreadyGated(e, g, ag)
	}
	if err != nil {
		return err
	}
	out := edit.apply(f.data)
	if token != "" && bytes.Contains(out, []byte(token)) && !bytes.Contains(f.data, []byte(token)) {
		return fmt.Errorf("%s: the edited file would hold the agent token; nothing was changed", f.path) // never: askd writes references
	}
	fmt.Fprintf(e.Stdout, "server %q: %s\n", g.key, edit.upstream)
	mode, err := f.backup(e)
	if err != nil {
		return err
	}
	if writeToken {
		changed, err := writeSecret(g.tokenFile, token)
		if err != nil {
			return fmt.Errorf("%s: %v (the config was not changed)", g.tokenFile, err)
		}
		if changed {
			fmt.Fprintf(e.Stdout, "token     %s (mode 0600, from ASKD_TOKEN)\n", g.tokenFile)
		} else {
			fmt.Fprintf(e.Stdout, "unchanged %s\n", g.tokenFile)
		}
	}
	if err := replaceFile(f.target, out, mode); err != nil {
		return fmt.Errorf("%s: %v", f.path, err)
	}
	report(e, f.path, true)
	if err := saveRecord(f.target, g.key, gateRecord{was: string(f.data[edit.start:edit.end]), gated: edit.text}); err != nil {
		return fmt.Errorf("%s: %v (the entry is gated; --undo cannot restore it: its backup can)", sidecarPath(f.target), err)
	}
	fmt.Fprintf(e.Stdout, "kept      %s (the entry as it was, for --undo)\n", sidecarPath(f.target))
	f.explain(e, g, edit, url)
	return nil
}

// backup copies the file beside it before a change (writeBackup) and
// returns its mode, for the new text.
func (f *configFile) backup(e *cli.Env) (os.FileMode, error) {
	info, err := os.Stat(f.target)
	if err != nil {
		return 0, err
	}
	name, err := writeBackup(f.target, f.data, info.Mode().Perm())
	if err != nil {
		return 0, fmt.Errorf("%s: backup: %v (nothing was changed)", f.path, err)
	}
	fmt.Fprintf(e.Stdout, "backup    %s\n", name)
	return info.Mode().Perm(), nil
}

// alreadyGated says that the entry already runs the gate: nothing is
// changed, and that is success if it is gated as asked (same name, same
// --allow), else an error saying how to change it.
func (f *configFile) alreadyGated(e *cli.Env, g gateSpec, ag *alreadyGated) error {
	name, allow := gateFlags(ag.args)
	fmt.Fprintf(e.Stdout, "server %q already runs through askd's gate: %s\n", g.key, shellWords(append([]string{ag.command}, ag.args...)))
	report(e, f.path, false)
	slices.Sort(allow)
	want := slices.Sorted(slices.Values(g.allow))
	if name == g.key && slices.Equal(slices.Compact(allow), slices.Compact(want)) {
		return nil
	}
	return fmt.Errorf("%s: server %q is gated with --name %q and --allow %q, not as asked; to change that, --undo and install again, or edit its args",
		f.path, g.key, name, strings.Join(allow, ","))
}

// explain says what now runs and what the person does next.
func (f *configFile) explain(e *cli.Env, g gateSpec, edit *gatedEntry, url string) {
	c := f.client
	w := e.Stdout
	fmt.Fprintf(w, "\n%s now runs: %s\n", g.key, shellWords(edit.argv))
	if len(g.allow) > 0 {
		fmt.Fprintf(w, "Each call of its tools waits for approval in askd, but %s (--allow).\n", strings.Join(g.allow, ", "))
	} else {
		fmt.Fprintln(w, "Each call of its tools waits for approval in askd (an always-allow rule or --allow lets a tool through).")
	}
	switch {
	case g.tokenFile != "":
		fmt.Fprintf(w, "The gate reads the agent token from %s (mode 0600; askd token create --agent NAME makes one).\n", g.tokenFile)
	case c.id == "codex":
		fmt.Fprintln(w, "The gate reads the agent token from ASKD_TOKEN where Codex runs (env_vars passes it):")
		fmt.Fprintln(w, "  export ASKD_TOKEN=<agent token>   # askd token create --agent NAME")
	default:
		fmt.Fprintf(w, "The gate reads the agent token from ASKD_TOKEN where %s runs (the entry refers to it):\n", c.name)
		fmt.Fprintln(w, "  export ASKD_TOKEN=<agent token>   # askd token create --agent NAME")
	}
	if g.url != "" {
		fmt.Fprintf(w, "It reaches askd at %s (--url).\n", g.url)
	} else {
		fmt.Fprintf(w, "It reaches askd at ASKD_URL where %s runs, else %s.\n", c.name, url)
	}
	for _, k := range edit.added {
		switch k {
		case c.timeoutKey:
			fmt.Fprintf(w, "%s = %d: %s waits for a call past the gate's own 10 minutes (the gate then says the approval is still pending).\n", k, c.timeoutValue, c.name)
		case c.approveKey:
			fmt.Fprintf(w, "%s = %v: %s no longer asks before each call of the server's tools; askd does.\n", k, c.approveValue, c.name)
		}
	}
	if edit.upstream.url != "" {
		fmt.Fprintln(w, "The gate sends the server only the headers on its command line: a sign-in the client did for it (OAuth) does not pass.")
	}
	if g.askd == "askd" {
		if _, err := exec.LookPath("askd"); err != nil {
			fmt.Fprintln(w, "Note: askd is not on PATH here; put it on the PATH the client runs with (or pass --askd PATH).")
		}
	}
	fmt.Fprintf(w, "Restart %s (or its MCP servers) to start the gate. To put the entry back:\n", c.name)
	fmt.Fprintf(w, "  %s\n", shellWords([]string{"askd", "install", "mcp-gate", "--config", f.path, "--server", g.key, "--undo"}))
}

// defaultAskd is the command a gated entry runs: askd, looked up on the
// PATH the client starts servers with, except for Claude Desktop, which
// starts them with a short PATH of its own: there the full path of the askd
// on this PATH, else of this very program.
func defaultAskd(c *mcpClient) string {
	if c.id != "claude-desktop" {
		return "askd"
	}
	if p, err := exec.LookPath("askd"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	if p, err := os.Executable(); err == nil {
		return p
	}
	return "askd"
}

// checkServerKey refuses a key the gate cannot take as its --name: one
// word of printable characters, at most askd.MaxSourceChars.
func checkServerKey(key string) error {
	switch {
	case !utf8.ValidString(key) || askd.Printable(key) != key || strings.ContainsAny(key, " \t"):
		return cli.UsageError(fmt.Sprintf("install mcp-gate: --server %q: the gate's --name is one word of printable characters; rename the server's key in the file, then run again", key))
	case utf8.RuneCountInString(key) > askd.MaxSourceChars:
		return cli.UsageError(fmt.Sprintf("install mcp-gate: --server: %d characters, and the gate's --name takes at most %d", utf8.RuneCountInString(key), askd.MaxSourceChars))
	}
	return nil
}

// checkTool refuses an --allow that is no tool name, or Claude Code's name
// for the tool in place of the server's own.
func checkTool(key, tool string) error {
	switch {
	case tool == "" || !utf8.ValidString(tool) || askd.Printable(tool) != tool || strings.ContainsAny(tool, " \t"):
		return cli.UsageError(fmt.Sprintf("install mcp-gate: --allow %q: give a tool's name, one word", tool))
	case strings.HasPrefix(tool, "mcp__"):
		return cli.UsageError(fmt.Sprintf("install mcp-gate: --allow %q: give the server's own name for the tool (%s), not mcp__%s__TOOL", tool, strings.TrimPrefix(tool, "mcp__"+key+"__"), key))
	}
	return nil
}

// shellWords writes a command line for a person to read as a shell would:
// a word with anything but letters, digits and -_./:=@,+% in single quotes.
func shellWords(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		plain := a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+%", r))
		}) < 0
		if plain {
			words[i] = a
		} else {
			words[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(words, " ")
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}
