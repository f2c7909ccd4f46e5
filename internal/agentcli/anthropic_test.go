package agentcli_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// messagesRequest is what Claude Code sends to POST /v1/messages, as far as
// the scripts read it.
type messagesRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	System   json.RawMessage   `json:"system"`
	Messages []json.RawMessage `json:"messages"`
	Tools    []struct {
		Name string `json:"name"`
	} `json:"tools"`
	raw []byte // the whole body
}

// hasTool reports whether the request offers the model a tool of that name:
// the agent's own turns do; side requests (titles, summaries) offer none.
func (r *messagesRequest) hasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// lastMessage is the request's last message as text: its role, then each
// content block (text, tool_result content) as JSON, for a script to look
// for what it expects.
func (r *messagesRequest) lastMessage() string {
	if len(r.Messages) == 0 {
		return ""
	}
	return string(r.Messages[len(r.Messages)-1])
}

// block is one content block of a scripted model reply: text, or a tool use.
type block struct {
	Text  string
	Tool  string // the tool's name; Input its arguments
	Input any
}

// fakeClaudeModel is a scripted Anthropic Messages endpoint on loopback for
// the real Claude Code CLI (ANTHROPIC_BASE_URL): each agent turn (a request
// that offers the model tools) goes to turn, with its index from 0, which
// returns the reply's blocks; a reply with a tool use stops with tool_use,
// else end_turn. Side requests (no tools) get a short text. It records every
// agent turn for the test to read.
type fakeClaudeModel struct {
	URL string
	t   *testing.T

	mu    sync.Mutex
	turns []*messagesRequest
	turn  func(i int, req *messagesRequest) []block
}

func newFakeClaudeModel(t *testing.T, turn func(i int, req *messagesRequest) []block) *fakeClaudeModel {
	t.Helper()
	m := &fakeClaudeModel{t: t, turn: turn}
	srv := httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(srv.Close)
	m.URL = srv.URL
	return m
}

// agentTurns returns the agent turns so far.
func (m *fakeClaudeModel) agentTurns() []*messagesRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*messagesRequest(nil), m.turns...)
}

func (m *fakeClaudeModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1/messages") {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	if strings.HasSuffix(r.URL.Path, "/count_tokens") {
		writeJSONBody(w, map[string]int{"input_tokens": 10})
		return
	}
	req := messagesRequest{raw: body}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	blocks := []block{{Text: "ok"}}
	if len(req.Tools) > 0 {
		m.mu.Lock()
		i := len(m.turns)
		m.turns = append(m.turns, &req)
		m.mu.Unlock()
		blocks = m.turn(i, &req)
	}
	if req.Stream {
		streamMessage(w, req.Model, blocks)
		return
	}
	writeJSONBody(w, message(req.Model, blocks))
}

func writeJSONBody(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

var toolUseIDs struct {
	sync.Mutex
	n int
}

func nextToolUseID() string {
	toolUseIDs.Lock()
	defer toolUseIDs.Unlock()
	toolUseIDs.n++
	return fmt.Sprintf("toolu_%024d", toolUseIDs.n)
}

// contentBlocks turns blocks into the Messages API's content, and says why
// the reply stops.
func contentBlocks(blocks []block) (content []map[string]any, stop string) {
	stop = "end_turn"
	for _, b := range blocks {
		if b.Tool != "" {
			content = append(content, map[string]any{"type": "tool_use", "id": nextToolUseID(), "name": b.Tool, "input": b.Input})
			stop = "tool_use"
			continue
		}
		content = append(content, map[string]any{"type": "text", "text": b.Text})
	}
	return content, stop
}

func message(model string, blocks []block) map[string]any {
	content, stop := contentBlocks(blocks)
	return map[string]any{
		"id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 10, "output_tokens": 10},
	}
}

// streamMessage writes the reply as the Messages API's server-sent events.
func streamMessage(w http.ResponseWriter, model string, blocks []block) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	content, stop := contentBlocks(blocks)
	event := func(name string, v any) {
		data, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
	}
	start := message(model, nil)
	start["content"], start["stop_reason"] = []any{}, nil
	event("message_start", map[string]any{"type": "message_start", "message": start})
	for i, c := range content {
		switch c["type"] {
		case "text":
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": c["text"]}})
		case "tool_use":
			input, _ := json.Marshal(c["input"])
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": c["id"], "name": c["name"], "input": map[string]any{}}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 10}})
	event("message_stop", map[string]any{"type": "message_stop"})
}
