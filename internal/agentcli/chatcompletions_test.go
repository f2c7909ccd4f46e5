package agentcli_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// chatRequest is what a CLI sends to POST /v1/chat/completions, as far as
// the scripts read it.
type chatRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	Messages []json.RawMessage `json:"messages"`
	Tools    []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// chatReplied reports whether a chat message is the model's own (role
// assistant).
func chatReplied(m json.RawMessage) bool {
	var msg struct{ Role string }
	return json.Unmarshal(m, &msg) == nil && msg.Role == "assistant"
}

// serveChat answers one OpenAI chat completions request from script m,
// streamed (server-sent chunks, then [DONE]) when the request asks for it.
func serveChat(w http.ResponseWriter, r *http.Request, m *modelScript) {
	body, _ := io.ReadAll(r.Body)
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	mr := &modelRequest{path: r.URL.Path, Messages: req.Messages, replied: chatReplied, raw: body}
	for _, t := range req.Tools {
		mr.Tools = append(mr.Tools, t.Function.Name)
	}
	message, finish := chatMessage(m.reply(mr))
	id, created := fmt.Sprintf("chatcmpl-%d", nextResponseID()), time.Now().Unix()
	usage := map[string]int{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
	if !req.Stream {
		writeJSONBody(w, map[string]any{"id": id, "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": finish}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	chunk := func(choices []any, extra map[string]any) {
		v := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model, "choices": choices}
		for k, x := range extra {
			v[k] = x
		}
		data, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", data)
	}
	delta := map[string]any{"role": "assistant", "content": message["content"]}
	chunk([]any{map[string]any{"index": 0, "delta": delta, "finish_reason": nil}}, nil)
	if calls, ok := message["tool_calls"].([]map[string]any); ok {
		for i, c := range calls {
			c["index"] = i
		}
		chunk([]any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": calls}, "finish_reason": nil}}, nil)
	}
	chunk([]any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}, nil)
	chunk([]any{}, map[string]any{"usage": usage})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// chatMessage turns blocks into a chat completions assistant message, and
// says why it finishes.
func chatMessage(blocks []block) (message map[string]any, finish string) {
	message, finish = map[string]any{"role": "assistant", "content": nil}, "stop"
	text := ""
	var calls []map[string]any
	for _, b := range blocks {
		if b.Tool == "" {
			text += b.Text
			continue
		}
		args, _ := json.Marshal(b.Input)
		calls = append(calls, map[string]any{"id": "call_" + nextToolUseID(), "type": "function",
			"function": map[string]any{"name": b.Tool, "arguments": string(args)}})
		finish = "tool_calls"
	}
	if text != "" {
		message["content"] = text
	}
	if calls != nil {
		message["tool_calls"] = calls
	}
	return message, finish
}
