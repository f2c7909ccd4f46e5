package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/mcpserver"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var toolNames = []string{"ask_user_question", "ask", "request_approval", "permission_prompt", "check_ask", "cancel_ask"}

var toolArgSeeds = []struct {
	tool int
	args string
}{
	{0, `{"questions":[{"question":"Which?","header":"H","options":[{"label":"a"},{"label":"b"}],"multiSelect":false}]}`},
	{0, `{"questions":[{"question":"Which?","header":"Header too long","options":[{"label":"a"}]}]}`},
	{0, `{"questions":[],"extra":1}`},
	{1, `{"kind":"decision","title":"Deploy?","options":[{"label":"Yes"},{"label":"No"}],"recommended":"Yes"}`},
	{1, `{"kind":"question","title":"x"}`},
	{1, `{"kind":"action","title":"x","options":[{"label":"a"}]}`},
	{2, `{"title":"rm","details":"rm -rf build","payload":{"n":1},"grace_seconds":0}`},
	{2, `{"title":"t","grace_seconds":121}`},
	{3, `{"tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"toolu_1"}`},
	{3, `{"tool_name":"AskUserQuestion","input":{"questions":[{"question":"q","header":"h","options":[{"label":"a"},{"label":"b"}]}]}}`},
	{4, `{}`}, {4, `{"id":1}`}, {4, `{"id":-1}`}, {4, `{"wait_seconds":5}`}, {4, `{"id":1,"wait_seconds":61}`},
	{5, `{"id":1}`}, {5, `{}`}, {5, `{"id":"1"}`},
	{0, `null`}, {1, `[]`}, {2, `"x"`}, {3, `{"tool_name":"Bash","input":null}`},
}

// FuzzToolArguments calls each tool with fuzzed arguments through a real MCP
// client and server over in-memory transports. No call panics or fails at the
// protocol level; a refusal is a tool error whose text names the field and
// the rule ("path: rule"), or a JSON result (an ask the caller cannot see).
func FuzzToolArguments(f *testing.F) {
	for _, s := range toolArgSeeds {
		f.Add(uint8(s.tool), []byte(s.args))
	}
	// Asks time out at once and grace is capped below, so no call blocks long.
	srv := testserver.Start(f, testserver.Options{Config: app.Config{
		QuestionTimeout: time.Millisecond, ApprovalTimeout: time.Millisecond, ApprovalGrace: 0, MaxPending: 1 << 30,
	}})
	caller := askd.Caller{Name: "agent-1", Role: askd.RoleAgent, Session: "fuzz-tools"}
	ctx := app.WithCaller(context.Background(), caller)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(srv.App, mcpserver.Options{}).Connect(ctx, st, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "fuzz", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { cs.Close() })
	// The caller reaches the tools: a valid ask is taken.
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"kind": "ready", "title": "fuzzing"}})
	if err != nil || res.IsError {
		f.Fatalf("ask over the in-memory transport: %v %+v", err, res)
	}

	f.Fuzz(func(t *testing.T, tool uint8, args []byte) {
		if !json.Valid(args) {
			return // a client cannot send it: arguments are JSON
		}
		name := toolNames[int(tool)%len(toolNames)]
		if name == "request_approval" || name == "check_ask" {
			// A valid grace or wait would block for real; keep calls short.
			var m map[string]any
			if json.Unmarshal(args, &m) == nil {
				for _, k := range []string{"grace_seconds", "wait_seconds"} {
					if v, ok := m[k].(float64); ok && v > 0 && v <= 120 {
						return
					}
				}
			}
		}
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			if cctx.Err() != nil {
				t.Fatalf("%s %s: no result within 10 s", name, args)
			}
			// The SDK refuses arguments that are not an object before askd
			// sees them; anything else is askd's to answer.
			var obj map[string]json.RawMessage
			if json.Unmarshal(args, &obj) == nil && obj != nil {
				t.Fatalf("%s %s: protocol error %v", name, args, err)
			}
			return
		}
		if !res.IsError {
			return
		}
		text := ""
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
		}
		if json.Valid([]byte(text)) && strings.HasPrefix(text, "{") {
			return // a structured result: unknown ask, conflict, rejection
		}
		path, rule, ok := strings.Cut(text, ": ")
		if !ok || path == "" || strings.TrimSpace(rule) == "" || strings.ContainsAny(path, " \n") && !strings.Contains(path, "[") {
			t.Fatalf("%s %s: tool error %q is not of the form \"path: rule\"", name, args, text)
		}
	})
}

// FuzzMCPRequest posts fuzzed JSON-RPC bodies to a real askd's /mcp over HTTP,
// as both an old-revision and a 2026-07-28 client would send them: askd's own
// tools/call path (the router, the tools, parked calls) and the SDK behind it.
// No request gets a 5xx or hangs; a 200 carries JSON-RPC, as JSON or as a
// stream of events.
func FuzzMCPRequest(f *testing.F) {
	for _, s := range toolArgSeeds {
		f.Add(false, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+toolNames[s.tool]+`","arguments":`+s.args+`}}`))
		f.Add(true, []byte(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"`+toolNames[s.tool]+`","arguments":`+s.args+`,"_meta":{"progressToken":7}}}`))
	}
	for _, b := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"ask"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{}}}`,
		`{"id":1,"method":"tools/call","params":"x"}`, `{}`, `null`, `x`,
	} {
		f.Add(false, []byte(b))
		f.Add(true, []byte(b))
	}
	srv := testserver.Start(f, testserver.Options{
		Config: app.Config{QuestionTimeout: time.Millisecond, ApprovalTimeout: time.Millisecond, ApprovalGrace: 0, MaxPending: 1 << 30},
		MCP: func(svc *app.Service) http.Handler {
			return mcpserver.Handler(svc, mcpserver.Options{ProgressInterval: time.Millisecond})
		},
	})
	hc := &http.Client{Timeout: 20 * time.Second}

	f.Fuzz(func(t *testing.T, newRevision bool, body []byte) {
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &msg)
		for _, k := range []string{"grace_seconds", "wait_seconds"} {
			if v, ok := msg.Params.Arguments[k].(float64); ok && v > 0 && v <= 120 {
				return // a valid grace or wait blocks for real
			}
		}
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/mcp", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+srv.AgentToken)
		req.Header.Set("Askd-Session", "fuzz-http")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if newRevision {
			// A client sends the headers a body calls for, when they can be
			// header values at all (net/http refuses control characters).
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			if headerValue(msg.Method) {
				req.Header.Set("Mcp-Method", msg.Method)
			}
			if msg.Params.Name != "" && headerValue(msg.Params.Name) {
				req.Header.Set("Mcp-Name", msg.Params.Name)
			}
		} else {
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: reading the response: %v", body, err)
		}
		if resp.StatusCode >= 500 {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, data)
		}
		if resp.StatusCode != http.StatusOK {
			return
		}
		switch ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";"); ct {
		case "application/json":
			if !json.Valid(data) || !bytes.Contains(data, []byte(`"jsonrpc"`)) {
				t.Fatalf("%s: 200 with %q, not JSON-RPC", body, data)
			}
		case "text/event-stream":
			for _, line := range strings.Split(string(data), "\n") {
				if d, ok := strings.CutPrefix(line, "data: "); ok && !json.Valid([]byte(d)) {
					t.Fatalf("%s: event data %q is not JSON", body, d)
				}
			}
		default:
			t.Fatalf("%s: 200 with content type %q", body, resp.Header.Get("Content-Type"))
		}
	})
}

// headerValue says whether net/http sends s as a header value.
func headerValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
