package mcpserver_test

import (
	"context"
	"encoding/json"
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
