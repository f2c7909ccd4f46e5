package hookcmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/testserver"
)

// The hooks' inputs, as each CLI sends them (shared/reference/other-clis.md).
var agentInputs = map[app.CLI]struct{ gate, gateEvent, stop, stopEvent string }{
	app.CLICopilot: {
		`{"sessionId":"c-1","timestamp":1796342400000,"cwd":"/home/u/p","toolName":"bash","toolInput":{"command":"make deploy"}}`, "permissionRequest",
		`{"sessionId":"c-1","timestamp":1796342400000,"cwd":"/home/u/p","transcriptPath":"/home/u/t.jsonl","stopReason":"end_turn","stop_hook_active":false}`, "agentStop",
	},
	app.CLIQwen: {
		`{"session_id":"q-1","hook_event_name":"PreToolUse","permission_mode":"yolo","tool_name":"run_shell_command","tool_input":{"command":"make deploy"},"tool_use_id":"toolu_1"}`, "PreToolUse",
		`{"session_id":"q-1","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Done."}`, "Stop",
	},
	app.CLIGemini: {
		`{"session_id":"g-1","hook_event_name":"BeforeTool","timestamp":"2026-12-01T10:00:00.000Z","tool_name":"run_shell_command","tool_input":{"command":"make deploy"}}`, "BeforeTool",
		`{"session_id":"g-1","hook_event_name":"AfterAgent","prompt":"Deploy","prompt_response":"Done.","stop_hook_active":false}`, "AfterAgent",
	},
	app.CLIOpenCode: {
		`{"hook_event_name":"tool.execute.before","session_id":"ses_1","tool_name":"bash","tool_input":{"command":"make deploy"},"tool_use_id":"call_1"}`, "tool.execute.before",
		`{"hook_event_name":"session.idle","session_id":"ses_1"}`, "session.idle",
	},
}

// denyOf reads a CLI's deny from a pre-tool hook's output: ok is false for
// anything else.
func denyOf(c app.CLI, out string) (reason string, ok bool) {
	var r struct {
		Behavior, Message, Decision, Reason string
		HookSpecificOutput                  struct {
			HookEventName, PermissionDecision, PermissionDecisionReason string
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		return "", false
	}
	switch c {
	case app.CLICopilot:
		return r.Message, r.Behavior == "deny" && r.Message != ""
	case app.CLIQwen:
		h := r.HookSpecificOutput
		return h.PermissionDecisionReason, h.HookEventName == "PreToolUse" && h.PermissionDecision == "deny" && h.PermissionDecisionReason != ""
	}
	return r.Reason, r.Decision == "deny" && r.Reason != ""
}

// askdHook runs askd hook with args, the environment env and input on stdin.
func askdHook(t *testing.T, args []string, env map[string]string, input string) (stdout, stderr string, status int) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &cli.Env{Stdin: strings.NewReader(input), Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] }}
	err := Command(t.Context(), e, args)
	if err != nil {
		fmt.Fprintf(&errOut, "askd: %v\n", err) // as main prints it
	}
	return out.String(), errOut.String(), cli.ExitCode(err)
}

// stand is a stand-in askd answering every request with status and body;
// with status 0 it never answers, until the request goes.
func stand(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status == 0 {
			io.Copy(io.Discard, r.Body) // read, so that the server hears the client go
			<-r.Context().Done()
			return
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// closedPort is an address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// shortTimeouts lets a test's hook timeout be a second.
func shortTimeouts(t *testing.T) {
	t.Helper()
	minTimeout, margin := minHookTimeout, minMargin
	minHookTimeout, minMargin = 500*time.Millisecond, 100*time.Millisecond
	t.Cleanup(func() { minHookTimeout, minMargin = minTimeout, margin })
}

// TestAgentHookFailsClosed: whatever keeps askd's decision from the CLI's
// pre-tool hook is the CLI's own deny, exit status 0, with a reason the
// model reads; the next-prompt hook fails as a hook error (status 1, a line
// on stderr, nothing on stdout), which decides nothing.
func TestAgentHookFailsClosed(t *testing.T) {
	shortTimeouts(t)
	token := "askd_a_test"
	refusing := stand(t, http.StatusUnauthorized, `{"error":"unauthorized: no such token","code":"unauthorized"}`)
	failing := stand(t, http.StatusInternalServerError, `{"error":"internal error","code":"internal"}`)
	garbled := stand(t, http.StatusOK, `<html>askd</html>`)
	listing := stand(t, http.StatusOK, `[{"decision":"allow"}]`)
	silent := stand(t, 0, "")
	down := closedPort(t)
	cases := []struct {
		name  string
		env   map[string]string
		args  []string
		input string // "" for the CLI's own
		says  string
	}{
		{"no token", map[string]string{}, nil, "", "ASKD_TOKEN is not set where the agent runs"},
		{"askd unreachable", map[string]string{"ASKD_TOKEN": token, "ASKD_URL": down}, nil, "", "nothing answers there"},
		{"token refused", map[string]string{"ASKD_TOKEN": token, "ASKD_URL": refusing}, nil, "", "unauthorized: no such token"},
		{"askd erring", map[string]string{"ASKD_TOKEN": token, "ASKD_URL": failing}, nil, "", "internal error"},
		{"a reply not JSON", map[string]string{"ASKD_TOKEN": token, "ASKD_URL": garbled}, nil, "", "decode"},
		{"a reply not an object", map[string]string{"ASKD_TOKEN": token, "ASKD_URL": listing}, nil, "", "not a JSON object"},
		{"no reply before the hook timeout", map[string]string{"ASKD_TOKEN": token, "ASKD_URL": silent}, []string{"--timeout", "1s"}, "", "hook timeout (1s)"},
		{"input not JSON", map[string]string{"ASKD_TOKEN": token, "ASKD_URL": silent}, nil, "{", "not JSON"},
		{"a bad flag", map[string]string{"ASKD_TOKEN": token, "ASKD_URL": silent}, []string{"--timeout", "soon"}, "", "soon"},
		{"a human token", map[string]string{"ASKD_TOKEN": "askd_h_test", "ASKD_URL": silent}, nil, "", "human token"},
	}
	for _, c := range []app.CLI{app.CLICopilot, app.CLIQwen, app.CLIGemini, app.CLIOpenCode} {
		in := agentInputs[c]
		for _, tc := range cases {
			input := tc.input
			if input == "" {
				input = in.gate
			}
			t.Run(string(c)+"/gate/"+tc.name, func(t *testing.T) {
				args := append([]string{"--cli", string(c), "--event", in.gateEvent}, tc.args...)
				stdout, stderr, status := askdHook(t, args, tc.env, input)
				reason, ok := denyOf(c, stdout)
				if status != 0 || !ok || !strings.Contains(reason, tc.says) || !strings.Contains(reason, "This call was not run") || !strings.Contains(stderr, tc.says) {
					t.Errorf("status %d, stdout %q, stderr %q; want status 0 and %s's deny saying %q", status, stdout, stderr, c, tc.says)
				}
			})
			input = tc.input
			if input == "" {
				input = in.stop
			}
			t.Run(string(c)+"/next-prompt/"+tc.name, func(t *testing.T) {
				args := append([]string{"--cli", string(c), "--event", in.stopEvent}, tc.args...)
				stdout, stderr, status := askdHook(t, args, tc.env, input)
				if status != 1 || stdout != "" || !strings.Contains(stderr, tc.says) {
					t.Errorf("status %d, stdout %q, stderr %q; want status 1, nothing on stdout, stderr saying %q", status, stdout, stderr, tc.says)
				}
			})
		}
	}
}

// TestAgentHookPosts: the hook posts its input as it came to /hooks/CLI,
// the event and askd's wait in the query (the CLI's timeout less a margin
// for a pre-tool hook; --wait within it for a next-prompt hook), the token
// and session from the environment, and prints askd's reply as it is. The
// event comes from --event, else from the input.
func TestAgentHookPosts(t *testing.T) {
	type seen struct{ uri, auth, session, body string }
	got := make(chan seen, 1)
	reply := `{"decision":"allow"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- seen{r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("Askd-Session"), string(body)}
		io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	env := map[string]string{"ASKD_TOKEN": "askd_a_test", "ASKD_SESSION": "fix-login", "ASKD_URL": srv.URL}
	for _, c := range []struct {
		args  []string
		input string
		uri   string
	}{
		{[]string{"--cli", "gemini", "--event", "BeforeTool", "--timeout", "10m"}, agentInputs[app.CLIGemini].gate, "/hooks/gemini?event=BeforeTool&wait=9m40s"},
		{[]string{"--cli", "gemini"}, agentInputs[app.CLIGemini].gate, "/hooks/gemini?event=BeforeTool&wait=48s"},
		{[]string{"--cli", "copilot", "--event", "permissionRequest"}, agentInputs[app.CLICopilot].gate, "/hooks/copilot?event=permissionRequest&wait=24s"},
		{[]string{"--cli", "qwen", "--event", "Stop", "--wait", "5m", "--timeout", "6m"}, agentInputs[app.CLIQwen].stop, "/hooks/qwen?event=Stop&wait=5m0s"},
		{[]string{"--cli", "qwen", "--event", "Stop", "--wait", "10m", "--timeout", "6m"}, agentInputs[app.CLIQwen].stop, "/hooks/qwen?event=Stop&wait=5m40s"},
		{[]string{"--cli", "opencode", "--event", "session.idle"}, agentInputs[app.CLIOpenCode].stop, "/hooks/opencode?event=session.idle"},
	} {
		stdout, stderr, status := askdHook(t, c.args, env, c.input)
		if status != 0 || stdout != reply+"\n" {
			t.Errorf("%v: status %d, stdout %q, stderr %q", c.args, status, stdout, stderr)
		}
		if s := <-got; s != (seen{c.uri, "Bearer askd_a_test", "fix-login", c.input}) {
			t.Errorf("%v: the server saw %+v", c.args, s)
		}
	}
	// --url: the server, whatever ASKD_URL says.
	env["ASKD_URL"] = closedPort(t)
	args := []string{"--cli", "qwen", "--event", "Stop", "--url", srv.URL}
	if stdout, stderr, status := askdHook(t, args, env, agentInputs[app.CLIQwen].stop); status != 0 || stdout != reply+"\n" {
		t.Errorf("%v: status %d, stdout %q, stderr %q", args, status, stdout, stderr)
	}
	<-got
}

// TestAgentHookWaitEndsFirst: against askd itself, a pre-tool hook with a
// timeout of a second gets askd's own deny before it: no one decided in
// the time the CLI gives its hook. The call is not approved, and its
// approval stays in the inbox, to be told once decided.
func TestAgentHookWaitEndsFirst(t *testing.T) {
	shortTimeouts(t)
	srv := testserver.Start(t, testserver.Options{})
	env := map[string]string{"ASKD_TOKEN": srv.AgentToken, "ASKD_SESSION": "s1", "ASKD_URL": srv.URL}
	stdout, stderr, status := askdHook(t, []string{"--cli", "gemini", "--event", "BeforeTool", "--timeout", "1s"}, env, agentInputs[app.CLIGemini].gate)
	reason, ok := denyOf(app.CLIGemini, stdout)
	if status != 0 || !ok || !strings.Contains(reason, "the time Gemini CLI gives its hook, so this was not run") {
		t.Fatalf("status %d, stdout %q, stderr %q; want askd's deny", status, stdout, stderr)
	}
	open, err := srv.Agent("s1").Open(t.Context())
	if err != nil || len(open) != 1 || !open[0].Pending() || !open[0].ToBeTold || open[0].AgentTool != "run_shell_command" {
		t.Fatalf("open asks %+v, %v; want the approval pending, to be told", open, err)
	}
}

// TestAgentCommandLine: the command line askd install writes for each CLI's
// hooks runs askd hook --cli; under plain POSIX sh (dash) and bash, with
// askd not on PATH, the pre-tool hook prints the CLI's deny saying so and
// exits 0, and the next-prompt hook says so on stderr and exits 1.
func TestAgentCommandLine(t *testing.T) {
	if got, want := AgentCommandLine("https://askd.example", false, app.CLIGemini, "AfterAgent", "--wait", "5m", "--timeout", "6m"),
		`command -v askd >/dev/null 2>&1 || { echo "`+missingAskd+`" >&2; exit 1; }; exec askd hook --cli gemini --event AfterAgent --default-url 'https://askd.example' --wait 5m --timeout 6m`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var shells [][]string
	for _, sh := range [][]string{{"sh"}, {"dash"}, {"bash", "--posix"}, {"bash"}} {
		if _, err := exec.LookPath(sh[0]); err == nil {
			shells = append(shells, sh)
		}
	}
	for _, c := range []app.CLI{app.CLICopilot, app.CLIQwen, app.CLIGemini, app.CLIOpenCode} {
		in := agentInputs[c]
		gate := AgentCommandLine(cli.DefaultURL, false, c, in.gateEvent, "--timeout", "10m")
		stop := AgentCommandLine(cli.DefaultURL, true, c, in.stopEvent)
		if !IsAskd(gate) || !IsAskd(stop) || !strings.HasSuffix(gate, "; exec askd hook --cli "+string(c)+" --event "+in.gateEvent+" --timeout 10m") ||
			!strings.HasSuffix(stop, "; exec askd hook --cli "+string(c)+" --event "+in.stopEvent+" --url '"+cli.DefaultURL+"'") {
			t.Errorf("%s: %s\n%s", c, gate, stop)
		}
		for _, sh := range shells {
			run := func(command, input string) (string, string, int) {
				cmd := exec.Command(sh[0], append(sh[1:], "-c", command)...)
				cmd.Env = []string{"PATH=/nowhere", "ASKD_TOKEN=askd_a_test"}
				cmd.Stdin = strings.NewReader(input)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				_ = cmd.Run()
				return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
			}
			stdout, stderr, status := run(gate, in.gate)
			if reason, ok := denyOf(c, stdout); status != 0 || !ok || reason != missingAskdDeny {
				t.Errorf("%s under %v, askd not on PATH: status %d, stdout %q, stderr %q; want the deny", c, sh, status, stdout, stderr)
			}
			stdout, stderr, status = run(stop, in.stop)
			if status != 1 || stdout != "" || !strings.Contains(stderr, "askd is not on PATH") {
				t.Errorf("%s's next-prompt hook under %v, askd not on PATH: status %d, stdout %q, stderr %q", c, sh, status, stdout, stderr)
			}
		}
	}
	if strings.ContainsRune(missingAskdDeny, '\'') {
		t.Error("the deny goes in single quotes: it must hold none")
	}
}
