package mcpgate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// message is one JSON-RPC message as it crossed the wire: its bytes, which
// the gate forwards as they are unless it has to change them, and the
// members it looks at. A message the gate changes or makes is encoded anew.
type message struct {
	raw    []byte
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`

	// related is the id key (idKey) of the client's request that a message
	// from the server belongs to, when the gate knows it: the streamable
	// HTTP listener sends it on that request's stream.
	related string
	// lost, on an error response the gate made for a request the server
	// did not answer, says why: a tool call gets an error result with it.
	lost string
}

// errBatch refuses a JSON-RPC batch: MCP 2025-06-18 and later have none,
// and one the gate passed as it is would carry tool calls past it.
var errBatch = errors.New("a JSON-RPC batch (MCP 2025-06-18 and later have none)")

// parseMessage reads one message. Its bytes are kept as given.
func parseMessage(raw []byte) (*message, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		return nil, errBatch
	}
	m := &message{raw: raw}
	if err := json.Unmarshal(raw, m); err != nil {
		return nil, fmt.Errorf("not a JSON-RPC message: %w", err)
	}
	if isNull(m.ID) {
		m.ID = nil
	}
	return m, nil
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// isRequest reports whether m is a request, which expects a response.
func (m *message) isRequest() bool { return m.Method != "" && m.ID != nil }

// isNotification reports whether m is a notification.
func (m *message) isNotification() bool { return m.Method != "" && m.ID == nil }

// isResponse reports whether m is a response (a result or an error).
func (m *message) isResponse() bool { return m.Method == "" && m.ID != nil }

// key is the id key of m's id.
func (m *message) key() string { return idKey(m.ID) }

// idKey names a request id so that the same id gives the same key however
// it is spelled: a string by its value, a number by its value (1, 1.0 and
// 1e0 are one id), anything else by its bytes.
func idKey(id json.RawMessage) string {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return ""
	}
	if id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) == nil {
			return "s" + s
		}
	}
	if f, err := strconv.ParseFloat(string(id), 64); err == nil {
		return "n" + strconv.FormatFloat(f, 'g', -1, 64)
	}
	return "r" + string(id)
}

// encode encodes a message the gate makes or changes, as one line.
func encode(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only values the gate built itself are encoded: a failure is a bug.
		panic(fmt.Sprintf("mcpgate: encode %T: %v", v, err))
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// newMessage makes a message from its members and parses it back.
func newMessage(members map[string]any) *message {
	members["jsonrpc"] = "2.0"
	m, err := parseMessage(encode(members))
	if err != nil {
		panic(fmt.Sprintf("mcpgate: a message of the gate's own does not parse: %v", err))
	}
	return m
}

// resultMessage is the response to request id with result.
func resultMessage(id json.RawMessage, result any) *message {
	return newMessage(map[string]any{"id": id, "result": result})
}

// errorMessage is the JSON-RPC error response to request id.
func errorMessage(id json.RawMessage, code int, text string) *message {
	if id == nil {
		id = json.RawMessage("null")
	}
	return newMessage(map[string]any{"id": id, "error": map[string]any{"code": code, "message": text}})
}

// JSON-RPC error codes the gate answers with.
const (
	codeInvalidRequest = -32600
	codeInternal       = -32603
)

// toolError is the result of tools/call request req that reports an error
// to the model (isError): the gate's refusals and failures. On 2026-07-28
// it says its resultType, as that revision's results must (the official
// conformance suite's schema check refused the gate's own results without
// it).
func toolError(req *message, text string) *message {
	result := map[string]any{
		"content": []map[string]string{{"type": "text", "text": text}},
		"isError": true,
	}
	var version string
	json.Unmarshal(member(member(req.Params, "_meta"), metaProtocolVersion), &version)
	if version >= "2026-07-28" {
		result["resultType"] = "complete"
	}
	return resultMessage(req.ID, result)
}

// notification makes a notification.
func notification(method string, params any) *message {
	return newMessage(map[string]any{"method": method, "params": params})
}

// withID is m with id in place of its own.
func (m *message) withID(id json.RawMessage) *message {
	return m.with("id", id)
}

// withParams is m with params in place of its own.
func (m *message) withParams(params json.RawMessage) *message {
	return m.with("params", params)
}

// with is m with one member set to v, encoded anew.
func (m *message) with(member string, v json.RawMessage) *message {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(m.raw, &members); err != nil {
		panic(fmt.Sprintf("mcpgate: a parsed message does not parse again: %v", err))
	}
	members[member] = v
	out, err := parseMessage(encode(members))
	if err != nil {
		panic(fmt.Sprintf("mcpgate: a changed message does not parse: %v", err))
	}
	out.related = m.related
	return out
}

// setMember is the JSON object obj with member set to v (obj may be empty:
// a new object). Other members keep their bytes; the order of members is
// not kept.
func setMember(obj json.RawMessage, member string, v json.RawMessage) (json.RawMessage, error) {
	members := map[string]json.RawMessage{}
	if !isNull(obj) {
		if err := json.Unmarshal(obj, &members); err != nil {
			return nil, err
		}
		if members == nil {
			members = map[string]json.RawMessage{}
		}
	}
	members[member] = v
	return encode(members), nil
}

// member returns obj's member name, nil when obj is no object or lacks it.
func member(obj json.RawMessage, name string) json.RawMessage {
	var members map[string]json.RawMessage
	if json.Unmarshal(obj, &members) != nil {
		return nil
	}
	return members[name]
}

// The _meta keys of MCP 2026-07-28 that every request carries.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
)

// progressToken is the progress token of request params, nil when none.
func progressToken(params json.RawMessage) json.RawMessage {
	t := member(member(params, "_meta"), "progressToken")
	if isNull(t) {
		return nil
	}
	return t
}
