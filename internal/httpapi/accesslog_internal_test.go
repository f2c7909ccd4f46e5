package httpapi

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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

// A response of known length (writeJSON's) reaches the client before its
// access line is written: a log whose write blocks until the client has the
// response does not hold the response back.
func TestAccessLineAfterResponse(t *testing.T) {
	read := make(chan struct{})
	logs := &heldLog{read: read}
	s := &Server{log: slog.New(slog.NewJSONHandler(logs, nil))}
	served := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.logged(w, r, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, map[string]bool{"ok": true}) })
		close(served)
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	close(read)
	if err != nil {
		t.Fatal(err)
	}
	<-served
	if string(body) != "{\"ok\":true}\n" || resp.ContentLength != int64(len(body)) || len(resp.TransferEncoding) != 0 {
		t.Errorf("body %q, Content-Length %d, Transfer-Encoding %v: want the JSON with its length", body, resp.ContentLength, resp.TransferEncoding)
	}
	if logs.early {
		t.Error("the access line was written before the client had the response")
	}
	if !strings.Contains(logs.String(), `"status":200`) {
		t.Errorf("no access line with status 200: %q", logs.String())
	}
}

// heldLog is a log whose first write waits until read is closed (the client
// has its response), or 10 s: then it notes that the line came first.
type heldLog struct {
	read  chan struct{}
	early bool
	strings.Builder
}

func (l *heldLog) Write(p []byte) (int, error) {
	select {
	case <-l.read:
	case <-time.After(10 * time.Second):
		l.early = true
	}
	return l.Builder.Write(p)
}
