package main

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
)

// TestServeNotifyWebhookSecret: --notify-webhook-secret signs every
// --notify-webhook notifier and no other; without one it is a usage error.
func TestServeNotifyWebhookSecret(t *testing.T) {
	tests := []struct {
		name    string
		sc      serveConfig
		want    []askd.Channel
		wantErr string
	}{
		{name: "every webhook notifier signed, no other",
			sc: serveConfig{tell: "hook", notifyWebhookSecret: "s3cret", notifyWebhook: listFlag{"https://a.example/hook,https://b.example/hook"},
				notifySlack: listFlag{"https://hooks.slack.example/x"}},
			want: []askd.Channel{{Type: askd.NotifyWebhook, URL: "https://a.example/hook", Secret: "s3cret"},
				{Type: askd.NotifyWebhook, URL: "https://b.example/hook", Secret: "s3cret"},
				{Type: askd.NotifySlack, URL: "https://hooks.slack.example/x"}}},
		{name: "none", sc: serveConfig{tell: "hook", notifyWebhook: listFlag{"https://a.example/hook"}},
			want: []askd.Channel{{Type: askd.NotifyWebhook, URL: "https://a.example/hook"}}},
		{name: "without a webhook notifier", sc: serveConfig{tell: "hook", notifyWebhookSecret: "s3cret", notifyNtfy: listFlag{"https://ntfy.example/t"}},
			wantErr: "--notify-webhook-secret: only with --notify-webhook"},
		{name: "too long", sc: serveConfig{tell: "hook", notifyWebhookSecret: strings.Repeat("k", askd.MaxSecretBytes+1), notifyWebhook: listFlag{"https://a.example/hook"}},
			wantErr: "--notify-webhook-secret: 257 bytes, at most 256"},
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
			if !reflect.DeepEqual(sc.cfg.Notifiers, tt.want) {
				t.Errorf("notifiers %+v, want %+v", sc.cfg.Notifiers, tt.want)
			}
		})
	}
}

// TestServeHelpNamesNotifySecretVariable: askd serve --help lists the flag
// with the variable that sets it, where a secret is better kept.
func TestServeHelpNamesNotifySecretVariable(t *testing.T) {
	var out, errOut bytes.Buffer
	run(context.Background(), []string{"serve", "--help"}, nil, &out, &errOut)
	if !strings.Contains(out.String(), "--notify-webhook-secret string  (ASKD_NOTIFY_WEBHOOK_SECRET)") {
		t.Errorf("serve --help lists no --notify-webhook-secret with its variable:\n%s", out.String())
	}
}
