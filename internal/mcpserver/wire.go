package mcpserver

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// jsonrpcRequest is a tools/call askd serves itself.
type jsonrpcRequest struct {
	id       json.RawMessage
	name     string
	progress any    // the progress token, nil if none
	version  string // the request's MCP-Protocol-Version
	call     call
}

// newRevision says the client speaks 2026-07-28 or later, where closing the
// response stream cancels the call, and results carry a resultType.
func (rpc *jsonrpcRequest) newRevision() bool { return rpc.version >= statelessRevision }

// writeNoResult answers a call whose client cancelled it before it started
// with an event stream that ends at once: no JSON-RPC response for the
// cancelled id (SPEC §2.1).
func writeNoResult(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

// writeResult answers a call at once, as application/json.
func writeResult(w http.ResponseWriter, rpc *jsonrpcRequest, res result) {
	body := response(rpc, res)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(body)
}

// response is the JSON-RPC response carrying a tool's result.
func response(rpc *jsonrpcRequest, res result) []byte {
	out := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  wireResult      `json:"result"`
	}{"2.0", rpc.id, wireResult{
		Content: []textContent{{Type: "text", Text: string(res.text)}},
		IsError: res.isError,
	}}
	if res.structured {
		out.Result.StructuredContent = json.RawMessage(res.text)
	}
	if rpc.newRevision() {
		out.Result.ResultType = "complete"
	}
	return marshal(out)
}

// wireResult is CallToolResult as it travels.
type wireResult struct {
	Content           []textContent   `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	ResultType        string          `json:"resultType,omitempty"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// notification is a JSON-RPC notification.
func notification(method string, params any) []byte {
	return marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
}

// supportedRevision says whether askd's SDK speaks MCP revision v.
func supportedRevision(v string) bool {
	return slices.Contains(mcp.SupportedProtocolVersions(), v)
}
