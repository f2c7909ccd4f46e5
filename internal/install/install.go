// Package install is askd install: it wires askd into an agent's config
// files (install claude: Claude Code's JSON settings, edited with jsonedit;
// install codex: Codex's config.toml, edited with tomledit), puts one MCP
// server of any MCP client's config behind askd gate mcp (install mcp-gate:
// Claude Desktop, Cursor, Claude Code, Gemini CLI, VS Code, Codex), and
// wires a git server (install git-gate: a bare repository's pre-receive
// hook, which runs askd gate git). The hooks it writes for the agents run
// askd hook (hookcmd.CommandLine).
package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/jsonedit"
)

// Command is askd install. It wires askd into an agent: `askd install
// claude` writes Claude Code's config files, `askd install codex` edits
// Codex's config.toml; puts an MCP server behind askd's gate: `askd install
// mcp-gate` edits one server entry of an MCP client's config; or wires a
// git server: `askd install git-gate` writes a bare repository's
// pre-receive hook. It returns an error carrying the exit status
// (cli.ExitCode).
func Command(ctx context.Context, e *cli.Env, args []string) error {
	if len(args) == 0 {
		return cli.UsageError("install: say what to wire askd into, claude, codex, mcp-gate or git-gate (askd install -h lists them)")
	}
	switch args[0] {
	case "claude":
		return installClaude(e, args[1:])
	case "codex":
		return installCodex(e, args[1:])
	case "mcp-gate":
		return installMCPGate(e, args[1:])
	case "git-gate":
		return installGitGate(e, args[1:])
	case "copilot":
		return installCopilot(e, args[1:])
	case "qwen":
		return installQwen(e, args[1:])
	case "gemini":
		return installGemini(e, args[1:])
	case "opencode":
		return installOpenCode(e, args[1:])
	case "-h", "-help", "--help", "help":
		installUsage(e.Stdout)
		return nil
	}
	return cli.UsageError(fmt.Sprintf("install: %q is not claude, codex, mcp-gate or git-gate (askd install -h lists them)", args[0]))
}

func installUsage(w io.Writer) {
	fmt.Fprintf(w, `Usage: askd install claude|codex|copilot|qwen|gemini|opencode|mcp-gate|git-gate [flags]

  askd install claude %s
      wire askd into Claude Code: .mcp.json, hooks in .claude/settings.json, a skill;
      with --channel, askd mcp as Claude Code's channel (answers pushed into the running
      session, permission prompts relayed to the inbox), started with
        %s
      with --elicitation, the Elicitation hook: every MCP server's questions become form
      asks in the inbox (claude -p would cancel them)
  askd install codex %s
      put askd's MCP server and Stop hook into Codex's config.toml (a backup beside it)
  askd install copilot %s
  askd install qwen %s
  askd install gemini %s
      wire askd into Copilot CLI, Qwen Code or Gemini CLI at user scope: the MCP entry, the
      permission gate, the next-prompt hook and a skill (a backup beside each file changed);
      headless: copilot -p, qwen --yolo -p, gemini --skip-trust --approval-mode yolo -p
  askd install opencode %s
      wire askd into OpenCode: the MCP entry, askd's plugin (the permission gate) and a
      skill; headless: askd opencode -- --auto "..."
  askd install mcp-gate %s
      put one MCP server of any MCP client's config behind askd gate mcp (Claude Desktop,
      Cursor, Claude Code, Gemini CLI, VS Code, Codex): each call of its tools waits for
      a person's approval in askd, its questions reach a person; --undo puts it back
  askd install git-gate %s
      write a pre-receive hook into a bare repository (REPO or the current directory):
      each push to a protected ref waits for a person's approval in the inbox, refused
      at once until approved; a pre-receive hook already there is kept and runs first

Run 'askd install NAME -h' for the flags of one of them.
`, claudeSynopsis, channelLaunch, codexSynopsis, copilotSynopsis, qwenSynopsis, geminiSynopsis, openCodeSynopsis,
		mcpGateSynopsis, gitGateSynopsis)
}

func report(e *cli.Env, path string, changed bool) {
	if changed {
		fmt.Fprintf(e.Stdout, "wrote     %s\n", path)
	} else {
		fmt.Fprintf(e.Stdout, "unchanged %s\n", path)
	}
}

// homeDir is $HOME as the command's environment has it, else the OS's idea.
func homeDir(e *cli.Env) (string, error) {
	if home := e.Getenv("HOME"); home != "" {
		return home, nil
	}
	return os.UserHomeDir()
}

// writeIfChanged writes data to path unless it holds that already: a new
// file 0644, an existing one replaced in one rename keeping its mode (see
// replaceFile).
func writeIfChanged(path string, data []byte) (bool, error) {
	target, err := followSymlink(path)
	if err != nil {
		return false, err
	}
	mode := os.FileMode(0o644)
	old, err := os.ReadFile(target)
	switch {
	case err == nil && bytes.Equal(old, data):
		return false, nil
	case err == nil:
		info, err := os.Stat(target)
		if err != nil {
			return false, err
		}
		mode = info.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return false, err
	}
	return true, replaceFile(target, data, mode)
}

// mergeJSONFile reads a JSON object file (absent: {}), lets edit change it
// and writes it back if anything changed. The user's keys keep their order
// and the file its indentation; an edit error changes nothing.
func mergeJSONFile(path string, edit func(root *jsonedit.Object) error) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	root, err := jsonedit.Decode(data)
	if err != nil {
		return false, fmt.Errorf("%s: not a JSON object (%v); fix or move it, then run again", path, err)
	}
	if err := edit(root); err != nil {
		return false, fmt.Errorf("%s: %v; fix or move it, then run again", path, err)
	}
	indent, newline := jsonedit.Layout(data)
	out, err := jsonedit.Encode(root, indent, newline)
	if err != nil {
		return false, err
	}
	return writeIfChanged(path, out)
}

// followSymlink is the file path names: where it points if it is a
// symlink (so that a config kept elsewhere, a dotfiles checkout say, is
// edited there and the link stays), else path.
func followSymlink(path string) (string, error) {
	info, err := os.Lstat(path)
	if err != nil || info.Mode()&os.ModeSymlink == 0 {
		return path, nil
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%s: a symlink askd cannot follow (%v)", path, err)
	}
	return target, nil
}

// replaceFile writes data to a temporary file beside path and renames it
// over path, so that a reader (Claude Code or Codex starting) or a crash
// never sees half a file. The file gets mode; being new, it is the current
// user's, and links to the old one keep the old text.
func replaceFile(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".askd-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// seconds rounds d up to whole seconds, the unit of Codex's timeouts.
func seconds(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}
