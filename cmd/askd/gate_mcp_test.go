package main

import (
	"bytes"
	"io"
	"os/exec"
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
