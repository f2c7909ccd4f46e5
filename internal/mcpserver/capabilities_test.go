package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askd declares exactly what it answers, to a 2026-07-28 client in the
// server/discover result and to a 2025 one in the initialize result alike:
// its tools, prompts and resources (none of either), logging, and no list
// that changes; what it does not declare, completions and resource
// subscriptions, is "method not found".
func TestCapabilitiesAsServed(t *testing.T) {
	srv := start(t, app.Config{})
	const want = `{"logging":{},"prompts":{},"resources":{},"tools":{}}`
	tests := []struct {
		tr      transport
		version string // the revision the client must end up on
	}{
		// The go-sdk client asks server/discover first, falling back to
		// initialize only when that fails: on 2026-07-28 it used discover.
		{transport{name: "http-newest"}, "2026-07-28"},
		{transport{name: "http-2025-11-25", version: "2025-11-25"}, "2025-11-25"},
		{transport{name: "http-2025-06-18", version: "2025-06-18"}, "2025-06-18"},
	}
	for _, tt := range tests {
		t.Run(tt.tr.name, func(t *testing.T) {
			t.Parallel()
			cs := connect(t, srv, tt.tr, "caps-"+tt.tr.name, nil)
			res := cs.InitializeResult()
			if res.ProtocolVersion != tt.version {
				t.Fatalf("protocol version %q, want %q", res.ProtocolVersion, tt.version)
			}
			got, err := json.Marshal(res.Capabilities)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Errorf("capabilities %s, want %s", got, want)
			}

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			tools, err := cs.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) != 6 {
				t.Errorf("tools/list: %v, %v; want askd's six tools", tools, err)
			}
			prompts, err := cs.ListPrompts(ctx, nil)
			if err != nil || len(prompts.Prompts) != 0 {
				t.Errorf("prompts/list: %v, %v; want an empty list", prompts, err)
			}
			resources, err := cs.ListResources(ctx, nil)
			if err != nil || len(resources.Resources) != 0 {
				t.Errorf("resources/list: %v, %v; want an empty list", resources, err)
			}
			templates, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil || len(templates.ResourceTemplates) != 0 {
				t.Errorf("resources/templates/list: %v, %v; want an empty list", templates, err)
			}
			_, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "p"}, Argument: mcp.CompleteParamsArgument{Name: "a"}})
			wantMethodNotFound(t, "completion/complete", err)
			if tt.version < "2026-07-28" { // resources/subscribe is gone from 2026-07-28
				wantMethodNotFound(t, "resources/subscribe", cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "askd://nothing"}))
			}
		})
	}
}

func wantMethodNotFound(t *testing.T, method string, err error) {
	t.Helper()
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("%s: %v, want method not found (%d)", method, err, jsonrpc.CodeMethodNotFound)
	}
}

// A 2026-07-28 client listening for list changes gets the acknowledgement,
// agreeing to none (askd declares no list that changes), and the end of the
// stream at once, not a connection held open for notifications that never
// come. The request is raw, with the headers and _meta the revision
// requires, as a client other than the go-sdk's sends it.
func TestSubscriptionsListenEndsAtOnce(t *testing.T) {
	srv := start(t, app.Config{})
	body := `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{` +
		`"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}}}`
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	hc := &http.Client{Transport: client.Transport{Token: srv.AgentToken, Session: "listen", Base: http.DefaultTransport}}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	// Read to the end of the stream: with a connection held open, this is
	// where the test would time out.
	var messages []map[string]json.RawMessage
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("event data %q: %v", data, err)
		}
		messages = append(messages, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("the stream did not end: %v (got %d messages)", err, len(messages))
	}
	if len(messages) != 2 {
		t.Fatalf("%d messages, want the acknowledgement and the result: %v", len(messages), messages)
	}
	var ack struct {
		Method string `json:"method"`
		Params struct {
			Notifications map[string]any `json:"notifications"`
		} `json:"params"`
	}
	ackJSON, _ := json.Marshal(messages[0])
	if err := json.Unmarshal(ackJSON, &ack); err != nil || ack.Method != "notifications/subscriptions/acknowledged" || len(ack.Params.Notifications) != 0 {
		t.Errorf("first message %s, want an acknowledgement agreeing to no notifications", ackJSON)
	}
	if id := string(messages[1]["id"]); id != "7" || messages[1]["result"] == nil {
		t.Errorf("second message %v, want the result of request 7", messages[1])
	}
}
