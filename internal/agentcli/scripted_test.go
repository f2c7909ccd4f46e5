package agentcli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// models is the one scripted-model server the tests of Copilot, Qwen Code,
// Gemini CLI and OpenCode share: each run gets a script of its own under
// /s/ID/ (modelScript), and the server speaks each API shape those CLIs
// use, chosen by the request's path: OpenAI chat completions
// (/chat/completions: Copilot's BYOK provider, Qwen Code, OpenCode's
// openai-compatible provider) and the Gemini API
// (/v1beta/models/M:streamGenerateContent: Gemini CLI). It starts with the
// first script and stops when the test binary ends (TestMain).
var models struct {
	once    sync.Once
	srv     *httptest.Server
	mu      sync.Mutex
	scripts map[string]*modelScript
	n       int
}

// stopModels stops the shared scripted-model server, if one started.
func stopModels() {
	if models.srv != nil {
		models.srv.Close()
	}
}

// turnFunc gives a scripted model's reply to agent turn i (from 0): text,
// tool calls, or both, as blocks.
type turnFunc func(i int, req *modelRequest) []block

// modelScript is one CLI run's scripted model: its agent turns (requests
// that offer the model tools) go to turn in order; side requests (titles,
// summaries, JSON checks) get a short reply. It records every request.
type modelScript struct {
	id   string
	turn turnFunc

	mu      sync.Mutex
	reqs    []*modelRequest // every request, agent turns and side requests
	replied int             // agent turns replied to
	next    chan struct{}   // closed at the next reply to an agent turn
}

// newModel registers a script on the shared server for one CLI run; its
// URLs are chatURL and geminiURL.
func newModel(t *testing.T, turn turnFunc) *modelScript {
	t.Helper()
	models.once.Do(func() {
		models.scripts = map[string]*modelScript{}
		models.srv = httptest.NewServer(http.HandlerFunc(serveModels))
	})
	models.mu.Lock()
	defer models.mu.Unlock()
	models.n++
	m := &modelScript{id: fmt.Sprint(models.n), turn: turn, next: make(chan struct{})}
	models.scripts[m.id] = m
	t.Cleanup(func() {
		if t.Failed() {
			m.logRequests(t)
		}
	})
	return m
}

// callThen is the usual script: the model calls tool with args, then, once
// it has read what the call returned, says text and ends its turn.
func callThen(tool string, args any, text string) turnFunc {
	return func(i int, req *modelRequest) []block {
		if i == 0 {
			return []block{{Tool: tool, Input: args}}
		}
		return []block{{Text: text}}
	}
}

// chatURL is the base URL of the script's OpenAI chat completions API
// (requests go to chatURL/chat/completions).
func (m *modelScript) chatURL() string { return models.srv.URL + "/s/" + m.id + "/v1" }

// geminiURL is the base URL of the script's Gemini API (requests go to
// geminiURL/v1beta/models/...).
func (m *modelScript) geminiURL() string { return models.srv.URL + "/s/" + m.id }

// agentTurns returns the requests that offered the model tools, in order.
func (m *modelScript) agentTurns() []*modelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.agentTurnsLocked()
}

func (m *modelScript) agentTurnsLocked() []*modelRequest {
	var turns []*modelRequest
	for _, r := range m.reqs {
		if len(r.Tools) > 0 {
			turns = append(turns, r)
		}
	}
	return turns
}

func (m *modelScript) logRequests(t *testing.T) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, r := range m.reqs {
		t.Logf("model request %d (%s, %d tools): since the model's last reply: %.800s", i, r.path, len(r.Tools), r.sinceReply())
	}
}

// reply records req and returns the blocks of the reply to it.
func (m *modelScript) reply(req *modelRequest) []block {
	req.at = time.Now()
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	i := -1
	if len(req.Tools) > 0 {
		i = len(m.agentTurnsLocked()) - 1
	}
	m.mu.Unlock()
	if i < 0 {
		return []block{{Text: "ok"}}
	}
	blocks := m.turn(i, req)
	m.mu.Lock()
	m.replied++
	close(m.next)
	m.next = make(chan struct{})
	m.mu.Unlock()
	return blocks
}

// waitReplied waits until the model has replied to n agent turns, failing
// the test if run ends first.
func (m *modelScript) waitReplied(t *testing.T, run *agentRun, n int) {
	t.Helper()
	timeout := time.After(3 * time.Minute)
	for {
		m.mu.Lock()
		replied, next := m.replied, m.next
		m.mu.Unlock()
		if replied >= n {
			return
		}
		select {
		case <-next:
		case <-run.exited:
			m.mu.Lock()
			replied = m.replied
			m.mu.Unlock()
			if replied < n {
				t.Fatalf("%s ended after %d agent turns, want %d", run.name, replied, n)
			}
		case <-timeout:
			t.Fatalf("%d agent turns within 3 minutes, want %d", replied, n)
		}
	}
}

// modelRequest is one request a CLI sent its scripted model, in any shape,
// as far as the tests read it.
type modelRequest struct {
	path     string
	Tools    []string          // the names of the tools offered to the model
	Messages []json.RawMessage // chat messages, or Gemini contents, in order
	replied  func(json.RawMessage) bool
	raw      []byte    // the whole body
	at       time.Time // when it arrived
}

// hasTool reports whether the request offers the model a tool of that name.
func (r *modelRequest) hasTool(name string) bool {
	for _, n := range r.Tools {
		if n == name {
			return true
		}
	}
	return false
}

// offers reports whether the request offers the model the tool, or names
// it for the model to load: Qwen Code offers a few tools up front and the
// rest behind its tool_search, which a model may call by name at once.
func (r *modelRequest) offers(name string) bool {
	return r.hasTool(name) || bytes.Contains(r.raw, []byte(name))
}

// sinceReply is the text of every message after the model's last reply
// (its tool calls or words): the tool results, hook reasons and prompts it
// reads now. Text is each string in those messages, unescaped, a line each.
func (r *modelRequest) sinceReply() string {
	start := 0
	for i, m := range r.Messages {
		if r.replied(m) {
			start = i + 1
		}
	}
	var texts []string
	for _, m := range r.Messages[start:] {
		var v any
		if json.Unmarshal(m, &v) == nil {
			texts = appendStrings(texts, v)
		}
	}
	return strings.Join(texts, "\n")
}

// appendStrings appends every string in the JSON value v.
func appendStrings(texts []string, v any) []string {
	switch v := v.(type) {
	case string:
		return append(texts, v)
	case []any:
		for _, e := range v {
			texts = appendStrings(texts, e)
		}
	case map[string]any:
		for _, e := range v {
			texts = appendStrings(texts, e)
		}
	}
	return texts
}

func serveModels(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/s/")
	id, path, _ := strings.Cut(rest, "/")
	models.mu.Lock()
	m := models.scripts[id]
	models.mu.Unlock()
	if !ok || m == nil || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	switch {
	case strings.HasSuffix(path, "/chat/completions"):
		serveChat(w, r, m)
	case strings.HasPrefix(path, "v1beta/models/"):
		serveGemini(w, r, m, strings.TrimPrefix(path, "v1beta/models/"))
	default:
		http.NotFound(w, r)
	}
}

// logTimes logs when each of the script's requests arrived and when run
// ended, from its start.
func (m *modelScript) logTimes(t *testing.T, run *agentRun) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	var at []string
	for _, r := range m.reqs {
		kind := "side request"
		if len(r.Tools) > 0 {
			kind = "turn"
		}
		at = append(at, fmt.Sprintf("%s %s", kind, r.at.Sub(run.started).Round(time.Millisecond)))
	}
	t.Logf("%s: model requests at %s; ended at %s, %s of CPU", run.name, strings.Join(at, ", "),
		run.ended.Sub(run.started).Round(time.Millisecond), run.cpu().Round(time.Millisecond))
}
