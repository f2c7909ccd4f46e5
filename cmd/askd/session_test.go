package main

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/testserver"
)

func TestSessionSetChannel(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	tests := []struct {
		name string
		args []string
		want askd.Channel
	}{
		{"command", []string{"s1", "--command", "claude", "-p", "--resume", "{session}", "{prompt}"},
			askd.Channel{Type: askd.ChannelCommand, Argv: []string{"claude", "-p", "--resume", "{session}", "{prompt}"}}},
		{"webhook, name last", []string{"--webhook", "https://hooks.test/x", "--secret", "s3", "s1"},
			askd.Channel{Type: askd.ChannelWebhook, URL: "https://hooks.test/x", Secret: "s3"}},
		{"hook", []string{"s1", "--hook"}, askd.Channel{Type: askd.ChannelHook}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append([]string{"session", "set-channel", "--url", srv.URL, "--token", srv.AgentToken}, tt.args...)
			if err := run(context.Background(), args, nil, &out, &errOut); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, errOut.String())
			}
			if !strings.Contains(out.String(), "session s1: told") {
				t.Errorf("output %q", out.String())
			}
			got, err := srv.App.SessionChannel(t.Context(), srv.AgentName, "s1")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("stored %+v, want %+v", *got, tt.want)
			}
		})
	}
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"session", "set-channel", "--url", srv.URL, "--token", srv.AgentToken, "s1", "--hook", "--webhook", "https://x.test/"}, nil, &out, &errOut)
	if exitCode(err) != 2 {
		t.Errorf("two channels at once: %v, want a usage error", err)
	}
}
