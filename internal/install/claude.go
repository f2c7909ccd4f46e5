package install

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/hookcmd"
	"github.com/askd-dev/askd/internal/jsonedit"
)

// mcpTimeoutMs is Claude Code's per-call wall clock for askd's tools: above
// any question or approval timeout a server is likely to run with, so askd's
// own deadlines decide. (Progress does not extend it; it only keeps idle
// timers alive.)
const mcpTimeoutMs = 3600000

const claudeSynopsis = "[--scope project|user] [--dir DIR] [--url URL] [--stop-wait D] [--channel] [--elicitation [--elicitation-timeout 5m]]"

// channelLaunch is how Claude Code is started with askd as its channel:
// ASKD_CHANNEL turns the bridge's channel on (askd mcp --channel), and the
// flag makes Claude Code listen to it. Only the two together: a bridge
// pushing to a Claude Code that does not listen tells no one.
const channelLaunch = "ASKD_CHANNEL=1 claude --dangerously-load-development-channels server:askd"

// installClaude writes askd's MCP server, hooks and skill into Claude Code's
// files, merged with what is there.
func installClaude(e *cli.Env, args []string) error {
	fs := cli.Flags(e, "install claude", claudeSynopsis)
	scope := fs.String("scope", "project", "project: .mcp.json and .claude/ in --dir; user: ~/.claude.json and ~/.claude/")
	dir := fs.String("dir", ".", "the project directory (scope project)")
	url := fs.String("url", cli.DefaultURL, "the askd server the MCP entry and hooks fall back to when ASKD_URL is unset where Claude Code runs")
	stopWait := fs.Duration("stop-wait", 0, "let the Stop hook wait this long for pending asks (e.g. 10m for headless runs; 0: never wait)")
	asChannel := fs.Bool("channel", false, "run askd's MCP server as the askd mcp bridge, Claude Code's channel: answers are pushed into the\nrunning session and permission prompts relayed to the inbox (start Claude with "+channelLaunch+")")
	elicit := fs.Bool("elicitation", false, "add the Elicitation hook: every MCP server's questions become form asks in the inbox (claude -p\notherwise cancels them; interactive Claude Code then asks in the inbox, not its own dialog);\nwithout it, an Elicitation hook an earlier install wrote is taken out")
	elicitTimeout := fs.Duration("elicitation-timeout", 5*time.Minute, "with --elicitation: the server's --elicitation-timeout (its --question-timeout if it sets none);\nClaude Code waits for the hook a minute longer, 600s at the least")
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.UsageError(fmt.Sprintf("install claude: unexpected argument %q", fs.Arg(0)))
	}
	if *elicitTimeout <= 0 {
		return cli.UsageError(fmt.Sprintf("--elicitation-timeout: %s, must be above 0 (the server's own timeout for form asks)", *elicitTimeout))
	}
	base := strings.TrimRight(*url, "/")
	if err := hookcmd.CheckURL(base); err != nil {
		return err
	}
	var mcpFile, claudeDir string
	switch *scope {
	case "project":
		mcpFile, claudeDir = filepath.Join(*dir, ".mcp.json"), filepath.Join(*dir, ".claude")
	case "user":
		home, err := homeDir(e)
		if err != nil {
			return err
		}
		mcpFile, claudeDir = filepath.Join(home, ".claude.json"), filepath.Join(home, ".claude")
	default:
		return cli.UsageError(fmt.Sprintf("--scope: %q is not project or user", *scope))
	}
	settings := filepath.Join(claudeDir, "settings.json")
	skill := filepath.Join(claudeDir, "skills", "askd", "SKILL.md")

	changed, err := mergeJSONFile(mcpFile, func(root *jsonedit.Object) error {
		servers, err := root.Object("mcpServers")
		if err != nil {
			return err
		}
		entry := claudeMCPEntry(base)
		if *asChannel {
			entry = claudeBridgeEntry(base)
		}
		servers.Set("askd", entry)
		return nil
	})
	if err != nil {
		return err
	}
	report(e, mcpFile, changed)
	removed := false // an earlier install's Elicitation hook taken out
	changed, err = mergeJSONFile(settings, func(root *jsonedit.Object) error {
		if err := allowAskdTools(root); err != nil {
			return err
		}
		if err := mergeHooks(root, base, *stopWait, !*asChannel); err != nil {
			return err
		}
		if *elicit {
			return addElicitationHook(root, base, *elicitTimeout)
		}
		removed, err = removeElicitationHook(root)
		return err
	})
	if err != nil {
		return err
	}
	report(e, settings, changed)
	switch {
	case *elicit:
		fmt.Fprintln(e.Stderr, elicitationNote(*elicitTimeout))
	case removed:
		fmt.Fprintln(e.Stderr, "askd: took out askd's Elicitation hook (no --elicitation): MCP servers' questions go to Claude Code's own dialog again, and claude -p cancels them; --elicitation puts the hook back")
	}
	changed, err = writeIfChanged(skill, []byte(skillText))
	if err != nil {
		return err
	}
	report(e, skill, changed)
	hookcmd.WarnIfNotOnPath(e)
	fmt.Fprintln(e.Stdout, "\nClaude Code reads the token and session from the environment, never from these files:")
	fmt.Fprintln(e.Stdout, "  export ASKD_TOKEN=<agent token>   # askd token create --agent NAME")
	fmt.Fprintln(e.Stdout, "  export ASKD_SESSION=<run name>    # the same for MCP and hooks, so the Stop hook hands answers back")
	fmt.Fprintf(e.Stdout, "  export ASKD_URL=<server>          # if set, used instead of %s by the MCP server and the hooks\n", base)
	if *asChannel {
		fmt.Fprintln(e.Stdout, "Start Claude Code with askd as its channel (answers typed in as the next prompt, permission prompts in the inbox):")
		fmt.Fprintln(e.Stdout, "  "+channelLaunch)
		fmt.Fprintln(e.Stdout, "Started without ASKD_CHANNEL=1, askd mcp is a plain bridge and answers wait for the Stop hook.")
		return nil
	}
	fmt.Fprintln(e.Stdout, "Headless: claude -p --permission-prompt-tool mcp__askd__permission_prompt \"...\"")
	return nil
}

// claudeBridgeEntry is askd's .mcp.json server as the askd mcp bridge over
// stdio, which can be Claude Code's channel: Claude Code passes its
// environment on (ASKD_TOKEN, ASKD_SESSION, ASKD_CHANNEL), and the entry
// gives ASKD_URL its default.
func claudeBridgeEntry(base string) *jsonedit.Object {
	return jsonedit.NewObject().
		Set("type", "stdio").
		Set("command", "askd").
		Set("args", []any{"mcp"}).
		Set("env", jsonedit.NewObject().Set("ASKD_URL", "${ASKD_URL:-"+base+"}")).
		Set("timeout", mcpTimeoutMs)
}

// claudeMCPEntry is askd's .mcp.json server: environment references, which
// Claude Code expands when it starts (${VAR}, ${VAR:-default}), not secrets.
func claudeMCPEntry(base string) *jsonedit.Object {
	return jsonedit.NewObject().
		Set("type", "http").
		Set("url", "${ASKD_URL:-"+base+"}/mcp").
		Set("headers", jsonedit.NewObject().
			Set("Authorization", "Bearer ${ASKD_TOKEN}").
			Set("Askd-Session", "${ASKD_SESSION:-}")).
		Set("timeout", mcpTimeoutMs)
}

// claudeHookTimeout is the timeout Claude Code gives askd's hooks, in seconds
// (also Claude's own default for command hooks). A question or permission
// hook waits at most askd's deadline for it.
const claudeHookTimeout = 600

// askdHook is one of askd's Claude Code hooks: a command hook running askd
// hook (hookcmd.CommandLine), timeout in seconds; wait is a Stop hook's
// wait, "" for none.
//
// Not an http hook, so that the hooks follow ASKD_URL as .mcp.json's entry
// does. Claude Code (read in 2.1.332's bundle) posts an http hook to its url
// as written: it expands $VAR and ${VAR} only in header values, for names in
// allowedEnvVars, with no ${VAR:-default} form, and its settings schema
// refuses a url that is not a URL, such as one starting ${ASKD_URL}
// (anthropics/claude-code#31653). Claude Code 2.1.328 runs a command hook
// with /bin/sh -c (dash on Debian and Ubuntu, whatever SHELL says), the
// hook input on stdin; askd hook's reply on stdout is read as an http
// hook's body would be, and its failures are status 1, which never stops
// the agent.
//
// onFailure "continue" is Claude's default, written out because on Windows
// without Git Bash (hooks run in PowerShell) Claude otherwise counts a
// failed PreToolUse or PermissionRequest command hook as a block.
func askdHook(base, wait string, timeout int, status string) *jsonedit.Object {
	return jsonedit.NewObject().
		Set("type", "command").
		Set("command", hookcmd.CommandLine(base, wait)).
		Set("timeout", timeout).
		Set("onFailure", "continue").
		Set("statusMessage", status)
}

// askdToolsRule is Claude Code's permission rule for every tool of the MCP
// server named askd.
const askdToolsRule = "mcp__askd"

// allowAskdTools adds askd's tools to the settings' permissions.allow, once:
// they only put words in the person's inbox, and without the rule each
// call is first a permission prompt, which askd's own PermissionRequest hook
// would turn into an approval card ("may the agent ask you?") before the
// ask itself.
func allowAskdTools(root *jsonedit.Object) error {
	perms, err := root.Object("permissions")
	if err != nil {
		return err
	}
	allow, err := perms.Array("allow")
	if err != nil {
		return fmt.Errorf("permissions: %v", err)
	}
	for _, r := range allow {
		if r == askdToolsRule {
			return nil
		}
	}
	perms.Set("allow", append(allow, askdToolsRule))
	return nil
}

// mergeHooks puts askd's hooks into settings, keeping every other hook where
// it was. A group that held only askd's hook gets the new one in its place
// (so a second run changes nothing); an askd hook among the user's hooks is
// taken out, and the new group is appended. Settings whose hooks are not the
// shape Claude Code reads are an error, changing nothing.
//
// Without permissionHook (install --channel: the channel relays permission
// prompts itself, and both would put two cards in the inbox for one prompt)
// askd's PermissionRequest hook takes only the prompts a policy covers
// (askd hook --only-policies), in place of the one an earlier install wrote.
func mergeHooks(root *jsonedit.Object, base string, stopWait time.Duration, permissionHook bool) error {
	hooks, err := root.Object("hooks")
	if err != nil {
		return err
	}
	stopQuery := ""
	// A Stop hook that waits must outlive its wait, or Claude cancels it
	// first and makes no decision (an answer given meanwhile waits for the
	// next Stop): its timeout is at least a minute past the wait.
	stopTimeout := claudeHookTimeout
	if stopWait > 0 {
		stopQuery = askd.ShortDuration(stopWait)
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
		groups, err := hooks.Array(o.event)
		if err != nil {
			return fmt.Errorf("hooks: %v", err)
		}
		if o.event == "PermissionRequest" && !permissionHook {
			// Beside the channel, only the prompts a policy covers: they
			// wait for their quorum in the inbox, never shown in the
			// terminal, where one person could allow them alone
			// (docs/security.md). The others go on to the terminal and
			// the channel relays them.
			h := askdHook(base, "", o.timeout, "askd: waiting for the approvals a policy asks for")
			h.Set("command", hookcmd.CommandLineArgs(base, "--only-policies"))
			hooks.Set(o.event, withAskdGroup(groups, jsonedit.NewObject().Set("matcher", o.matcher).Set("hooks", []any{h})))
			continue
		}
		group := jsonedit.NewObject()
		if o.matcher != "" {
			group.Set("matcher", o.matcher)
		}
		group.Set("hooks", []any{askdHook(base, o.query, o.timeout, o.status)})
		hooks.Set(o.event, withAskdGroup(groups, group))
	}
	return nil
}

// withAskdGroup is groups with every askd hook taken out and group in the
// place of the first group that held only askd's hooks, else at the end; a
// nil group only takes askd's out.
func withAskdGroup(groups []any, group *jsonedit.Object) []any {
	kept := []any{}
	placed := false
	for _, g := range groups {
		gm, ok := g.(*jsonedit.Object)
		if !ok {
			kept = append(kept, g)
			continue
		}
		list, err := gm.Array("hooks")
		if err != nil {
			kept = append(kept, g) // not a hook group Claude reads: left as it is
			continue
		}
		rest := []any{}
		for _, h := range list {
			if hm, ok := h.(*jsonedit.Object); ok && isAskdHook(hm) {
				continue
			}
			rest = append(rest, h)
		}
		switch {
		case len(list) > 0 && len(rest) == 0: // askd's own group
			if !placed && group != nil {
				kept, placed = append(kept, group), true
			}
		case len(rest) != len(list):
			gm.Set("hooks", rest)
			kept = append(kept, gm)
		default:
			kept = append(kept, gm)
		}
	}
	if !placed && group != nil {
		kept = append(kept, group)
	}
	return kept
}

// isAskdHook reports whether h is one of askd's hooks: a command hook that
// runs askd hook (or, from earlier installs, posts to askd's /hooks/claude
// with curl), or the http hook earlier installs wrote.
func isAskdHook(h *jsonedit.Object) bool {
	var target any
	switch typ, _ := h.Get("type"); typ {
	case "command":
		target, _ = h.Get("command")
	case "http":
		target, _ = h.Get("url")
	}
	s, _ := target.(string)
	return hookcmd.IsAskd(s)
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
