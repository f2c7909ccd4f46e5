package mcpserver

import (
	"strings"
	"testing"
)

// One parse of the body gives the handler, and the access log, the method,
// the tool and the params, wherever they stand in the body.
func TestParseMessage(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"request_approval","arguments":{"details":"` + strings.Repeat("x", 8192) + `"}}}`
	tests := []struct {
		name, body   string
		ok           bool
		method, tool string
		badParams    bool
	}{
		{"tools/call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{"kind":"ready","title":"t"}}}`, true, "tools/call", "ask", false},
		{"params first", `{"params":{"_meta":{"progressToken":1},"arguments":{},"name":"check_ask"},"method":"tools/call","id":1,"jsonrpc":"2.0"}`, true, "tools/call", "check_ask", false},
		{"long arguments", long, true, "tools/call", "request_approval", false},
		{"another method's name", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p"}}`, true, "prompts/get", "", false},
		{"a notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, true, "notifications/initialized", "", false},
		{"params not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["ask"]}`, true, "tools/call", "", true},
		{"a name that is not a string", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}`, true, "tools/call", "", true},
		{"_meta not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","_meta":1}}`, true, "tools/call", "ask", true},
		{"a batch", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, false, "", "", false},
		{"not JSON", `method=tools/call`, false, "", "", false},
		{"a method that is not a string", `{"method":7,"params":{"name":"ask"}}`, false, "", "", false},
		{"a jsonrpc that is not a string", `{"jsonrpc":2,"method":"tools/list"}`, false, "tools/list", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, ok := parseMessage([]byte(tt.body))
			if ok != tt.ok || msg.Method != tt.method || msg.tool() != tt.tool || msg.badParams != tt.badParams {
				t.Fatalf("parseMessage: ok %v, method %q, tool %q, bad params %v; want %v %q %q %v",
					ok, msg.Method, msg.tool(), msg.badParams, tt.ok, tt.method, tt.tool, tt.badParams)
			}
		})
	}
}

// A notifications/cancelled's requestId is read even beside params of
// another shape.
func TestParseMessageCancelled(t *testing.T) {
	msg, ok := parseMessage([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"name":1,"requestId":"r-7"}}`))
	if !ok || string(msg.Params.RequestID) != `"r-7"` {
		t.Fatalf("ok %v, requestId %s", ok, msg.Params.RequestID)
	}
}
