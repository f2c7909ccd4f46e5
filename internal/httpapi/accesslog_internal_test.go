package httpapi

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/askd-dev/askd/internal/response"
)

// A handler that takes its connection over tells the request's access line
// (response.AccessLine): the line is written once, when the handler ends it,
// with the route, the status it sent, and the method and tool it noted.
func TestAccessLineHijacked(t *testing.T) {
	tests := []struct {
		name   string
		sent   string
		status int
	}{
		{"a response", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", http.StatusOK},
		{"none", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs strings.Builder // written by End, then by nothing: read after both are done
			s := &Server{log: slog.New(slog.NewJSONHandler(&logs, nil))}
			ended, served := make(chan struct{}), make(chan struct{})
			mux := http.NewServeMux()
			mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
				line := response.AccessLineOf(r.Context())
				line.NoteRPC("tools/call", "ask_user_question")
				io.Copy(io.Discard, r.Body)
				conn, _, err := http.NewResponseController(w).Hijack()
				if err != nil {
					t.Error(err)
					close(ended)
					return
				}
				line.Hijacked()
				go func() {
					if tt.sent != "" {
						conn.Write([]byte(tt.sent))
					}
					conn.Close()
					line.End(tt.status)
					line.End(http.StatusTeapot) // only the first counts
					close(ended)
				}()
			})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s.logged(w, r, mux.ServeHTTP)
				close(served)
			}))
			defer srv.Close()
			resp, err := http.Post(srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
			if err == nil {
				resp.Body.Close()
			}
			<-ended
			<-served
			lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
			if len(lines) != 1 {
				t.Fatalf("%d lines, want 1: %q", len(lines), lines)
			}
			var l map[string]any
			if err := json.Unmarshal([]byte(lines[0]), &l); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"route": "POST /mcp", "method": "POST", "status": float64(tt.status), "rpc": "tools/call", "tool": "ask_user_question", "role": "none"}
			for k, v := range want {
				if l[k] != v {
					t.Errorf("%s: %v, want %v", k, l[k], v)
				}
			}
		})
	}
}
