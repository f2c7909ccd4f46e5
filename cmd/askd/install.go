package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/httpapi"
)

// cmdInstall wires askd into an agent: `askd install claude` writes Claude
// Code's config files, `askd install codex` prints Codex's config block.
func cmdInstall(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usageError("install: say which agent: askd install claude [--scope project|user] | askd install codex")
	}
	switch args[0] {
	case "claude":
		return installClaude(e, args[1:])
	case "codex":
		return installCodex(e, args[1:])
	}
	return usageError(fmt.Sprintf("install: %q is not claude or codex", args[0]))
}

// mcpTimeoutMs is Claude Code's per-call wall clock for askd's tools: above
// any question or approval timeout a server is likely to run with, so askd's
// own deadlines decide. (Progress does not extend it; it only keeps idle
// timers alive.)
const mcpTimeoutMs = 3600000

func installClaude(e *env, args []string) error {
	fs := flags(e, "install claude", "[--scope project|user] [--dir DIR] [--url URL]")
	scope := fs.String("scope", "project", "project: .mcp.json and .claude/ in --dir; user: ~/.claude.json and ~/.claude/")
	dir := fs.String("dir", ".", "the project directory (scope project)")
	url := fs.String("url", "http://127.0.0.1:7777", "the askd server when ASKD_URL is unset where Claude Code runs (the MCP entry and hooks read ASKD_URL first)")
	stopWait := fs.Duration("stop-wait", 0, "let the Stop hook wait this long for pending asks (e.g. 10m for headless runs; 0: never wait)")
	if err := parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Sprintf("install claude: unexpected argument %q", fs.Arg(0)))
	}
	base := strings.TrimRight(*url, "/")
	if err := checkHookURL(base); err != nil {
		return err
	}
	var mcpFile, claudeDir string
	switch *scope {
	case "project":
		mcpFile, claudeDir = filepath.Join(*dir, ".mcp.json"), filepath.Join(*dir, ".claude")
	case "user":
		home := e.getenv("HOME")
		if home == "" {
			var err error
			if home, err = os.UserHomeDir(); err != nil {
				return err
			}
		}
		mcpFile, claudeDir = filepath.Join(home, ".claude.json"), filepath.Join(home, ".claude")
	default:
		return usageError(fmt.Sprintf("--scope: %q is not project or user", *scope))
	}
	settings := filepath.Join(claudeDir, "settings.json")
	skill := filepath.Join(claudeDir, "skills", "askd", "SKILL.md")

	changed, err := mergeJSONFile(mcpFile, func(root *jsonObject) error {
		servers, err := root.object("mcpServers")
		if err != nil {
			return err
		}
		servers.set("askd", claudeMCPEntry(base))
		return nil
	})
	if err != nil {
		return err
	}
	report(e, mcpFile, changed)
	changed, err = mergeJSONFile(settings, func(root *jsonObject) error { return mergeHooks(root, base, *stopWait) })
	if err != nil {
		return err
	}
	report(e, settings, changed)
	changed, err = writeIfChanged(skill, []byte(skillText))
	if err != nil {
		return err
	}
	report(e, skill, changed)
	fmt.Fprintln(e.stdout, "\nClaude Code reads the token and session from the environment, never from these files:")
	fmt.Fprintln(e.stdout, "  export ASKD_TOKEN=<agent token>   # askd token create --agent NAME")
	fmt.Fprintln(e.stdout, "  export ASKD_SESSION=<run name>    # the same for MCP and hooks, so the Stop hook hands answers back")
	if base != "http://127.0.0.1:7777" {
		fmt.Fprintf(e.stdout, "  export ASKD_URL=%s\n", base)
	}
	fmt.Fprintln(e.stdout, "Headless: claude -p --permission-prompt-tool mcp__askd__permission_prompt \"...\"")
	return nil
}

func report(e *env, path string, changed bool) {
	if changed {
		fmt.Fprintf(e.stdout, "wrote     %s\n", path)
	} else {
		fmt.Fprintf(e.stdout, "unchanged %s\n", path)
	}
}

// claudeMCPEntry is askd's .mcp.json server: environment references, which
// Claude Code expands when it starts (${VAR}, ${VAR:-default}), not secrets.
func claudeMCPEntry(base string) *jsonObject {
	return newJSONObject().
		set("type", "http").
		set("url", "${ASKD_URL:-"+base+"}/mcp").
		set("headers", newJSONObject().
			set("Authorization", "Bearer ${ASKD_TOKEN}").
			set("Askd-Session", "${ASKD_SESSION:-}")).
		set("timeout", mcpTimeoutMs)
}

// claudeHookTimeout is the timeout Claude Code gives askd's hooks, in seconds
// (also Claude's own default for command hooks). A question or permission
// hook waits at most askd's deadline for it.
const claudeHookTimeout = 600

// askdHook is one of askd's Claude Code hooks: a command hook that posts the
// hook input to askd with curl, timeout in seconds; query is the hook URL's
// query, "" or "?wait=...".
//
// Not an http hook, so that the hooks follow ASKD_URL as .mcp.json's entry
// does. Claude Code (read in 2.1.332's bundle) posts an http hook to its url
// as written: it expands $VAR and ${VAR} only in header values, for names in
// allowedEnvVars, with no ${VAR:-default} form, and its settings schema
// refuses a url that is not a URL, such as one starting ${ASKD_URL} (which
// loses every hook of the file). A command hook runs through bash or zsh,
// which expand ${ASKD_URL:-base}, with the hook input on stdin; askd's reply
// on stdout is read as an http hook's body would be.
//
// Like an http hook's error reply, a failure never stops the agent: curl -f
// prints nothing on an HTTP error (its body is no hook output) and exits 22,
// -sS shows curl's own error on stderr, and `|| exit 1` turns every failure
// into exit status 1, since Claude reads status 2 as a blocking decision
// (curl's 2 is "failed to start"). onFailure "continue" is Claude's default,
// written out because on Windows without Git Bash (hooks run in PowerShell)
// Claude otherwise counts a failed PreToolUse or PermissionRequest command
// hook as a block.
func askdHook(base, query string, timeout int, status string) *jsonObject {
	command := `curl -sSf -X POST --data-binary @- -H "Authorization: Bearer $ASKD_TOKEN" -H "Askd-Session: $ASKD_SESSION" "${ASKD_URL:-` +
		base + `}/hooks/claude` + query + `" || exit 1`
	return newJSONObject().
		set("type", "command").
		set("command", command).
		set("timeout", timeout).
		set("onFailure", "continue").
		set("statusMessage", status)
}

// mergeHooks puts askd's hooks into settings, keeping every other hook where
// it was. A group that held only askd's hook gets the new one in its place
// (so a second run changes nothing); an askd hook among the user's hooks is
// taken out, and the new group is appended. Settings whose hooks are not the
// shape Claude Code reads are an error, changing nothing.
func mergeHooks(root *jsonObject, base string, stopWait time.Duration) error {
	hooks, err := root.object("hooks")
	if err != nil {
		return err
	}
	stopQuery := ""
	// A Stop hook that waits must outlive its wait, or Claude cancels it
	// first and makes no decision (an answer given meanwhile waits for the
	// next Stop): its timeout is at least a minute past the wait.
	stopTimeout := claudeHookTimeout
	if stopWait > 0 {
		stopQuery = "?wait=" + stopWait.String()
		stopTimeout = max(stopTimeout, seconds(stopWait+time.Minute))
	}
	ours := []struct {
		event, matcher, query string
		timeout               int
		status                string
	}{
		{"PreToolUse", app.AskUserQuestion, "", claudeHookTimeout, "askd: waiting for the answer in the inbox"},
		{"PermissionRequest", "*", "", claudeHookTimeout, "askd: waiting for approval in the inbox"},
		{"Stop", "", stopQuery, stopTimeout, "askd: checking for answers"},
	}
	for _, o := range ours {
		groups, err := hooks.array(o.event)
		if err != nil {
			return fmt.Errorf("hooks: %v", err)
		}
		group := newJSONObject()
		if o.matcher != "" {
			group.set("matcher", o.matcher)
		}
		group.set("hooks", []any{askdHook(base, o.query, o.timeout, o.status)})
		hooks.set(o.event, withAskdGroup(groups, group))
	}
	return nil
}

// withAskdGroup is groups with every askd hook taken out and group in the
// place of the first group that held only askd's hooks, else at the end.
func withAskdGroup(groups []any, group *jsonObject) []any {
	kept := []any{}
	placed := false
	for _, g := range groups {
		gm, ok := g.(*jsonObject)
		if !ok {
			kept = append(kept, g)
			continue
		}
		list, err := gm.array("hooks")
		if err != nil {
			kept = append(kept, g) // not a hook group Claude reads: left as it is
			continue
		}
		rest := []any{}
		for _, h := range list {
			if hm, ok := h.(*jsonObject); ok && isAskdHook(hm) {
				continue
			}
			rest = append(rest, h)
		}
		switch {
		case len(list) > 0 && len(rest) == 0: // askd's own group
			if !placed {
				kept, placed = append(kept, group), true
			}
		case len(rest) != len(list):
			gm.set("hooks", rest)
			kept = append(kept, gm)
		default:
			kept = append(kept, gm)
		}
	}
	if !placed {
		kept = append(kept, group)
	}
	return kept
}

// isAskdHook reports whether h is one of askd's hooks: a command hook that
// posts to askd's /hooks/claude, or the http hook earlier installs wrote.
func isAskdHook(h *jsonObject) bool {
	var target any
	switch typ, _ := h.get("type"); typ {
	case "command":
		target, _ = h.get("command")
	case "http":
		target, _ = h.get("url")
	}
	s, _ := target.(string)
	return strings.Contains(s, "/hooks/claude")
}

func writeIfChanged(path string, data []byte) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	return true, os.WriteFile(path, data, 0o644)
}

func installCodex(e *env, args []string) error {
	fs := flags(e, "install codex", "[--url URL] [--question-timeout 5m] [--approval-timeout 5m] [--stop-wait D]")
	url := fs.String("url", "http://127.0.0.1:7777", "the askd server, as Codex reaches it (written into the block: Codex expands no variables there)")
	question := fs.Duration("question-timeout", 5*time.Minute, "the server's --question-timeout")
	approval := fs.Duration("approval-timeout", 5*time.Minute, "the server's --approval-timeout")
	stopWait := fs.Duration("stop-wait", 0, "how long the Stop hook waits for pending asks to be answered (default: the longer of the two timeouts; 0: never wait)")
	if err := parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Sprintf("install codex: unexpected argument %q", fs.Arg(0)))
	}
	base := strings.TrimRight(*url, "/")
	if err := checkHookURL(base); err != nil {
		return err
	}
	longest := max(*question, *approval)
	wait := longest
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "stop-wait" {
			wait = *stopWait
		}
	})
	if wait < 0 || wait > httpapi.MaxWait {
		return usageError(fmt.Sprintf("--stop-wait: %s, must be 0 to %s", shortDuration(wait), shortDuration(httpapi.MaxWait)))
	}
	fmt.Fprint(e.stdout, codexBlock(base, longest, wait))
	return nil
}

// codexSlack is how much longer than askd's own deadline Codex is told to
// wait, for a tool call and for the Stop hook: askd answers first, with its
// explanation, instead of Codex cutting the call off.
const codexSlack = time.Minute

// codexBlock is the config.toml text for askd: the MCP server and a Stop hook.
// longest is the longer of the server's question and approval timeouts; wait
// is the Stop hook's ?wait= (0: answer at once).
//
// The hook tables follow Codex's own schema: hooks inline in config.toml are
// [[hooks.<Event>]] matcher groups holding [[hooks.<Event>.hooks]] handlers of
// type "command" with command, timeout (seconds; 600 when absent) and
// statusMessage (openai/codex: codex-rs/config/src/hook_config.rs for the
// keys, codex-rs/hooks/src/engine/discovery.rs for the default timeout; the
// public hooks page at developers.openai.com/codex/hooks says config.toml
// takes the same tables as hooks.json). Codex runs the command through a
// shell with the hook input on stdin and reads {"decision":"block","reason"}
// from stdout, as Claude Code does; this curl line was run end to end against
// Codex CLI 0.171.0. Codex has no http hook type, hence curl.
func codexBlock(base string, longest, wait time.Duration) string {
	stopURL := base + "/hooks/claude"
	waitNote := `answers at once (--stop-wait 0): an answer given later is told at
#   the end of a later turn, or when the model calls check_ask.`
	if wait > 0 {
		stopURL += "?wait=" + shortDuration(wait)
		waitNote = fmt.Sprintf(`waits up to %s (?wait=) while this session has asks pending,
#   so the person's answer becomes Codex's next instruction; with nothing
#   pending it answers at once.`, shortDuration(wait))
	}
	return fmt.Sprintf(`# askd for Codex: append to ~/.codex/config.toml. It holds no secret: export
# ASKD_TOKEN (an agent token) and ASKD_SESSION (one name per run) before codex starts.
#
# Timeouts, for askd's question and approval timeouts of at most %[1]s (pass
# --question-timeout and --approval-timeout if the server runs others):
# - askd ends a blocking ask_user_question itself at its timeout and tells the
#   model that no one answered.
# - tool_timeout_sec = %[2]d is Codex's hard wall clock per tool call (progress
#   notifications do not extend it), a minute past askd's, so askd replies first.
#   If Codex cuts a call off anyway, the ask stays pending: the same call again
#   re-attaches to it, and an answer given meanwhile reaches Codex at the Stop
#   hook below or through check_ask {}.
# - The Stop hook %[3]s
#   Its timeout = %[4]d is how long Codex lets the hook run: a minute past the wait.
[mcp_servers.askd]
url = "%[5]s/mcp"
bearer_token_env_var = "ASKD_TOKEN"
env_http_headers = { "Askd-Session" = "ASKD_SESSION" }
startup_timeout_sec = 20
tool_timeout_sec = %[2]d
# permission_prompt is Claude Code's permission contract; Codex has no use for it.
disabled_tools = ["permission_prompt"]

# Codex runs a new or changed hook only once you trust it: /hooks in codex
# (a one-off codex exec: --dangerously-bypass-hook-trust).
[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "command"
command = 'curl -s -X POST --data-binary @- -H "Authorization: Bearer $ASKD_TOKEN" -H "Askd-Session: $ASKD_SESSION" "%[6]s"'
timeout = %[4]d
statusMessage = "askd: checking for answers"
`, shortDuration(longest), seconds(longest+codexSlack), waitNote, seconds(wait+codexSlack), base, stopURL)
}

// shortDuration is d as askd's flags take it, without zero tails: 5m, not 5m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// seconds rounds d up to whole seconds, the unit of Codex's timeouts.
func seconds(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}

// checkHookURL refuses a server URL that askd's hooks cannot carry as it
// is: it goes into a double-quoted shell word (for Claude Code the default of
// ${ASKD_URL:-...}) inside a JSON or TOML string, so quotes, backslashes, $,
// backticks and } (and anything not printable ASCII) would change what runs.
func checkHookURL(base string) error {
	u, err := neturl.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError(fmt.Sprintf("--url: %q is not an http:// or https:// URL", base))
	}
	for _, r := range base {
		if r <= ' ' || r > '~' {
			return usageError(fmt.Sprintf("--url: %q: %U cannot go into askd's hook command", base, r))
		}
		if strings.ContainsRune("\"'\\$`}", r) {
			return usageError(fmt.Sprintf("--url: %q: %c cannot go into askd's hook command", base, r))
		}
	}
	return nil
}

// skillText is the agent skill installed beside the hooks: when to use which
// of askd's tools.
const skillText = `---
name: askd
description: Ask the person you work for through their askd inbox - a blocking question when you cannot go on without their choice, a non-blocking ask when they should know or decide something while you keep working, an approval before a risky action. Use it instead of guessing on decisions that are theirs to make.
---

# Asking the person through askd

askd's tools reach the person in their inbox, on their phone or laptop, even
when they are not watching this terminal. Use them for decisions that are
theirs to make; do not ask about things you can find out yourself.

## Which tool

- **mcp__askd__ask_user_question** - you cannot continue without their choice
  (an ambiguous requirement, a design decision, a preference). 1 to 4
  multiple-choice questions, a short header each (at most 12 characters), 2 to
  4 options; they may answer in their own words. It waits for the answer (up
  to the server's question timeout). If answers is empty, read response: their
  reply, or a note that no one answered in time - then proceed on your own
  judgement and say what you assumed, or ask again later.
- **mcp__askd__ask** - they should know or decide something, but you can keep
  working: kind decision (give options and recommended), action (they must do
  something you cannot, e.g. log in), ready (work is ready for review),
  blocked (you cannot go on without them). It returns at once; their answer
  arrives later as your next instruction, or via check_ask. A new ask replaces
  your previous open one.
- **mcp__askd__request_approval** - before a deploy, a migration, a purchase,
  a destructive command. Put the command or diff in details and the parameters
  in payload. approved: go ahead; modified: use their edited payload, not
  yours; rejected: do not do it (read the comment); pending: do not do it yet -
  continue other work and check_ask the id later.
- **mcp__askd__check_ask** - the state of one of your asks by id (settled asks
  give the same answer every time), or with no id, your open asks: use it
  after a call was cut off to find your question again.
- **mcp__askd__cancel_ask** - withdraw an ask you no longer need.

## Writing a good ask

- One decision per question; put your recommendation first and say why in its
  description.
- Write plain words: the inbox shows no links and runs no commands.
- Do not repeat an ask that is still pending: call check_ask instead.
`
