package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// side is one server under test as the stock clients see it: where its MCP
// endpoint is and what an agent's MCP config adds to each request, how a new
// ask shows on the person's event stream, and how the person answers it.
// Every call is keyed by a text of its own (a title, a question, a tool name)
// that the event names, so one stream serves every scenario.
type side interface {
	mcpEndpoint() string
	// agentHeaders are the headers an agent's MCP config sets for session.
	agentHeaders(session string) map[string]string
	// newSession returns a session for a run's calls to belong to.
	newSession(ctx context.Context, c *http.Client) (string, error)
	eventsURL() string
	// created reads one event off the stream: the key and id of a new ask.
	created(event string, data []byte) (key, id string, ok bool)
	call(tool, key string) *mcp.CallToolParams
	// returned reports whether a call's result is the answer answerBody gave.
	returned(tool, key string, res *mcp.CallToolResult) bool
	answerURL(id string) string
	answerBody(tool, key string) map[string]any
	// bareURL is the server's cheapest request: the floor of any request.
	bareURL() string
	tools() []string
}

// askdSide is askd: /mcp with an agent token and the Askd-Session header, as
// README's MCP config for an HTTP client; the person's token on /api.
type askdSide struct {
	base, agentToken, humanToken string
}

func (s askdSide) mcpEndpoint() string { return s.base + "/mcp" }

func (s askdSide) agentHeaders(session string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + s.agentToken, "Askd-Session": session}
}

func (s askdSide) newSession(context.Context, *http.Client) (string, error) {
	// askd makes a session on its first ask.
	return fmt.Sprintf("stock-%d-%d", nowNano(), sessions.Add(1)), nil
}

var sessions atomic.Int64

func (s askdSide) eventsURL() string { return s.base + "/api/events" }

func (s askdSide) created(event string, data []byte) (string, string, bool) {
	if event != "ask.created" {
		return "", "", false
	}
	var ev struct {
		AskID int64 `json:"ask_id"`
		Ask   struct {
			Title     string `json:"title"`
			Questions []struct {
				Question string `json:"question"`
			} `json:"questions"`
		} `json:"ask"`
	}
	if json.Unmarshal(data, &ev) != nil || ev.AskID == 0 {
		return "", "", false
	}
	key := ev.Ask.Title
	if len(ev.Ask.Questions) > 0 {
		key = ev.Ask.Questions[0].Question
	}
	return key, fmt.Sprint(ev.AskID), true
}

func (s askdSide) call(tool, key string) *mcp.CallToolParams {
	if tool == "ask_user_question" {
		return &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"questions": []any{map[string]any{
			"question": key, "header": "Bench", "multiSelect": false,
			"options": []any{map[string]any{"label": "a"}, map[string]any{"label": "b"}},
		}}}}
	}
	// The longest grace the tool takes: no decision comes later than that.
	return &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"title": key, "grace_seconds": 120}}
}

func (s askdSide) returned(tool, key string, res *mcp.CallToolResult) bool {
	var out struct {
		Status  string            `json:"status"`
		Answers map[string]string `json:"answers"`
	}
	if res == nil || res.IsError {
		return false
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if json.Unmarshal(raw, &out) != nil {
		return false
	}
	if tool == "ask_user_question" {
		return out.Answers[key] == "a"
	}
	return out.Status == "approved"
}

func (s askdSide) answerURL(id string) string { return s.base + "/api/asks/" + id + "/answer" }

func (s askdSide) answerBody(tool, key string) map[string]any {
	if tool == "ask_user_question" {
		return map[string]any{"answers": map[string]any{key: "a"}}
	}
	return map[string]any{"decision": "approved"}
}

func (s askdSide) bareURL() string { return s.base + "/healthz" }

func (s askdSide) tools() []string { return []string{"request_approval", "ask_user_question"} }

// hldSide is HumanLayer's hld: /api/v1/mcp with the X-Session-ID header its
// MCP config for Claude Code sets, a draft session to hold the approvals,
// and its REST decide, as its UI does. hld has no tokens.
type hldSide struct {
	base string // .../api/v1
}

func (s hldSide) mcpEndpoint() string { return s.base + "/mcp" }

func (s hldSide) agentHeaders(session string) map[string]string {
	return map[string]string{"X-Session-ID": session}
}

// newSession makes a draft session (POST /sessions, draft: true): hld stores
// it without launching Claude Code.
func (s hldSide) newSession(ctx context.Context, c *http.Client) (string, error) {
	raw, status, err := post(ctx, c, s.base+"/sessions", "", map[string]any{"query": "stock bench", "title": "bench", "draft": true, "working_dir": "/"})
	if err != nil {
		return "", err
	}
	var out struct {
		Data struct {
			SessionID string `json:"session_id"`
		} `json:"data"`
	}
	if status != http.StatusCreated || json.Unmarshal(raw, &out) != nil || out.Data.SessionID == "" {
		return "", fmt.Errorf("create draft session: %d %s", status, raw)
	}
	return out.Data.SessionID, nil
}

func (s hldSide) eventsURL() string { return s.base + "/stream/events" }

// created reads hld's events: a data line of {"type":..., "data":{...}}.
func (s hldSide) created(_ string, data []byte) (string, string, bool) {
	var ev struct {
		Type string `json:"type"`
		Data struct {
			ApprovalID string `json:"approval_id"`
			ToolName   string `json:"tool_name"`
		} `json:"data"`
	}
	if json.Unmarshal(data, &ev) != nil || ev.Type != "new_approval" {
		return "", "", false
	}
	return ev.Data.ToolName, ev.Data.ApprovalID, true
}

func (s hldSide) call(tool, key string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: tool, Arguments: map[string]any{
		"tool_name": key, "input": map[string]any{"command": key}, "tool_use_id": "toolu_" + key,
	}}
}

// returned: hld's approval is a text content holding {"behavior":"allow"}.
func (s hldSide) returned(_, _ string, res *mcp.CallToolResult) bool {
	if res == nil || res.IsError || len(res.Content) == 0 {
		return false
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return false
	}
	var out struct {
		Behavior string `json:"behavior"`
	}
	return json.Unmarshal([]byte(tc.Text), &out) == nil && out.Behavior == "allow"
}

func (s hldSide) answerURL(id string) string {
	return s.base + "/approvals/" + url.PathEscape(id) + "/decide"
}

func (s hldSide) answerBody(string, string) map[string]any {
	return map[string]any{"decision": "approve"}
}

// bareURL: GET /config/status reads a few environment variables (its
// /health runs `claude --version` on every call).
func (s hldSide) bareURL() string { return s.base + "/config/status" }

func (s hldSide) tools() []string { return []string{"request_approval"} }

// post sends body, json.Marshalled from a map, and reads the response whole
// without decoding it: the person's request as a plain HTTP client makes it.
func post(ctx context.Context, c *http.Client, u, token string, body map[string]any) ([]byte, int, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(raw))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return out, resp.StatusCode, err
}

// headers adds an agent's configured headers to every MCP request.
type headers struct {
	base http.RoundTripper
	set  map[string]string
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.set {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

func trimBase(raw string) string { return strings.TrimRight(raw, "/") }
