package agentcli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/testserver"
)

// The flows of issue 41 for Copilot, Qwen Code, Gemini CLI and OpenCode,
// each in a project and home wired only by askd install NAME and run by
// README's headless line (agent.readme), against the CLI's scripted model.
// Until askd install NAME is in the askd binary, each skips, saying so
// (requireInstall).
//
// What they take from askd install NAME, beside SPEC §18: --url (the
// server, as install claude and install codex take it), --stop-wait (how
// long the next-prompt hook waits for answers, as theirs) and
// --approval-timeout (the server's, which install sizes the CLI's hook
// timeout from, as install codex does); hooks at user scope, where the
// headless line runs them.

// requireInstall skips the test, loudly, while the askd binary has no
// askd install NAME (askd install NAME -h fails).
func requireInstall(t *testing.T, a *agent) {
	t.Helper()
	if _, _, code := testserver.Run(t, "install", a.name, "-h"); code != 0 {
		t.Skipf("SKIPPING: askd install %s is not in this askd (askd install %s -h: exit status %d); "+
			"this flow runs once it is (issue 41)", a.name, a.name, code)
	}
}

// wiredAgent is a home and a project wired only by askd install NAME, with
// what a person had set up for the CLI before (its scripted model).
type wiredAgent struct {
	*agent
	home, project string
	modelEnv      []string
}

// wire makes a home and a project, points the CLI at model (agent.setUp),
// then runs askd install NAME --url url args... in the project with that
// home, as README says.
func wire(t *testing.T, a *agent, url string, model *modelScript, args ...string) *wiredAgent {
	t.Helper()
	w := &wiredAgent{agent: a, home: t.TempDir(), project: t.TempDir()}
	w.modelEnv = a.setUp(t, w.home, model)
	args = append([]string{"install", a.name, "--url", url}, args...)
	cmd := exec.Command(testserver.Binary(t), args...)
	cmd.Dir = w.project
	cmd.Env = append(os.Environ(), "HOME="+w.home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("askd %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("askd %s:\n%s", strings.Join(args, " "), out)
	if a.prepare != nil {
		a.prepare(t, w.home, w.project)
	}
	return w
}

// start runs README's headless line for prompt in the wired project, in
// session, in the environment cliEnv gives. Without askd on PATH,
// OpenCode's line (askd opencode) cannot start, so the CLI's own runs.
func (w *wiredAgent) start(t *testing.T, o runOpts, session, prompt string) *agentRun {
	t.Helper()
	program, args := w.readme[0], append(append([]string{}, w.readme[1:]...), prompt)
	if o.noAskd && program == "askd" {
		program, args = w.bin, w.args(prompt)
	}
	switch program {
	case "askd":
		program = testserver.Binary(t)
	case w.bin:
		program = w.path(t)
	}
	return startAgent(t, w.name, program, args, w.project, cliEnv(t, w.agent, w.home, session, o, w.modelEnv))
}

// TestOtherAgentsFlows runs the flows of issue 41 on each of the four
// CLIs, side by side, with one askd and one scripted-model server.
func TestOtherAgentsFlows(t *testing.T) {
	s := startAskd(t)
	at := runOpts{url: s.URL, token: s.Agent}
	second := pushPolicy(t, s)
	for _, a := range otherAgents {
		t.Run("approval/"+a.name, func(t *testing.T) {
			t.Parallel()
			approvalFlow(t, s, at, a)
		})
		t.Run("answer as the next prompt/"+a.name, func(t *testing.T) {
			t.Parallel()
			nextPromptFlow(t, s, at, a)
		})
		t.Run("push policy/"+a.name, func(t *testing.T) {
			t.Parallel()
			pushPolicyFlow(t, s, at, second, a)
		})
	}
	t.Run("fail closed", func(t *testing.T) {
		t.Parallel()
		failClosedFlows(t, s)
	})
}

// pushPolicy makes the policy the push flows run under, 2 approvals for
// Bash commands starting with git push, for every agent, and a second
// person to approve beside the first: the client of their token.
func pushPolicy(t *testing.T, s *askdServer) *client.Client {
	t.Helper()
	in := &askd.PolicyInput{Match: askd.MatchPrefix, Tool: "Bash", Prefix: "git push", Approvals: 2}
	if _, err := s.person().CreatePolicy(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	out := strings.Fields(testserver.Output(t, "token", "create", "--human", "second-approver", "--db", s.DB))
	return client.New(s.URL, out[len(out)-1])
}

// approvalFlow: a shell command that needs approval becomes an approval
// in the inbox, of Bash with its command line, the CLI's own tool name as
// agent_tool; nothing runs before the person decides. Approved, it runs
// exactly once; rejected, it never runs and the model's next request
// carries the person's reason.
func approvalFlow(t *testing.T, s *askdServer, at runOpts, a *agent) {
	requireInstall(t, a)
	session := "approval-" + a.name
	reason := "Not today: the release is frozen."
	model := newModel(t, func(i int, req *modelRequest) []block {
		switch i {
		case 0:
			return []block{{Tool: a.shell, Input: a.shellInput("echo ran >> approved.txt")}}
		case 1:
			return []block{{Tool: a.shell, Input: a.shellInput("echo ran >> rejected.txt")}}
		default:
			return []block{{Text: "Done."}}
		}
	})
	w := wire(t, a, s.URL, model)
	run := w.start(t, at, session, "Write the notes")
	approved := s.created(t, run, session, 1)
	wantShellApproval(t, s, a, approved, "echo ran >> approved.txt")
	if _, err := os.Stat(filepath.Join(w.project, "approved.txt")); err == nil {
		t.Fatal("the command ran before anyone approved it")
	}
	if _, err := s.person().Answer(context.Background(), approved.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	rejected := s.created(t, run, session, 2)
	wantShellApproval(t, s, a, rejected, "echo ran >> rejected.txt")
	if _, err := s.person().Answer(context.Background(), rejected.ID, &askd.Answer{Decision: askd.DecisionRejected, Comment: reason}); err != nil {
		t.Fatal(err)
	}
	run.wait(t)
	model.logTimes(t, run)
	if data, err := os.ReadFile(filepath.Join(w.project, "approved.txt")); err != nil || string(data) != "ran\n" {
		t.Errorf("approved.txt: %q (%v), want the approved command to have run once", data, err)
	}
	if _, err := os.Stat(filepath.Join(w.project, "rejected.txt")); err == nil {
		t.Error("the rejected command ran")
	}
	turns := model.agentTurns()
	if len(turns) != 3 {
		t.Fatalf("%d agent turns, want 3 (two commands, then the end)", len(turns))
	}
	if told := turns[2].sinceReply(); !strings.Contains(told, reason) {
		t.Errorf("the model's request after the rejection does not carry the person's reason %q:\n%s", reason, told)
	}
	if asks := sessionAsks(t, s, session); len(asks) != 2 {
		t.Errorf("session %s holds %d asks, want the two approvals", session, len(asks))
	}
}

// nextPromptFlow: the model posts an attention ask with askd's ask tool
// (which raises no card: the session's one ask is the decision) and ends
// its turn; the person answers after that; the answer comes back as the
// model's next turn, and the ask's history says it was told exactly once.
func nextPromptFlow(t *testing.T, s *askdServer, at runOpts, a *agent) {
	requireInstall(t, a)
	session := "next-prompt-" + a.name
	model := newModel(t, func(i int, req *modelRequest) []block {
		switch i {
		case 0:
			return []block{{Tool: a.tool("ask"), Input: map[string]any{
				"kind": "decision", "title": "Which database for the cache?",
				"options": []map[string]string{{"label": "Redis"}, {"label": "Memcached"}},
			}}}
		case 1:
			return []block{{Text: "I asked which database to use; waiting for the answer."}}
		default:
			return []block{{Text: "Going with the person's choice."}}
		}
	})
	w := wire(t, a, s.URL, model, "--stop-wait", "2m")
	run := w.start(t, at, session, "Set up the cache")
	ask := s.created(t, run, session, 1)
	if ask.Kind != askd.KindDecision {
		t.Fatalf("the first ask is %s, want the decision (askd's own tool raises no card): %+v", ask.Kind, ask)
	}
	model.waitReplied(t, run, 2) // the turn has ended
	if _, err := s.person().Answer(context.Background(), ask.ID, &askd.Answer{Answer: "Memcached"}); err != nil {
		t.Fatal(err)
	}
	run.wait(t)
	model.logTimes(t, run)
	turns := model.agentTurns()
	if len(turns) != 3 {
		t.Fatalf("%d agent turns, want 3 (the ask, the end of the turn, the answer as the next prompt)", len(turns))
	}
	if told := turns[2].sinceReply(); !strings.Contains(told, "Memcached") {
		t.Fatalf("the third turn does not carry the person's answer:\n%s", told)
	}
	told(t, s, ask.ID)
	onlyAsk(t, s, session)
}

// pushPolicyFlow: one policy, 2 approvals for Bash commands starting with
// git push (made by TestOtherAgentsFlows), covers the CLI's shell: its
// push waits for two people, and runs once both have approved.
func pushPolicyFlow(t *testing.T, s *askdServer, at runOpts, second *client.Client, a *agent) {
	requireInstall(t, a)
	ctx := context.Background()
	session := "push-" + a.name
	model := newModel(t, callThen(a.shell, a.shellInput("git push origin main"), "Pushed."))
	w := wire(t, a, s.URL, model)
	remote := gitProject(t, w.project)
	run := w.start(t, at, session, "Push the release")
	ask := s.created(t, run, session, 1)
	wantShellApproval(t, s, a, ask, "git push origin main")
	if ask.ApprovalsNeeded != 2 {
		t.Fatalf("the push needs %d approvals, want the policy's 2", ask.ApprovalsNeeded)
	}
	if _, err := s.person().Answer(ctx, ask.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	if d, err := s.person().Show(ctx, ask.ID); err != nil || d.Status != askd.StatusPending || len(d.Approvals) != 1 {
		t.Fatalf("after one approval: %+v (%v), want it pending with one approval", d, err)
	}
	if got := gitRef(t, remote, "refs/heads/main"); got != "" {
		t.Fatalf("the push ran after one approval: main is %s", got)
	}
	if _, err := second.Answer(ctx, ask.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	run.wait(t)
	model.logTimes(t, run)
	if got, want := gitRef(t, remote, "refs/heads/main"), gitRef(t, w.project, "HEAD"); got != want {
		t.Fatalf("after two approvals the remote's main is %q, want the pushed %s", got, want)
	}
}

// failClosedFlows: under the CLIs whose headless line runs every tool
// unasked (yolo), askd's pre-tool hook is the only gate, so when askd
// cannot decide, the gated command never runs (its marker file stays
// absent) and the model is told why: askd stopped, askd not on PATH, and
// no answer before the CLI's hook timeout (a server and an install whose
// approval timeout is 3 seconds; install sizes the CLI's hook timeout
// from it, askd's wait ends first).
func failClosedFlows(t *testing.T, s *askdServer) {
	quick := startAskd(t, "--approval-timeout", "3s")
	for _, a := range otherAgents {
		if !a.yolo {
			continue
		}
		stopped := stoppedURL(t)
		cases := []struct {
			name string
			gatedCase
		}{
			{"askd stopped", gatedCase{url: stopped, run: runOpts{url: stopped, token: s.Agent}, why: []string{"askd"}}},
			{"askd not on PATH", gatedCase{url: s.URL, run: runOpts{url: s.URL, token: s.Agent, noAskd: true}, why: []string{"askd"}}},
			{"no answer before the hook timeout", gatedCase{url: quick.URL, run: runOpts{url: quick.URL, token: quick.Agent},
				asks: quick, install: []string{"--approval-timeout", "3s"}, why: []string{"askd", "answer"}}},
		}
		for _, c := range cases {
			t.Run(c.name+"/"+a.name, func(t *testing.T) {
				t.Parallel()
				requireInstall(t, a)
				gatedFlow(t, a, "closed-"+strings.ReplaceAll(c.name, " ", "-")+"-"+a.name, c.gatedCase)
			})
		}
	}
}

// gatedCase is a run in which askd cannot decide on a command.
type gatedCase struct {
	url     string   // the askd install NAME is told
	install []string // more flags for it
	run     runOpts
	asks    *askdServer // where the command becomes an approval nobody answers; nil: none can
	why     []string    // the reason the model is told has one of these words
}

// gatedFlow runs, in session, a CLI wired to askd at c.url whose model
// runs a command once, and checks that it never ran and that the model's
// next request says why.
func gatedFlow(t *testing.T, a *agent, session string, c gatedCase) {
	t.Helper()
	model := newModel(t, callThen(a.shell, a.shellInput("echo ran >> gated.txt"), "Done."))
	w := wire(t, a, c.url, model, c.install...)
	run := w.start(t, c.run, session, "Write the note")
	if c.asks != nil {
		wantShellApproval(t, c.asks, a, c.asks.created(t, run, session, 1), "echo ran >> gated.txt")
	}
	if _, err := run.end(t); err != nil {
		t.Logf("%s ended: %v", a.name, err)
	}
	model.logTimes(t, run)
	if _, err := os.Stat(filepath.Join(w.project, "gated.txt")); err == nil {
		t.Fatal("the gated command ran")
	}
	turns := model.agentTurns()
	if len(turns) < 2 {
		t.Fatalf("%d agent turns: the model was never told what became of its command", len(turns))
	}
	if len(turns) > 3 {
		// A next-prompt hook that denies when askd cannot answer
		// (exit 2) makes Gemini CLI and Qwen Code run turn after turn.
		t.Errorf("%d agent turns, want at most 3: the run went on after the model was told", len(turns))
	}
	told := strings.ToLower(turns[1].sinceReply())
	for _, word := range c.why {
		if strings.Contains(told, word) {
			return
		}
	}
	t.Fatalf("the model's next request does not say why the command did not run (with one of %q):\n%s", c.why, told)
}

// wantShellApproval checks that ask is the approval of the CLI's shell
// running command: tool Bash with the command line as command, whatever
// the CLI calls its shell, and the CLI's own name as agent_tool.
func wantShellApproval(t *testing.T, s *askdServer, a *agent, ask *askd.Ask, command string) {
	t.Helper()
	var payload struct{ Command string }
	if err := json.Unmarshal(ask.Payload, &payload); ask.Kind != askd.KindApproval || ask.ToolName != "Bash" || err != nil || payload.Command != command {
		t.Fatalf("ask %d: %s of %q %s, want an approval of Bash with command %q", ask.ID, ask.Kind, ask.ToolName, ask.Payload, command)
	}
	if got := agentTool(t, s, ask.ID); got != a.shell {
		t.Errorf("ask %d: agent_tool %q, want %s's own name %q", ask.ID, got, a.name, a.shell)
	}
}

// agentTool reads an ask's agent_tool through the API as JSON: the field
// is newer than askd.Ask.
func agentTool(t *testing.T, s *askdServer, id int64) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/api/asks/%d", s.URL, id), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Human)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ask struct {
		AgentTool string `json:"agent_tool"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ask); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/asks/%d: %s %v", id, resp.Status, err)
	}
	return ask.AgentTool
}

// sessionAsks lists every ask of session.
func sessionAsks(t *testing.T, s *askdServer, session string) []*askd.Ask {
	t.Helper()
	asks, err := s.person().List(context.Background(), client.ListOptions{Session: session})
	if err != nil {
		t.Fatal(err)
	}
	return asks
}

// stoppedURL is the address of an askd that has stopped: nothing listens
// there any more.
func stoppedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	return url
}

// gitProject makes dir a git repository with one commit on main, whose
// origin is a new bare repository, which it returns.
func gitProject(t *testing.T, dir string) (remote string) {
	t.Helper()
	remote = filepath.Join(t.TempDir(), "origin.git")
	git(t, "", "init", "-q", "--bare", "-b", "main", remote)
	git(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "RELEASE"), []byte("1.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "RELEASE")
	git(t, dir, "-c", "user.name=askd test", "-c", "user.email=test@example.invalid", "commit", "-q", "-m", "Release 1.0")
	git(t, dir, "remote", "add", "origin", remote)
	return remote
}

// gitRef is what ref names in the repository at dir, "" if nothing.
func gitRef(t *testing.T, dir, ref string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "rev-parse", "--verify", "-q", ref).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
