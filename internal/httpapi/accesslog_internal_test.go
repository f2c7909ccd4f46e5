package httpapi

import (
	"strings"
	"testing"
)

func TestRPCNames(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"request_approval","arguments":{"details":"` + strings.Repeat("x", 2*rpcPeekMax) + `"}}}`
	tests := []struct {
		name, body   string
		method, tool string
	}{
		{"tools/call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{"kind":"ready","title":"t"}}}`, "tools/call", "ask"},
		{"params first", `{"params":{"_meta":{"progressToken":1},"arguments":{},"name":"check_ask"},"method":"tools/call","id":1,"jsonrpc":"2.0"}`, "tools/call", "check_ask"},
		{"cut in the arguments", long[:rpcPeekMax], "tools/call", "request_approval"},
		{"another method's name", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p"}}`, "prompts/get", ""},
		{"a notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "notifications/initialized", ""},
		{"a batch", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, "", ""},
		{"not JSON", `method=tools/call`, "", ""},
		{"a method that is not a string", `{"method":7,"params":{"name":"ask"}}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method, tool := rpcNames([]byte(tt.body))
			if method != tt.method || tool != tt.tool {
				t.Fatalf("rpcNames: %q %q, want %q %q", method, tool, tt.method, tt.tool)
			}
		})
	}
}
