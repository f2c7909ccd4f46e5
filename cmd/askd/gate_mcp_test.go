package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/askd-dev/askd/internal/cli"
)

// TestGateMCPServerStderr: the MCP server's stderr is the gate's (SPEC
// §14), where a client such as Claude Desktop logs it; nothing of it is on
// stdout, which is the client's MCP stream. The server here writes a line
// and exits before any client speaks: the gate ends saying how it exited.
func TestGateMCPServerStderr(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh:", err)
	}
	t.Setenv("ASKD_URL", "http://127.0.0.1:1")
	t.Setenv("ASKD_TOKEN", "askd_a_gate-stderr-test")
	// The client's side stays open: the gate ends because the server did.
	stdin, client := io.Pipe()
	t.Cleanup(func() { client.Close() })
	var out, errOut bytes.Buffer
	err = run(t.Context(), []string{"gate", "mcp", "--name", "noisy", "--", sh, "-c", "echo 'the server: starting up' >&2; exit 4"}, stdin, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "exit status 4") || cli.ExitCode(err) != 1 {
		t.Fatalf("the gate ended with %v (exit %d), want the server's exit status 4", err, cli.ExitCode(err))
	}
	if !strings.Contains(errOut.String(), "the server: starting up\n") {
		t.Errorf("the gate's stderr %q lacks the server's", errOut.String())
	}
	if out.Len() != 0 {
		t.Errorf("the gate's stdout, the client's MCP stream, holds %q", out.String())
	}
}

// TestGateMCPFlagsDocumented: every flag askd gate mcp --help lists is in
// docs/clients.md's table of the gate's flags, and every flag of askd
// install mcp-gate --help in the README's line for it, so the two say the
// same; the gate's help says to pass --name (SPEC §14).
func TestGateMCPFlagsDocumented(t *testing.T) {
	read := func(path string) string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	clients, readme := read("../../docs/clients.md"), read("../../README.md")
	_, table, _ := strings.Cut(clients, "### The gate by hand")
	table, _, _ = strings.Cut(table, "\n### ")
	var installLine string
	for _, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(line, "askd install mcp-gate --config FILE") {
			installLine = line
		}
	}
	flagLine := regexp.MustCompile(`(?m)^  (--[a-z-]+)`)
	for _, c := range []struct {
		args []string
		doc  string
		in   string
	}{
		{[]string{"gate", "mcp", "--help"}, "docs/clients.md's table of the gate's flags", table},
		{[]string{"install", "mcp-gate", "--help"}, "the README's askd install mcp-gate line", installLine},
	} {
		out, _, err := runCLI(t, c.args...)
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			t.Fatal(err)
		}
		flags := flagLine.FindAllStringSubmatch(out, -1)
		if len(flags) == 0 {
			t.Fatalf("askd %v lists no flags:\n%s", c.args, out)
		}
		for _, f := range flags {
			if !strings.Contains(c.in, "`"+f[1]+" ") && !strings.Contains(c.in, "["+f[1]+" ") && !strings.Contains(c.in, "["+f[1]+"]") && !strings.Contains(c.in, " "+f[1]+" ") {
				t.Errorf("askd %v lists %s; %s does not", c.args, f[1], c.doc)
			}
		}
		if c.args[0] == "gate" && !strings.Contains(out, "Pass --name") {
			t.Errorf("askd gate mcp --help does not say to pass --name:\n%s", out)
		}
	}
}
