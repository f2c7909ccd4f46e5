package mcpserver_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/mcpserver"
	"github.com/askd-dev/askd/internal/testserver"
)

// The go-sdk logs three lines at info for each request it serves ("server
// connecting", "server session connected", "server session disconnected");
// askd passes it its logger only at debug level, so an operator's info log
// holds none of them.
func TestSDKLogsOnlyAtDebug(t *testing.T) {
	tests := []struct {
		name  string
		level slog.Level
		want  bool // the SDK's lines are in the log
	}{
		{"info", slog.LevelInfo, false},
		{"debug", slog.LevelDebug, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf testserver.SyncBuffer
			log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tt.level}))
			srv := testserver.Start(t, testserver.Options{MCP: func(svc *app.Service) http.Handler {
				return mcpserver.Handler(svc, mcpserver.Options{Logger: log})
			}})
			// An old revision initializes through the SDK; the tool calls
			// askd serves itself.
			cs := connect(t, srv, transport{name: "http-2025-06-18", version: "2025-06-18"}, "sdk-log", nil)
			call(t, cs, "check_ask", map[string]any{})
			// Logged before the SDK answered initialize, so present by now.
			got := buf.String()
			if has := strings.Contains(got, "server session connected"); has != tt.want {
				t.Fatalf("at %s the SDK's lines are in the log: %v, want %v\n%s", tt.level, has, tt.want, got)
			}
			if tt.want && !strings.Contains(got, "from=go-sdk") {
				t.Errorf("the SDK's lines do not say where they come from:\n%s", got)
			}
		})
	}
}
