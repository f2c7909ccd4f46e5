package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// tsSDK is the TypeScript SDK version the interop test installs.
const tsSDK = "@modelcontextprotocol/sdk@1.32.2"

// TestTypeScriptClient: the official TypeScript SDK, installed from npm by
// the test, lists askd's tools and completes an ask_user_question round trip
// over streamable HTTP while the test answers through the HTTP API. In CI
// (CI=true) a missing node or npm fails the test; elsewhere it skips, loudly.
func TestTypeScriptClient(t *testing.T) {
	node, nodeErr := exec.LookPath("node")
	npm, npmErr := exec.LookPath("npm")
	if nodeErr != nil || npmErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node and npm are required in CI for the TypeScript interop test: %v %v", nodeErr, npmErr)
		}
		t.Skipf("SKIPPING the TypeScript SDK interop test: node or npm not found (%v %v); CI runs it", nodeErr, npmErr)
	}
	dir := tsClientDir(t, npm)
	script, err := os.ReadFile(filepath.Join("testdata", "interop.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "interop.mjs"), script, 0o644); err != nil {
		t.Fatal(err)
	}

	srv := start(t, app.Config{})
	session := "ts-sdk"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a safety net, generous for a busy machine
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "interop.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ASKD_URL="+srv.URL, "ASKD_TOKEN="+srv.AgentToken, "ASKD_SESSION="+session)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan map[string]json.RawMessage, 8)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
	}()
	a := pending(t, srv, session, 1)[0]
	// Answer once the client says a progress notification reached it.
	got := map[string]json.RawMessage{}
	for m := range lines {
		var step string
		json.Unmarshal(m["step"], &step)
		got[step] = m["value"]
		if step == "progress" {
			break
		}
	}
	if got["progress"] == nil {
		t.Fatalf("the client ended before any progress notification reached it: %v\n%s", got, stderr.String())
	}
	answer(t, srv, a.ID, &askd.Answer{Answers: map[string]askd.Choice{"Which database?": {Values: []string{"Postgres"}}}})

	for m := range lines {
		var step string
		json.Unmarshal(m["step"], &step)
		got[step] = m["value"]
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var name string
	json.Unmarshal(got["version"], &name)
	if name != "askd" {
		t.Errorf("server name %q", name)
	}
	var tools []struct {
		Name                 string `json:"name"`
		AdditionalProperties *bool  `json:"additionalProperties"`
	}
	json.Unmarshal(got["tools"], &tools)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
		if tl.AdditionalProperties == nil || *tl.AdditionalProperties {
			t.Errorf("%s: additionalProperties not false", tl.Name)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, sixTools) {
		t.Errorf("tools %v", names)
	}
	var res struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
		Text              string          `json:"text"`
		IsError           bool            `json:"isError"`
		Progress          int             `json:"progress"`
	}
	if err := json.Unmarshal(got["result"], &res); err != nil {
		t.Fatalf("result %s: %v\n%s", got["result"], err, stderr.String())
	}
	var sc questionOut
	json.Unmarshal(res.StructuredContent, &sc)
	if res.IsError || sc.Answers["Which database?"] != "Postgres" || !jsonEqual(t, []byte(res.Text), res.StructuredContent) {
		t.Fatalf("result %s", got["result"])
	}
	if res.Progress == 0 {
		t.Errorf("no progress notifications reached the TypeScript client")
	}
}

// tsClientDir installs the TypeScript SDK once into the user's cache (reused
// by later runs) and returns the directory.
func tsClientDir(t *testing.T, npm string) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "askd-test", "ts-sdk-1.32.2")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err == nil {
		return dir
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"askd-interop","private":true,"type":"module"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--silent", tsSDK)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install %s: %v\n%s", tsSDK, err, out)
	}
	return dir
}
