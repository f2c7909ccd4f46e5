package main

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

// TestParseFlags: -h prints the usage on stdout; the load tool refuses any
// server but this machine's, and a command line it cannot read, as usage
// errors (exit 2), before it sends anything.
func TestParseFlags(t *testing.T) {
	tokens := []string{"--agent-token", "a", "--human-token", "h"}
	tests := []struct {
		name    string
		args    []string
		help    bool   // want flag.ErrHelp and the usage on stdout
		wantErr string // want a usageError containing this; "" for none
	}{
		{name: "help", args: []string{"-h"}, help: true},
		{name: "the defaults", args: tokens},
		{name: "localhost", args: append([]string{"--url", "http://localhost:7777"}, tokens...)},
		{name: "IPv6 loopback", args: append([]string{"--url", "http://[::1]:7777"}, tokens...)},
		{name: "another machine", args: append([]string{"--url", "http://10.0.0.1:7777"}, tokens...), wantErr: "not a loopback address"},
		{name: "an inbox elsewhere", args: append([]string{"--inbox-url", "http://example.com"}, tokens...), wantErr: "not a loopback address"},
		{name: "no tokens", args: nil, wantErr: "--agent-token and --human-token are required"},
		{name: "too many agents", args: append([]string{"--agents", "1,2000"}, tokens...), wantErr: "is not a count from 1 to 1024"},
		{name: "an unknown flag", args: []string{"--bogus"}, wantErr: "askd-bench -h lists its flags"},
		{name: "an argument", args: append([]string{"latency"}, tokens...), wantErr: "unexpected argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			_, err := parseFlags(tt.args, &out)
			var u usageError
			switch {
			case tt.help:
				if !errors.Is(err, flag.ErrHelp) || !strings.HasPrefix(out.String(), "Usage: askd-bench ") {
					t.Errorf("err %v, stdout %q; want flag.ErrHelp and the usage", err, out.String())
				}
			case tt.wantErr == "":
				if err != nil {
					t.Errorf("err %v; want none", err)
				}
			case !errors.As(err, &u) || !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("err %v; want a usage error containing %q", err, tt.wantErr)
			}
		})
	}
}
