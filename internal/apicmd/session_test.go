package apicmd

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/testserver"
)

func TestSessionSetChannel(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{Config: app.Config{TellCommands: map[string][]string{
		"resume": {"claude", "-p", "--resume", "{session}", "{prompt}"},
		"tmux":   {"tmux", "send-keys", "-t", "{session}", "--", "{prompt}", "Enter"},
	}}})
	setChannel := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		args = append([]string{"session", "set-channel", "--url", srv.URL, "--token", srv.AgentToken}, args...)
		err := run(context.Background(), args, nil, &out, &errOut)
		return out.String() + errOut.String(), err
	}
	stored := func() askd.Channel {
		t.Helper()
		got, err := srv.App.SessionChannel(t.Context(), srv.AgentName, "s1")
		if err != nil {
			t.Fatal(err)
		}
		return *got
	}
	tests := []struct {
		name string
		args []string
		want askd.Channel
	}{
		{"command", []string{"s1", "--command", "resume"}, askd.Channel{Type: askd.ChannelCommand, Name: "resume"}},
		{"webhook, name last", []string{"--webhook", "https://hooks.test/x", "--secret", "s3", "s1"},
			askd.Channel{Type: askd.ChannelWebhook, URL: "https://hooks.test/x", Secret: "s3"}},
		{"hook", []string{"s1", "--hook"}, askd.Channel{Type: askd.ChannelHook}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := setChannel(tt.args...)
			if err != nil {
				t.Fatalf("%v: %v\n%s", tt.args, err, out)
			}
			if !strings.Contains(out, "session s1: told") {
				t.Errorf("output %q", out)
			}
			if got := stored(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("stored %+v, want %+v", got, tt.want)
			}
		})
	}

	// Refusals leave the hook channel set last as it was.
	refusals := []struct {
		name string
		args []string
		want string // in the error
		code int    // exit status
	}{
		{"two channels at once", []string{"s1", "--hook", "--webhook", "https://x.test/"}, "give one of", 2},
		{"a program instead of a template", []string{"s1", "--command", "sh", "id"}, "not a program and its arguments", 2},
		{"a program with options", []string{"s1", "--command", "sh", "-c", "id"}, "unknown flag -c", 2},
		{"unknown template", []string{"s1", "--command", "sh"}, `name: no command template "sh"; this server defines: resume, tmux`, 1},
		{"webhook to loopback", []string{"s1", "--webhook", "http://127.0.0.1:7777/api", "--secret", "k"}, "url: host 127.0.0.1: loopback address", 1},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			out, err := setChannel(tt.args...)
			if err == nil || cli.ExitCode(err) != tt.code || !strings.Contains(err.Error()+out, tt.want) {
				t.Errorf("%v: %v (exit %d)\n%s\nwant exit %d saying %q", tt.args, err, cli.ExitCode(err), out, tt.code, tt.want)
			}
			if got := stored(); !reflect.DeepEqual(got, askd.Channel{Type: askd.ChannelHook}) {
				t.Errorf("stored %+v after a refusal, want the hook channel as before", got)
			}
		})
	}
}
