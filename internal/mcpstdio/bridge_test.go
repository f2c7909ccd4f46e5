package mcpstdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/mcpserver"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// env is the environment askd gives a command: the process's variables.
func env(stdin io.Reader, stdout, stderr io.Writer) *cli.Env {
	return &cli.Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv}
}

// TestMCPNoServer: askd mcp says clearly that no server answers, and writes
// nothing to stdout (which belongs to the MCP protocol).
func TestMCPNoServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	var stdout, stderr bytes.Buffer
	err = Serve(context.Background(), env(strings.NewReader(""), &stdout, &stderr), []string{"--url", "http://" + addr, "--token", "askd_a_x"})
	if err == nil || !strings.Contains(err.Error(), "no askd server answers at http://"+addr) {
		t.Fatalf("err %v", err)
	}
	if stdout.Len() != 0 {
		t.Fatalf("stdout: %q", stdout.String())
	}
}

func TestMCPNoToken(t *testing.T) {
	t.Setenv("ASKD_TOKEN", "")
	var out bytes.Buffer
	err := Serve(context.Background(), env(strings.NewReader(""), &out, &out), nil)
	if err == nil || !strings.Contains(err.Error(), "ASKD_TOKEN") {
		t.Fatalf("err %v", err)
	}
}

// TestMCPBridgeCancelledCall drives askd mcp with raw JSON-RPC lines, as a
// stdio client writes them: a blocking ask_user_question, then
// notifications/cancelled for it. The bridge tells the server (a
// notifications/cancelled reaches /mcp, and the ask is cut off, still
// pending) and writes no response for the
// cancelled id; no line it writes, first to last, is an error with code 0.
func TestMCPBridgeCancelledCall(t *testing.T) {
	upstreamCancel := make(chan []byte, 4)
	srv := testserver.Start(t, testserver.Options{MCP: func(svc *app.Service) http.Handler {
		h := mcpserver.Handler(svc, mcpserver.Options{})
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if bytes.Contains(body, []byte(`"notifications/cancelled"`)) {
					upstreamCancel <- body
				}
			}
			h.ServeHTTP(w, r)
		})
	}})
	session := "bridge-cancel"
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	var stderr testserver.SyncBuffer
	ran := make(chan error, 1)
	go func() {
		ran <- Serve(context.Background(), env(stdinR, stdoutW, &stderr), []string{"--url", srv.URL, "--token", srv.AgentToken, "--session", session, "--log-level", "warn"})
		stdoutW.Close()
	}()
	lines := make(chan map[string]json.RawMessage, 16)
	var all []string // every line the bridge wrote, for the code-0 check
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdoutR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			all = append(all, sc.Text())
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				t.Errorf("stdout line is not JSON: %q", sc.Text())
				continue
			}
			lines <- m
		}
	}()
	send := func(msg string) {
		t.Helper()
		if _, err := io.WriteString(stdinW, msg+"\n"); err != nil {
			t.Fatalf("write stdin: %v", err)
		}
	}
	// response reads lines until the response to id, failing on one for 2.
	response := func(id string) map[string]json.RawMessage {
		t.Helper()
		timeout := time.After(15 * time.Second)
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatalf("stdout ended before the response to %s; stderr:\n%s", id, stderr.String())
				}
				if string(m["id"]) == "2" {
					t.Errorf("a response for the cancelled call: %s", mustJSON(m))
				}
				if string(m["id"]) == id {
					return m
				}
			case <-timeout:
				t.Fatalf("no response to %s", id)
			}
		}
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	response("1")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask_user_question","arguments":{"questions":[{"question":"Which database?","header":"Database","multiSelect":false,"options":[{"label":"SQLite"},{"label":"Postgres"}]}]}}}`)
	asks := srv.Pending(t, session, 1)
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"SdkError: Request timed out"}}`)
	select {
	case body := <-upstreamCancel:
		t.Logf("upstream got %s", body)
	case <-time.After(15 * time.Second):
		t.Fatal("the bridge did not send notifications/cancelled to the server")
	}
	srv.CutOff(t, asks[0].ID)
	// A call made after the cancellation; its answer comes after the
	// bridge has read the cancellation.
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"check_ask","arguments":{"id":` + strconv.FormatInt(asks[0].ID, 10) + `}}}`)
	if m := response("3"); m["result"] == nil {
		t.Fatalf("check_ask: %s", mustJSON(m))
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	response("4")
	// Closing stdin ends the bridge once every call has finished, so the
	// lines read to the end are all it will ever write.
	stdinW.Close()
	for m := range lines {
		if string(m["id"]) == "2" {
			t.Errorf("a response for the cancelled call: %s", mustJSON(m))
		}
	}
	if err := <-ran; err != nil {
		t.Fatalf("askd mcp: %v\n%s", err, stderr.String())
	}
	for _, l := range all {
		if strings.Contains(strings.ReplaceAll(l, " ", ""), `"code":0`) {
			t.Errorf("an error with code 0: %s", l)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestMCPBridgeErrorCodes: an error response the bridge writes always has a
// JSON-RPC code; one the SDK made from a plain Go error gets -32603.
func TestMCPBridgeErrorCodes(t *testing.T) {
	id, _ := jsonrpc.MakeID(float64(5))
	tests := []struct {
		name string
		err  error
		code int64
		msg  string
	}{
		{name: "a plain error", err: context.Canceled, code: jsonrpc.CodeInternalError, msg: "context canceled"},
		{name: "a wrapped plain error", err: fmt.Errorf("calling: %w", errors.New("boom")), code: jsonrpc.CodeInternalError, msg: "calling: boom"},
		{name: "a JSON-RPC error", err: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad"}, code: jsonrpc.CodeInvalidParams, msg: "bad"},
		{name: "a JSON-RPC error with code 0", err: &jsonrpc.Error{Message: "zero"}, code: jsonrpc.CodeInternalError, msg: "zero"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := withErrorCode(&jsonrpc.Response{ID: id, Error: tt.err})
			var rpcErr *jsonrpc.Error
			if !errors.As(got.Error, &rpcErr) || rpcErr.Code != tt.code || rpcErr.Message != tt.msg || got.ID != id {
				t.Fatalf("got %#v, want code %d message %q", got.Error, tt.code, tt.msg)
			}
		})
	}
	if ok := (&jsonrpc.Response{ID: id, Result: json.RawMessage(`{}`)}); withErrorCode(ok) != ok {
		t.Error("a result was rewritten")
	}
}
