package install

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/hookcmd"
	"github.com/askd-dev/askd/internal/httpapi"
)

const codexSynopsis = "[--config PATH] [--print] [--url URL] [--question-timeout 5m] [--approval-timeout 5m] [--stop-wait D]"

// installCodex puts askd's tables into Codex's config.toml (see
// editCodexConfig), or with --print prints them.
func installCodex(e *cli.Env, args []string) error {
	fs := cli.Flags(e, "install codex", codexSynopsis)
	config := fs.String("config", "", "Codex's config file to edit (default: $CODEX_HOME/config.toml, else ~/.codex/config.toml)")
	printOnly := fs.Bool("print", false, "print askd's block instead, writing nothing")
	url := fs.String("url", cli.DefaultURL, "the askd server, as Codex reaches it (written into the block: Codex expands no variables there)")
	question := fs.Duration("question-timeout", 5*time.Minute, "the server's --question-timeout")
	approval := fs.Duration("approval-timeout", 5*time.Minute, "the server's --approval-timeout")
	stopWait := fs.Duration("stop-wait", 0, "how long the Stop hook waits for pending asks to be answered (default: the longer of the two timeouts; 0: never wait)")
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.UsageError(fmt.Sprintf("install codex: unexpected argument %q", fs.Arg(0)))
	}
	base := strings.TrimRight(*url, "/")
	if err := hookcmd.CheckURL(base); err != nil {
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
		return cli.UsageError(fmt.Sprintf("--stop-wait: %s, must be 0 to %s", askd.ShortDuration(wait), askd.ShortDuration(httpapi.MaxWait)))
	}
	block := codexBlock(base, longest, wait)
	if *printOnly {
		fmt.Fprint(e.Stdout, block)
		return nil
	}
	path := *config
	if path == "" {
		home := e.Getenv("CODEX_HOME")
		if home == "" {
			dir, err := homeDir(e)
			if err != nil {
				return err
			}
			home = filepath.Join(dir, ".codex")
		}
		path = filepath.Join(home, "config.toml")
	}
	changed, backup, err := editCodexFile(path, block)
	if err != nil {
		return err
	}
	if backup != "" {
		fmt.Fprintf(e.Stdout, "backup    %s\n", backup)
	}
	report(e, path, changed)
	hookcmd.WarnIfNotOnPath(e)
	fmt.Fprintln(e.Stdout, "\nCodex reads the token and session from the environment, never from this file:")
	fmt.Fprintln(e.Stdout, "  export ASKD_TOKEN=<agent token>   # askd token create --agent NAME")
	fmt.Fprintln(e.Stdout, "  export ASKD_SESSION=<run name>    # the same for MCP and the Stop hook, so it hands answers back")
	fmt.Fprintln(e.Stdout, "Codex runs a new or changed hook only once you trust it: /hooks in codex (codex exec: --dangerously-bypass-hook-trust).")
	return nil
}

// editCodexFile puts block into the config file at path in place of askd's
// earlier tables (editCodexConfig), writing only if that changes it. An
// existing file is first copied to a backup beside it, named
// config.toml.askd-YYYYMMDD-HHMMSS.bak, which is returned; the new text then
// replaces the file in one rename, with the file's mode (replaceFile). A
// symlinked config is edited where it points. A file askd cannot edit safely
// is an error that changes nothing.
func editCodexFile(path, block string) (changed bool, backup string, err error) {
	target, data, exists, err := readTarget(path)
	if err != nil {
		return false, "", err
	}
	out, err := editCodexConfig(data, block)
	if err != nil {
		return false, "", fmt.Errorf("%s: %v", path, err)
	}
	return writeWithBackup(path, target, exists, data, out) // a new config is 0600: Codex's may come to hold secrets
}

// writeBackup copies data to a new file beside path, named for the time,
// never replacing a file that is there.
func writeBackup(path string, data []byte, mode os.FileMode) (string, error) {
	stem := path + ".askd-" + time.Now().Format("20060102-150405")
	for n := 1; ; n++ {
		name := stem + ".bak"
		if n > 1 {
			name = fmt.Sprintf("%s-%d.bak", stem, n)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
			return "", err
		}
		return name, nil
	}
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
// from stdout, as Claude Code does. Codex has no http hook type; the command
// is askd hook (hookcmd.CommandLine), which keeps the token out of every
// process's arguments, as a TOML basic string (the command holds single
// quotes).
func codexBlock(base string, longest, wait time.Duration) string {
	stopWait := ""
	waitNote := `answers at once (--stop-wait 0): an answer given later is told at
#   the end of a later turn, or when the model calls check_ask.`
	if wait > 0 {
		stopWait = askd.ShortDuration(wait)
		waitNote = fmt.Sprintf(`waits up to %s (?wait=) while this session has asks pending,
#   so the person's answer becomes Codex's next instruction; with nothing
#   pending it answers at once.`, askd.ShortDuration(wait))
	}
	return fmt.Sprintf(codexBlockStart+`. askd install codex replaces these tables, and the comments
# right above them, each time it runs. They hold no secret: export ASKD_TOKEN
# (an agent token) and ASKD_SESSION (one name per run) before codex starts.
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
# askd's tools only put words in the person's inbox: no approval before each
# call (codex exec, whose approval policy is never, refuses every MCP call
# that needs one).
default_tools_approval_mode = "approve"

# Codex runs a new or changed hook only once you trust it: /hooks in codex
# (a one-off codex exec: --dangerously-bypass-hook-trust).
[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "command"
command = %[6]q
timeout = %[4]d
statusMessage = "askd: checking for answers"
`, askd.ShortDuration(longest), seconds(longest+codexSlack), waitNote, seconds(wait+codexSlack), base, hookcmd.CommandLine(base, stopWait))
}
