package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
)

// TestMCPNoServer: askd mcp says clearly that no server answers, and writes
// nothing to stdout (which belongs to the MCP protocol).
func TestMCPNoServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	var stdout, stderr bytes.Buffer
	err = run(context.Background(), []string{"mcp", "--url", "http://" + addr, "--token", "askd_a_x"}, strings.NewReader(""), &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "no askd server answers at http://"+addr) {
		t.Fatalf("err %v", err)
	}
	if stdout.Len() != 0 {
		t.Fatalf("stdout: %q", stdout.String())
	}
}

func TestMCPNoToken(t *testing.T) {
	t.Setenv("ASKD_TOKEN", "")
	var out bytes.Buffer
	err := run(context.Background(), []string{"mcp"}, strings.NewReader(""), &out, &out)
	if err == nil || !strings.Contains(err.Error(), "ASKD_TOKEN") {
		t.Fatalf("err %v", err)
	}
}
