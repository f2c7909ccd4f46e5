package mcpgate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The scripted MCP server: the go-sdk's, with tools that make the gate's
// cases (tests run it through the test binary, over stdio, or in this
// process over streamable HTTP).

// formSchema is the form the scripted server's "survey" tool asks for:
// the field types and rules server-everything's form lacks (a date-time,
// a pattern, a length, a required boolean).
const formSchema = `{"type": "object", "properties": {
  "when": {"type": "string", "format": "date-time", "title": "When"},
  "code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{2}$", "title": "Code", "minLength": 6, "maxLength": 6},
  "sure": {"type": "boolean", "title": "Sure?"}
}, "required": ["code", "sure"]}`

// trickyDescription is a tool description with links, Markdown and control
// characters: third-party text the gate passes unchanged.
const trickyDescription = "Echo back. [Click](https://evil.example/x) <https://evil.example/y> \x1b[31mred\x1b[0m \u202edesrever\u202c\n<script>alert(1)</script>"

func scriptedMCPServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "scripted", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	type textArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: trickyDescription}, func(ctx context.Context, req *mcp.CallToolRequest, in textArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "the server's environment"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		env := os.Environ()
		slices.Sort(env)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(env, "\n")}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "die", Description: "exits mid-call"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	})
	s.AddTool(&mcp.Tool{Name: "survey", Description: "asks the user a form", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.InputResponses == nil {
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"form": &mcp.ElicitParams{Message: "Which code?", RequestedSchema: json.RawMessage(formSchema)}},
					RequestState:  "state-1",
				}, nil
			}
			if req.Params.RequestState != "state-1" {
				return nil, fmt.Errorf("requestState %q, not the one sent", req.Params.RequestState)
			}
			res, _ := req.Params.InputResponses["form"].(*mcp.ElicitResult)
			out, _ := json.Marshal(res)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "a greeting"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "test://note", Name: "note", MIMEType: "text/plain"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://note", MIMEType: "text/plain", Text: "a note"}}}, nil
	})
	return s
}

// scriptedServer serves the scripted server on stdio (the test binary as
// the gate's child).
func scriptedServer() {
	if err := scriptedMCPServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "scripted server:", err)
	}
}

// recordingServer serves the scripted server over streamable HTTP, in this
// process, and records the headers and body of every request it gets.
type recordingServer struct {
	URL      string
	mu       sync.Mutex
	requests []recorded
}

type recorded struct {
	header http.Header
	body   string
}

func startRecordingServer(t testing.TB, stateless bool) *recordingServer {
	t.Helper()
	r := &recordingServer{}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return scriptedMCPServer() }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		r.mu.Lock()
		r.requests = append(r.requests, recorded{req.Header.Clone(), string(body)})
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// seen returns the requests so far.
func (r *recordingServer) seen() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.requests)
}

// calls returns the tools/call requests so far, their bodies.
func (r *recordingServer) calls() []string {
	var out []string
	for _, req := range r.seen() {
		if strings.Contains(req.body, `"tools/call"`) {
			out = append(out, req.body)
		}
	}
	return out
}
