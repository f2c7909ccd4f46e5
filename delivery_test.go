package askd_test

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
)

func TestChannelValidate(t *testing.T) {
	const onlyTemplates = `argv: not accepted: programs come only from the operator's command templates (askd serve --tell-command NAME=ARGV); choose one with {"type": "command", "name": NAME}`
	tests := []struct {
		name string
		in   askd.Channel
		want string
	}{
		{name: "hook", in: askd.Channel{Type: askd.ChannelHook}},
		{name: "webhook", in: askd.Channel{Type: askd.ChannelWebhook, URL: "https://hooks.example/x", Secret: "k"}},
		{name: "command by name", in: askd.Channel{Type: askd.ChannelCommand, Name: "resume"}},
		{name: "command with argv", in: askd.Channel{Type: askd.ChannelCommand, Argv: []string{"sh", "-c", "id > /tmp/x"}},
			want: `name: required with type command: the name of one of the operator's command templates (askd serve --tell-command NAME=ARGV); ` + onlyTemplates},
		{name: "command with a name and argv", in: askd.Channel{Type: askd.ChannelCommand, Name: "resume", Argv: []string{"sh"}},
			want: onlyTemplates},
		{name: "argv on a hook", in: askd.Channel{Type: askd.ChannelHook, Argv: []string{"sh"}}, want: onlyTemplates},
		{name: "name like an option", in: askd.Channel{Type: askd.ChannelCommand, Name: "-rf"},
			want: "name: must start with a letter or digit"},
		{name: "name with a slash", in: askd.Channel{Type: askd.ChannelCommand, Name: "bin/sh"},
			want: "name: only letters, digits, '.', '_' and '-'"},
		{name: "name on a webhook", in: askd.Channel{Type: askd.ChannelWebhook, URL: "https://x.example/", Secret: "k", Name: "resume"},
			want: "name: not allowed with type webhook"},
		{name: "ftp", in: askd.Channel{Type: askd.ChannelWebhook, URL: "ftp://x.example/", Secret: "k"},
			want: `url: must be an http or https URL, not "ftp"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantInvalid(t, tt.in.Validate(), tt.want) })
	}
}

func TestValidateTemplate(t *testing.T) {
	tests := []struct {
		name     string
		template string
		argv     []string
		want     string
	}{
		{name: "claude", template: "resume", argv: []string{"claude", "-p", "--resume", "{session}", "{prompt}"}},
		{name: "empty", template: "x", argv: nil, want: "argv: required, 1 to 32 items"},
		{name: "placeholder as the program", template: "x", argv: []string{"{prompt}"},
			want: "argv[0]: the program may not hold a placeholder: no agent value chooses what runs"},
		{name: "bad name", template: "", argv: []string{"true"}, want: "name: 1 to 64 characters, not 0"},
		{name: "NUL", template: "x", argv: []string{"true", "a\x00b"}, want: "argv[1]: may not contain the NUL character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantInvalid(t, askd.ValidateTemplate(tt.template, tt.argv), tt.want) })
	}
}

func TestExpandTemplate(t *testing.T) {
	claude := []string{"claude", "-p", "--resume", "{session}", "{prompt}"}
	tests := []struct {
		name     string
		template []string
		session  string
		prompt   string
		want     []string
		wantErr  string
	}{
		{name: "each value one argument", template: claude, session: "fix login", prompt: "a b; $(rm -rf /) `x`",
			want: []string{"claude", "-p", "--resume", "fix login", "a b; $(rm -rf /) `x`"}},
		{name: "inside an argument", template: []string{"tool", "--session={session}", "ask-{id}"}, session: "-x", prompt: "p",
			want: []string{"tool", "--session=-x", "ask-7"}},
		{name: "session like an option", template: claude, session: "--dangerously-skip-permissions", prompt: "hi",
			wantErr: `argv[3] ({session}): "--dangerously-skip-permissions" starts with "-"`},
		{name: "prompt like an option", template: claude, session: "s1", prompt: "-rf everything",
			wantErr: `argv[4] ({prompt}): "-rf everything" starts with "-"`},
		{name: "two values run together", template: []string{"tool", "{session}{prompt}"}, session: "", prompt: "-x",
			wantErr: `argv[1] ({session}{prompt}): "-x" starts with "-"`},
		{name: "after --", template: []string{"tmux", "send-keys", "-t", "=s1", "--", "{prompt}"}, prompt: "-1 is fine",
			want: []string{"tmux", "send-keys", "-t", "=s1", "--", "-1 is fine"}},
		{name: "the template's own option", template: []string{"tool", "-v", "{prompt}"}, prompt: "ok",
			want: []string{"tool", "-v", "ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := askd.ExpandTemplate(tt.template, tt.session, tt.prompt, 7)
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

func TestRefusedAddr(t *testing.T) {
	tests := []struct {
		ip   string
		want string // a word of the reason; "" for allowed
	}{
		{"127.0.0.1", "loopback"}, {"127.255.0.9", "loopback"}, {"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"}, {"::ffff:10.0.0.1", "private"},
		{"0.0.0.0", "unspecified"}, {"::", "unspecified"}, {"0.1.2.3", "this network"},
		{"10.0.0.1", "private"}, {"172.16.5.4", "private"}, {"192.168.1.1", "private"}, {"fd00::1", "private"},
		{"169.254.169.254", "link-local"}, {"fe80::1", "link-local"},
		{"100.64.0.1", "carrier-grade NAT"}, {"224.0.0.1", "multicast"}, {"ff02::1", "multicast"},
		{"255.255.255.255", "broadcast"}, {"64:ff9b::7f00:1", "loopback (through NAT64)"},
		{"2002:a00:1::", "private (through 6to4)"}, {"::127.0.0.1", "IPv4-compatible"},
		{"8.8.8.8", ""}, {"93.184.215.14", ""}, {"2606:4700::1111", ""}, {"172.32.0.1", ""}, {"2002:808:808::", ""},
	}
	for _, tt := range tests {
		t.Run(tt.ip, func(t *testing.T) {
			got := askd.RefusedAddr(netip.MustParseAddr(tt.ip))
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("RefusedAddr(%s) = %q, want %q", tt.ip, got, tt.want)
			}
		})
	}
}

func TestCheckURL(t *testing.T) {
	allow := askd.WebhookAllow{Hosts: []string{"receiver.internal"}, Nets: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}}
	tests := []struct {
		url  string
		want string
	}{
		{"http://169.254.169.254/latest/meta-data", "host 169.254.169.254: link-local address"},
		{"http://[::1]:8080/", "host ::1: loopback address"},
		{"http://localhost:7777/api", "host localhost: names this machine (loopback)"},
		{"http://LocalHost./", "host LocalHost.: names this machine (loopback)"},
		{"http://app.localhost/", "names this machine (loopback)"},
		{"http://0.0.0.0:22/", "host 0.0.0.0: unspecified address"},
		{"http://127.1/", "host 127.1: loopback address"},
		{"http://2130706433/", "host 2130706433: loopback address"},
		{"http://0x7f.0.0.1/", "loopback"},
		{"http://0177.0.0.1/", "loopback"},
		{"http://10.0.0.1/", "host 10.0.0.1: private address"},
		{"http://[::ffff:127.0.0.1]/", "host ::ffff:127.0.0.1: loopback address"},
		{"http://[fe80::1%25eth0]/", "link-local"},
		{"https://hooks.example/tell", ""},
		{"https://8.8.8.8/", ""},
		{"http://10.1.2.3/", ""},           // an allowed network
		{"http://receiver.internal/", ""},  // an allowed name
		{"http://RECEIVER.internal./", ""}, // the same name
		{"http://10.2.0.1/", "private"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			err := allow.CheckURL("url", tt.url)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			msg := askd.ErrorMessage(err)
			if askd.ErrorCode(err) != askd.EINVALID || !strings.HasPrefix(msg, "url: ") || !strings.Contains(msg, tt.want) || !strings.Contains(msg, "--webhook-allow") {
				t.Errorf("got %v, want EINVALID url: ...%s... --webhook-allow", err, tt.want)
			}
		})
	}
}
