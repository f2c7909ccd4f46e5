package app_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// TestTellArgv: what a command delivery runs is the operator's template, its
// placeholders each one argument; anything else is refused, saying why.
func TestTellArgv(t *testing.T) {
	svc := newService(t, app.Config{TellCommands: map[string][]string{
		"resume": {"claude", "-p", "--resume", "{session}", "{prompt}"},
		"tmux":   {"tmux", "send-keys", "-t", "{session}", "--", "{prompt}", "Enter"},
	}})
	claimed := func(session string, ch askd.Channel, text string) *app.Claimed {
		return &app.Claimed{Delivery: &askd.Delivery{Kind: askd.DeliveryTell, AskID: 12, Session: session, Channel: ch}, Text: text}
	}
	resume := askd.Channel{Type: askd.ChannelCommand, Name: "resume"}
	tests := []struct {
		name    string
		claimed *app.Claimed
		want    []string
		wantErr string
	}{
		{name: "the template", claimed: claimed("fix-login", resume, "The user answered: a b $(id)"),
			want: []string{"claude", "-p", "--resume", "fix-login", "The user answered: a b $(id)"}},
		{name: "a stored argv channel", claimed: claimed("s1", askd.Channel{Type: askd.ChannelCommand, Argv: []string{"sh", "-c", "id"}}, "x"),
			wantErr: "argv: this command channel holds a program chosen by an agent token"},
		{name: "an argv beside a name", claimed: claimed("s1", askd.Channel{Type: askd.ChannelCommand, Name: "resume", Argv: []string{"sh"}}, "x"),
			wantErr: "argv: this command channel holds a program chosen by an agent token"},
		{name: "a template this process lacks", claimed: claimed("s1", askd.Channel{Type: askd.ChannelCommand, Name: "gone"}, "x"),
			wantErr: `name: no command template "gone"; this server defines: resume, tmux`},
		{name: "a session like an option", claimed: claimed("--dangerously-skip-permissions", resume, "x"),
			wantErr: `argv[3] ({session}): "--dangerously-skip-permissions" starts with "-"`},
		{name: "a prompt like an option", claimed: claimed("s1", resume, "-p yes"),
			wantErr: `argv[4] ({prompt}): "-p yes" starts with "-"`},
		{name: "a prompt after --", claimed: claimed("=s1", askd.Channel{Type: askd.ChannelCommand, Name: "tmux"}, "-p yes"),
			want: []string{"tmux", "send-keys", "-t", "=s1", "--", "-p yes", "Enter"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := svc.TellArgv(tt.claimed)
			if tt.wantErr != "" {
				if askd.ErrorCode(err) != askd.EINVALID || !strings.Contains(askd.ErrorMessage(err), tt.wantErr) {
					t.Fatalf("got %q, %v; want EINVALID saying %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestSetChannelChecks: templates by name only, known ones only; webhooks
// to obviously refused hosts are refused unless allowed, and the operator's
// own --tell webhook is not held to the guard.
func TestSetChannelChecks(t *testing.T) {
	agent := askd.Caller{Name: "agent-1", Role: askd.RoleAgent, Session: "s1"}
	tests := []struct {
		name    string
		cfg     app.Config
		ch      askd.Channel
		wantErr string
	}{
		{name: "no templates", ch: askd.Channel{Type: askd.ChannelCommand, Name: "resume"},
			wantErr: `name: no command template "resume": this server defines none, so command channels are unavailable`},
		{name: "a known template", cfg: app.Config{TellCommands: map[string][]string{"resume": {"claude"}}},
			ch: askd.Channel{Type: askd.ChannelCommand, Name: "resume"}},
		{name: "loopback", ch: askd.Channel{Type: askd.ChannelWebhook, URL: "http://127.0.0.1:9/x", Secret: "k"},
			wantErr: "url: host 127.0.0.1: loopback address"},
		{name: "loopback allowed", cfg: app.Config{WebhookAllow: askd.WebhookAllow{Hosts: []string{"127.0.0.1"}}},
			ch: askd.Channel{Type: askd.ChannelWebhook, URL: "http://127.0.0.1:9/x", Secret: "k"}},
		{name: "the operator's --tell webhook", cfg: app.Config{Tell: askd.Channel{Type: askd.ChannelWebhook, URL: "http://127.0.0.1:9/x", Secret: "op"}},
			ch: askd.Channel{Type: askd.ChannelWebhook, URL: "http://127.0.0.1:9/x", Secret: "k"}},
		{name: "another port than the operator's", cfg: app.Config{Tell: askd.Channel{Type: askd.ChannelWebhook, URL: "http://127.0.0.1:9/x", Secret: "op"}},
			ch: askd.Channel{Type: askd.ChannelWebhook, URL: "http://127.0.0.1:6379/x", Secret: "k"}, wantErr: "url: host 127.0.0.1: loopback address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := newService(t, tt.cfg)
			err := svc.SetChannel(t.Context(), agent, "s1", &tt.ch)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if askd.ErrorCode(err) != askd.EINVALID || !strings.Contains(askd.ErrorMessage(err), tt.wantErr) {
				t.Fatalf("got %v, want EINVALID saying %q", err, tt.wantErr)
			}
			want := askd.Channel{Type: askd.ChannelHook}
			if tt.cfg.Tell.Type != "" {
				want = tt.cfg.Tell
			}
			if ch, err := svc.SessionChannel(t.Context(), agent.Name, "s1"); err != nil || !reflect.DeepEqual(*ch, want) {
				t.Errorf("channel after a refusal: %+v, %v; want the default %+v", ch, err, want)
			}
		})
	}
}
