package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/httpapi"
	"github.com/askd-dev/askd/internal/testserver"
)

// refusal fails unless an error reply is what every refusal must be: 400,
// code EINVALID, and a message "path: rule" naming the field.
func refusal(t *testing.T, what string, status int, body []byte) {
	t.Helper()
	var e httpapi.ErrorBody
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("%s: %d with a body that is not an error: %q", what, status, body)
	}
	if status != http.StatusBadRequest || e.Code != askd.EINVALID {
		t.Fatalf("%s: %d %s %q, want 400 %s", what, status, e.Code, e.Error, askd.EINVALID)
	}
	path, rule, ok := strings.Cut(e.Error, ": ")
	if !ok || path == "" || strings.TrimSpace(rule) == "" {
		t.Fatalf("%s: message %q is not of the form \"path: rule\"", what, e.Error)
	}
}

// fuzzServer is a real askd whose asks time out at once, so that fuzzed hook
// calls creating asks never block.
func fuzzServer(f *testing.F) *testserver.Server {
	return testserver.Start(f, testserver.Options{Config: app.Config{
		QuestionTimeout: time.Millisecond, ApprovalTimeout: time.Millisecond, MaxPending: 1 << 30,
	}})
}

// send makes a request and returns the status and body.
func send(t *testing.T, ctx context.Context, method, url, token string, header http.Header, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return -1, nil // not a request a client could send
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

func FuzzParseWait(f *testing.F) {
	for _, s := range []string{"", "0", "30", "30s", "10m", "1h", "1h0m1s", "-1s", "3601", "1e3", "1.5s", "9223372036854775807", "99999999999999999999s", "18446744074", "s", " 30s", "+5s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, err := httpapi.ParseWait(v)
		if err != nil {
			if askd.ErrorCode(err) != askd.EINVALID || !strings.HasPrefix(askd.ErrorMessage(err), "wait: ") {
				t.Fatalf("ParseWait(%q): %v (%T), want an EINVALID \"wait: ...\"", v, err, err)
			}
			return
		}
		if d < 0 || d > httpapi.MaxWait {
			t.Fatalf("ParseWait(%q) = %s, outside 0 to %s", v, d, httpapi.MaxWait)
		}
		if v == "" && d != 0 {
			t.Fatalf("ParseWait(\"\") = %s", d)
		}
		// Whole seconds are that many seconds, never a product that wrapped.
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && (n > int64(httpapi.MaxWait/time.Second) || d != time.Duration(n)*time.Second) {
			t.Fatalf("ParseWait(%q) = %s, want %d s", v, d, n)
		}
	})
}

var hookSeeds = []string{
	`{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Which?","header":"H","options":[{"label":"a"},{"label":"b"}],"multiSelect":false}]},"tool_use_id":"toolu_1"}`,
	`{"session_id":"s1","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"}}`,
	`{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":true}`,
	`{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":{}}`,
	`{"hook_event_name":"PreToolUse","tool_name":"AskUserQuestion","tool_input":[1]}`,
	`{"session_id":"a/b","hook_event_name":"Stop"}`,
	`{"session_id":7}`, `null`, ``, `[`, `{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":"x"}`,
}

// FuzzClaudeHook posts fuzzed Claude Code hook input to /hooks/claude: never
// a 5xx, and a refusal names the field.
func FuzzClaudeHook(f *testing.F) {
	for _, s := range hookSeeds {
		f.Add([]byte(s), false)
	}
	f.Add([]byte(hookSeeds[0]), true)
	srv := fuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte, withSession bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h := http.Header{"Content-Type": {"application/json"}}
		if withSession {
			h.Set(httpapi.SessionHeader, "fuzz-hooks")
		}
		status, data := send(t, ctx, http.MethodPost, srv.URL+"/hooks/claude", srv.AgentToken, h, body)
		switch {
		case status == http.StatusOK:
			if !json.Valid(data) {
				t.Fatalf("200 with a body that is not JSON: %q", data)
			}
		default:
			refusal(t, "hook", status, data)
		}
	})
}

// FuzzSnoozeBody posts fuzzed snooze bodies for a pending ask.
func FuzzSnoozeBody(f *testing.F) {
	for _, s := range []string{`{"for":"2h"}`, `{"until":"2030-01-02T15:04:05Z"}`, `{"until":"2030-01-02T15:04:05+02:00"}`, `{"for":"-1h"}`, `{"for":"0s"}`,
		`{}`, `{"until":"tomorrow"}`, `{"for":"2h","until":"2030-01-02T15:04:05Z"}`, `{"for":7}`, `{"until":null}`, `{"for":"2h","x":1}`, ``, `{"until":"0000-01-01T00:00:00Z"}`, `{"for":"9999999h"}`} {
		f.Add([]byte(s))
	}
	srv := fuzzServer(f)
	agent := srv.Agent("fuzz-snooze")
	a, err := agent.Create(context.Background(), &askd.AskInput{Kind: askd.KindAction, Title: "snooze me"}, 0)
	if err != nil {
		f.Fatal(err)
	}
	url := fmt.Sprintf("%s/api/asks/%d/snooze", srv.URL, a.ID)
	f.Fuzz(func(t *testing.T, body []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		status, data := send(t, ctx, http.MethodPost, url, srv.HumanToken, http.Header{"Content-Type": {"application/json"}}, body)
		if status != http.StatusOK {
			refusal(t, "snooze", status, data)
		}
	})
}

// FuzzChannelBody puts fuzzed channel bodies for a session.
func FuzzChannelBody(f *testing.F) {
	for _, s := range []string{`{"type":"hook"}`, `{"type":"webhook","url":"http://127.0.0.1:1/x","secret":"s"}`, `{"type":"command","argv":["true","{prompt}"]}`,
		`{}`, `{"type":"webhook"}`, `{"type":"command","argv":[""]}`, `{"type":"hook","session":"x"}`, `{"type":"slack","url":"http://x"}`, `[]`, ``} {
		f.Add([]byte(s), "fuzz-channel")
	}
	f.Add([]byte(`{"type":"hook"}`), "a b")
	f.Add([]byte(`{"type":"hook"}`), "%2e%2e")
	srv := fuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte, session string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		status, data := send(t, ctx, http.MethodPut, srv.URL+"/api/sessions/"+url.PathEscape(session)+"/channel", srv.AgentToken, http.Header{"Content-Type": {"application/json"}}, body)
		switch status {
		case -1, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusMovedPermanently, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
			// Not this route: the session is not one path segment (an
			// escaped session is, so this is rare: "." and "..").
		case http.StatusOK:
			if bytes.Contains(data, []byte(`"secret":"`)) && !bytes.Contains(data, []byte(`"secret":"******"`)) {
				t.Fatalf("reply shows the secret: %s", data)
			}
		default:
			refusal(t, "channel", status, data)
		}
	})
}

// FuzzLastEventID opens the event stream with a fuzzed Last-Event-ID: a bad
// one is refused naming the header, a good one opens the stream.
func FuzzLastEventID(f *testing.F) {
	for _, s := range []string{"0", "1", "42", "-1", "", " 1", "1e3", "0x10", "9223372036854775807", "9223372036854775808", "abc"} {
		f.Add(s)
	}
	srv := fuzzServer(f)
	f.Fuzz(func(t *testing.T, id string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/events", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+srv.HumanToken)
		if id != "" {
			req.Header["Last-Event-Id"] = []string{id}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return // not a header value a client can send
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("200 with Content-Type %q", ct)
			}
			return
		}
		data, _ := io.ReadAll(resp.Body)
		refusal(t, "Last-Event-ID "+id, resp.StatusCode, data)
		if !strings.HasPrefix(string(data), `{"error":"Last-Event-ID: `) {
			t.Fatalf("refusal %s does not name Last-Event-ID", data)
		}
	})
}
