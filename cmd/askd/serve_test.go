package main

import (
	"bytes"
	"context"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
)

// TestServeTellFlags reads --tell, --tell-command and --webhook-allow as askd
// serve does, without serving.
func TestServeTellFlags(t *testing.T) {
	resume := []string{"claude", "-p", "--resume", "{session}", "{prompt}"}
	tests := []struct {
		name      string
		sc        serveConfig
		tell      askd.Channel
		templates map[string][]string
		allow     askd.WebhookAllow
		wantErr   string
	}{
		{name: "defaults", sc: serveConfig{tell: "hook"}, tell: askd.Channel{Type: askd.ChannelHook}},
		{name: "templates, the default naming one",
			sc: serveConfig{tell: "command=resume", tellCommands: listFlag{
				`resume=["claude","-p","--resume","{session}","{prompt}"]`,
				`tmux=["tmux","send-keys","-t","{session}","--","{prompt}","Enter"] echo=["echo", "{id}"]`}},
			tell: askd.Channel{Type: askd.ChannelCommand, Name: "resume"},
			templates: map[string][]string{"resume": resume, "tmux": {"tmux", "send-keys", "-t", "{session}", "--", "{prompt}", "Enter"},
				"echo": {"echo", "{id}"}}},
		{name: "the operator's own argv", sc: serveConfig{tell: `command=["claude","-p","--resume","{session}","{prompt}"]`},
			tell: askd.Channel{Type: askd.ChannelCommand, Name: "default"}, templates: map[string][]string{"default": resume}},
		{name: "the operator's argv as words", sc: serveConfig{tell: `command=claude -p --resume {session} {prompt}`},
			tell: askd.Channel{Type: askd.ChannelCommand, Name: "default"}, templates: map[string][]string{"default": resume}},
		{name: "allow list", sc: serveConfig{tell: "hook", webhookAllow: listFlag{"127.0.0.1, Receiver.Internal.", "10.1.0.0/16", "[::1]"}},
			tell: askd.Channel{Type: askd.ChannelHook},
			allow: askd.WebhookAllow{Hosts: []string{"receiver.internal"},
				Nets: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("::1/128")}}},
		{name: "the default names no template", sc: serveConfig{tell: "command=resume"},
			wantErr: `--tell: command=resume names no template: define it with --tell-command resume=`},
		{name: "an unknown template", sc: serveConfig{tell: "command=resum", tellCommands: listFlag{`resume=["claude"]`}},
			wantErr: "--tell: command=resum names no template; defined: resume"},
		{name: "defined twice", sc: serveConfig{tell: "hook", tellCommands: listFlag{`a=["x"]`, `a=["y"]`}},
			wantErr: "--tell-command: a is defined twice"},
		{name: "argv not JSON", sc: serveConfig{tell: "hook", tellCommands: listFlag{`resume=claude -p`}},
			wantErr: "--tell-command: resume: ARGV is not a JSON array of strings"},
		{name: "a placeholder as the program", sc: serveConfig{tell: "hook", tellCommands: listFlag{`x=["{prompt}"]`}},
			wantErr: "--tell-command: x: argv[0]: the program may not hold a placeholder"},
		{name: "a name like an option", sc: serveConfig{tell: "hook", tellCommands: listFlag{`-x=["true"]`}},
			wantErr: "--tell-command: -x: name: must start with a letter or digit"},
		{name: "a bad allow entry", sc: serveConfig{tell: "hook", webhookAllow: listFlag{"http://x/"}},
			wantErr: `--webhook-allow: "http://x/" is not a host name, an IP address or a CIDR`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := tt.sc
			sc.cfg, sc.tellTimeout = app.DefaultConfig(), 1
			err := tellConfig(&sc)
			if tt.wantErr != "" {
				if err == nil || cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want a usage error saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(sc.cfg.Tell, tt.tell) {
				t.Errorf("tell %+v, want %+v", sc.cfg.Tell, tt.tell)
			}
			if !reflect.DeepEqual(sc.cfg.TellCommands, tt.templates) {
				t.Errorf("templates %q, want %q", sc.cfg.TellCommands, tt.templates)
			}
			if !reflect.DeepEqual(sc.cfg.WebhookAllow, tt.allow) {
				t.Errorf("allow %+v, want %+v", sc.cfg.WebhookAllow, tt.allow)
			}
		})
	}
}

// TestServeTellCommandFromEnv: ASKD_TELL_COMMAND defines templates like the
// flag, and --command-channels is gone.
func TestServeTellCommandFromEnv(t *testing.T) {
	t.Setenv("ASKD_TELL_COMMAND", `resume=["claude","-p","--resume","{session}","{prompt}"] tmux=["tmux","send-keys","-t","{session}","--","{prompt}"]`)
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"serve", "--tell", "command=nope"}, nil, &out, &errOut)
	if cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), "defined: resume, tmux") {
		t.Errorf("serve: %v, want a usage error naming the templates from the environment", err)
	}
	err = run(context.Background(), []string{"serve", "--command-channels=false"}, nil, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "unknown flag --command-channels") {
		t.Errorf("serve --command-channels: %v, want an unknown flag", err)
	}
}
