package agentcli_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// geminiRequest is what Gemini CLI sends to POST
// /v1beta/models/M:streamGenerateContent?alt=sse (and :generateContent), as
// far as the scripts read it.
type geminiRequest struct {
	Contents []json.RawMessage `json:"contents"`
	Tools    []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType string `json:"responseMimeType"`
	} `json:"generationConfig"`
}

// geminiReplied reports whether a Gemini content is the model's own (role
// model).
func geminiReplied(c json.RawMessage) bool {
	var content struct{ Role string }
	return json.Unmarshal(c, &content) == nil && content.Role == "model"
}

// serveGemini answers one Gemini API request from script m: method is the
// path after /v1beta/models/, MODEL:streamGenerateContent (server-sent
// events, one chunk), MODEL:generateContent or MODEL:countTokens.
func serveGemini(w http.ResponseWriter, r *http.Request, m *modelScript, method string) {
	body, _ := io.ReadAll(r.Body)
	if strings.HasSuffix(method, ":countTokens") {
		writeJSONBody(w, map[string]int{"totalTokens": 10})
		return
	}
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	mr := &modelRequest{path: r.URL.Path, Messages: req.Contents, replied: geminiReplied, raw: body}
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			mr.Tools = append(mr.Tools, f.Name)
		}
	}
	blocks := m.reply(mr)
	if len(mr.Tools) == 0 && req.GenerationConfig.ResponseMimeType == "application/json" {
		// A side request for JSON: Gemini CLI asks whether the model
		// or the user speaks next once a turn ends with text.
		blocks = []block{{Text: `{"reasoning": "The model has finished its turn.", "next_speaker": "user"}`}}
	}
	var parts []map[string]any
	for _, b := range blocks {
		if b.Tool != "" {
			parts = append(parts, map[string]any{"functionCall": map[string]any{"name": b.Tool, "args": b.Input}})
			continue
		}
		parts = append(parts, map[string]any{"text": b.Text})
	}
	reply := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]int{"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
		"modelVersion":  strings.Split(method, ":")[0],
	}
	if !strings.HasSuffix(method, ":streamGenerateContent") {
		writeJSONBody(w, reply)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	data, _ := json.Marshal(reply)
	fmt.Fprintf(w, "data: %s\n\n", data)
}
