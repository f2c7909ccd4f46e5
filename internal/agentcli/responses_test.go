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

// responsesRequest is what Codex sends to POST /v1/responses, as far as the
// scripts read it.
type responsesRequest struct {
	Model string            `json:"model"`
	Input []json.RawMessage `json:"input"`
	Tools []json.RawMessage `json:"tools"`
}

// lastInput is the request's last input item as JSON text.
func (r *responsesRequest) lastInput() string {
	if len(r.Input) == 0 {
		return ""
	}
	return string(r.Input[len(r.Input)-1])
}

// call is one scripted Codex model output: a message, or a function call
// (an MCP tool is Namespace mcp__<server>, Name the tool).
type call struct {
	Text            string
	Namespace, Name string
	Arguments       any
}

// fakeCodexModel is a scripted OpenAI Responses endpoint on loopback for the
// real Codex CLI (a custom model provider): each agent turn (a request that
// offers tools) goes to turn, with its index from 0; other requests get a
// short message. It records every agent turn.
type fakeCodexModel struct {
	URL string

	mu    sync.Mutex
	turns []*responsesRequest
	turn  func(i int, req *responsesRequest) []call
}

func newFakeCodexModel(t *testing.T, turn func(i int, req *responsesRequest) []call) *fakeCodexModel {
	t.Helper()
	m := &fakeCodexModel{turn: turn}
	srv := httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(srv.Close)
	m.URL = srv.URL
	return m
}

func (m *fakeCodexModel) agentTurns() []*responsesRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*responsesRequest(nil), m.turns...)
}

func (m *fakeCodexModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	calls := []call{{Text: "ok"}}
	if len(req.Tools) > 0 {
		m.mu.Lock()
		i := len(m.turns)
		m.turns = append(m.turns, &req)
		m.mu.Unlock()
		calls = m.turn(i, &req)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	event := func(v map[string]any) {
		data, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], data)
	}
	id := fmt.Sprintf("resp_%d", nextResponseID())
	event(map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	for i, c := range calls {
		var item map[string]any
		if c.Name != "" {
			args, _ := json.Marshal(c.Arguments)
			item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%s_%d", id, i), "call_id": fmt.Sprintf("call_%s_%d", id, i),
				"name": c.Name, "arguments": string(args)}
			if c.Namespace != "" {
				item["namespace"] = c.Namespace
			}
		} else {
			item = map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_%s_%d", id, i), "status": "completed",
				"content": []map[string]any{{"type": "output_text", "text": c.Text, "annotations": []any{}}}}
		}
		event(map[string]any{"type": "response.output_item.added", "output_index": i, "item": item})
		event(map[string]any{"type": "response.output_item.done", "output_index": i, "item": item})
	}
	event(map[string]any{"type": "response.completed", "response": map[string]any{"id": id,
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]int{"cached_tokens": 0},
			"output_tokens": 10, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": 20}}})
}

var responseIDs struct {
	sync.Mutex
	n int
}

func nextResponseID() int {
	responseIDs.Lock()
	defer responseIDs.Unlock()
	responseIDs.n++
	return responseIDs.n
}
