package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/testserver"
)

// runCLI runs askd with args and returns its stdout, stderr and error.
func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(t.Context(), args, nil, &out, &errOut)
	return out.String(), errOut.String(), err
}

// TestHelpEverywhere: -h and --help on every command and subcommand print
// its usage on stdout and exit 0; a mistake is one line and exit 2.
func TestHelpEverywhere(t *testing.T) {
	var cmds [][]string
	for name := range commands {
		switch name {
		case "token":
			cmds = append(cmds, []string{"token"}, []string{"token", "create"}, []string{"token", "list"}, []string{"token", "revoke"},
				[]string{"token", "set-role"}, []string{"token", "set-owner"})
		case "team":
			cmds = append(cmds, []string{"team"}, []string{"team", "create"}, []string{"team", "set"}, []string{"team", "add"},
				[]string{"team", "remove"}, []string{"team", "list"}, []string{"team", "delete"})
		case "session":
			cmds = append(cmds, []string{"session"}, []string{"session", "set-channel"})
		case "install":
			cmds = append(cmds, []string{"install"}, []string{"install", "claude"}, []string{"install", "codex"}, []string{"install", "mcp-gate"})
		case "gate":
			cmds = append(cmds, []string{"gate"}, []string{"gate", "run"}, []string{"gate", "git"}, []string{"gate", "mcp"})
		default:
			cmds = append(cmds, []string{name})
		}
	}
	for _, c := range cmds {
		for _, h := range []string{"-h", "--help"} {
			args := append(append([]string{}, c...), h)
			out, errOut, err := runCLI(t, args...)
			if err != nil && !errors.Is(err, flag.ErrHelp) || cli.ExitCode(err) != 0 {
				t.Errorf("askd %v: %v (exit %d)", args, err, cli.ExitCode(err))
			}
			if !strings.Contains(strings.ToLower(out), "usage: askd "+c[0]) || errOut != "" {
				t.Errorf("askd %v: stdout %q, stderr %q; want the usage on stdout", args, out, errOut)
			}
		}
	}
	for _, args := range [][]string{{"serve", "--adr", ":1"}, {"list", "--limit", "many"}, {"check"}, {"check", "x"}, {"token", "mint"}, {"team", "join"}, {"claim"}, {"gate"}, {"gate", "push"}, {"frobnicate"}} {
		out, errOut, err := runCLI(t, args...)
		if cli.ExitCode(err) != 2 || out != "" || errOut != "" || strings.Contains(err.Error(), "\n") {
			t.Errorf("askd %v: exit %d, %q, stdout %q, stderr %q; want exit 2 and one line", args, cli.ExitCode(err), err, out, errOut)
		}
	}
}

// TestVersion: askd version and --version print the build's version and Go.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version", "--json"}, {"--version", "--json"}} {
		out, _, err := runCLI(t, args...)
		var b build
		if err != nil || json.Unmarshal([]byte(out), &b) != nil || b.Version == "" || !strings.HasPrefix(b.Go, "go1.") {
			t.Errorf("askd %v: %v %q", args, err, out)
		}
	}
	out, _, err := runCLI(t, "version")
	if err != nil || !strings.HasPrefix(out, "askd ") || !strings.Contains(out, "built with go1.") {
		t.Errorf("askd version: %v %q", err, out)
	}
}

// TestMain removes the askd binary that tests running it built
// (testserver.Binary).
func TestMain(m *testing.M) {
	code := m.Run()
	testserver.RemoveBinary()
	os.Exit(code)
}
