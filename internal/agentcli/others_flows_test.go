package agentcli_test

import (
	"context"
	"encoding/json"
	"net"
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
// README's headless line (agent.readme, which README and install's output
// must say too), against the CLI's scripted model, all of them with one
// askd and one scripted-model server.

// wiredAgent is a home and a project wired only by askd install NAME, with
// what a person had set up for the CLI before (its scripted model).
type wiredAgent struct {
	*agent
	home, project string
	modelEnv      []string
}

// wire makes a home and a project, points the CLI at model (agent.setUp),
// then runs askd install NAME --url url args... in the project with that
// home and askd on PATH, as README says, and checks that install gives
// the headless line the test runs.
func wire(t *testing.T, a *agent, url string, model *modelScript, args ...string) *wiredAgent {
	t.Helper()
	w := &wiredAgent{agent: a, home: t.TempDir(), project: t.TempDir()}
	w.modelEnv = a.setUp(t, w.home, model)
	args = append([]string{"install", a.name, "--url", url}, args...)
	cmd := exec.Command(testserver.Binary(t), args...)
	cmd.Dir = w.project
	cmd.Env = []string{
		"PATH=" + filepath.Dir(testserver.Binary(t)) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + w.home,
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("askd %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("askd %s:\n%s", strings.Join(args, " "), out)
	if line := "Headless: " + strings.Join(a.readme, " ") + ` "..."`; !strings.Contains(string(out), line) {
		t.Errorf("askd install %s does not say the headless line %q", a.name, line)
	}
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
// CLIs, side by side, with one askd and one scripted-model server: a
// shell command becomes an approval (approvalFlow), askd's own tools raise
// no card and an answer after the turn comes back as the next one
// (nextPromptFlow), one policy covers every shell (pushPolicyFlow), and
// the yolo CLIs fail closed (failClosedFlows). Each run logs when its
// model requests came and its processor time.
func TestOtherAgentsFlows(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range otherAgents {
		if line := strings.Join(a.readme, " ") + ` "`; !strings.Contains(string(readme), line) {
			t.Errorf("README does not give %s's headless line %s...", a.name, line)
		}
	}
	s := startAskd(t)
	at := runOpts{url: s.URL, token: s.Agent}
	second := pushPolicy(t, s)
	failClosedFlows(t, s) // first: its longest run waits while the others run
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
	wantShellApproval(t, a, approved, "echo ran >> approved.txt")
	if _, err := os.Stat(filepath.Join(w.project, "approved.txt")); err == nil {
		t.Fatal("the command ran before anyone approved it")
	}
	if _, err := s.person().Answer(context.Background(), approved.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	rejected := s.created(t, run, session, 2)
	wantShellApproval(t, a, rejected, "echo ran >> rejected.txt")
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

// nextPromptFlow: the model asks the person a question with askd's
// ask_user_question and reads the answer as the tool's result; then it
// posts an attention ask with askd's ask and ends its turn. Neither of
// askd's own tools raises a card (the session's asks are the question and
// the decision). The person answers the decision after the turn ended; the
// answer comes back as the model's next turn, and the ask's history says
// it was told exactly once.
func nextPromptFlow(t *testing.T, s *askdServer, at runOpts, a *agent) {
	ctx := context.Background()
	session := "next-prompt-" + a.name
	question := "Which color should the button be?"
	model := newModel(t, func(i int, req *modelRequest) []block {
		switch i {
		case 0:
			return []block{{Tool: a.tool("ask_user_question"), Input: map[string]any{"questions": []map[string]any{{
				"question": question, "header": "Color", "multiSelect": false,
				"options": []map[string]string{{"label": "Blue", "description": "Calm"}, {"label": "Red", "description": "Loud"}},
			}}}}}
		case 1:
			return []block{{Tool: a.tool("ask"), Input: map[string]any{
				"kind": "decision", "title": "Which database for the cache?",
				"options": []map[string]string{{"label": "Redis"}, {"label": "Memcached"}},
			}}}
		case 2:
			return []block{{Text: "I asked which database to use; waiting for the answer."}}
		default:
			return []block{{Text: "Going with the person's choice."}}
		}
	})
	w := wire(t, a, s.URL, model)
	run := w.start(t, at, session, "Style the button, then set up the cache")
	q := s.created(t, run, session, 1)
	if q.Kind != askd.KindQuestion || len(q.Questions) != 1 || q.Questions[0].Question != question {
		t.Fatalf("the first ask is %s %+v, want the question (askd's own tool raises no card)", q.Kind, q)
	}
	answer := &askd.Answer{Answers: map[string]askd.Choice{question: {Values: []string{"Red"}}}}
	if _, err := s.person().Answer(ctx, q.ID, answer); err != nil {
		t.Fatal(err)
	}
	ask := s.created(t, run, session, 2)
	if ask.Kind != askd.KindDecision {
		t.Fatalf("the second ask is %s %+v, want the decision (askd's own tool raises no card)", ask.Kind, ask)
	}
	model.waitReplied(t, run, 3) // the turn has ended
	if _, err := s.person().Answer(ctx, ask.ID, &askd.Answer{Answer: "Memcached"}); err != nil {
		t.Fatal(err)
	}
	run.wait(t)
	model.logTimes(t, run)
	turns := model.agentTurns()
	if len(turns) != 4 {
		t.Fatalf("%d agent turns, want 4 (the question, the ask, the end of the turn, the answer as the next prompt)", len(turns))
	}
	if !turns[0].offers(a.tool("ask_user_question")) {
		t.Errorf("the model was not offered %s: %v", a.tool("ask_user_question"), turns[0].Tools)
	}
	if got := turns[1].sinceReply(); !strings.Contains(got, `"Red"`) || !strings.Contains(got, question) {
		t.Errorf("the second turn does not carry the person's answer to the question:\n%s", got)
	}
	if got := turns[3].sinceReply(); !strings.Contains(got, "Memcached") {
		t.Fatalf("the fourth turn does not carry the person's answer:\n%s", got)
	}
	told(t, s, ask.ID)
	if asks := sessionAsks(t, s, session); len(asks) != 2 {
		t.Errorf("session %s holds %d asks, want the question and the decision (no card for askd's own tools): %+v", session, len(asks), asks)
	}
}

// pushPolicyFlow: one policy, 2 approvals for Bash commands starting with
// git push (made by TestOtherAgentsFlows), covers the CLI's shell: its
// push waits for two people, and runs once both have approved.
func pushPolicyFlow(t *testing.T, s *askdServer, at runOpts, second *client.Client, a *agent) {
	ctx := context.Background()
	session := "push-" + a.name
	model := newModel(t, callThen(a.shell, a.shellInput("git push origin main"), "Pushed."))
	w := wire(t, a, s.URL, model)
	remote := gitProject(t, w.project)
	run := w.start(t, at, session, "Push the release")
	ask := s.created(t, run, session, 1)
	wantShellApproval(t, a, ask, "git push origin main")
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
// no answer before the CLI's hook timeout.
//
// The hook timeout is the shortest install writes, a minute past the
// approval timeout it is told (1 s), while askd's is 5 minutes: the hook
// has askd give up first (hookcmd's budget, about 49 s), the call is
// denied as not decided in time, and the approval stays in the inbox. Its
// next-prompt hook is told not to wait (--stop-wait 0), or it would wait
// for that approval. Qwen's and Gemini's runs wait out that time side by
// side, in one of the test's parallel slots. OpenCode's plugin has no
// timeout: there askd's own approval timeout (a server whose timeout is
// 3 s) ends the wait.
//
// OpenCode's plugin posts to askd itself and never runs askd: without
// askd on PATH README's line (askd opencode) cannot start, and opencode
// run --auto, run instead, still puts the command to the person, who
// rejects it.
func failClosedFlows(t *testing.T, s *askdServer) {
	t.Run("fail closed/no answer before the hook timeout", func(t *testing.T) {
		t.Parallel()
		var runs []*gatedRun
		for _, a := range []*agent{qwen, gemini} {
			c := gatedCase{name: "no answer before the hook timeout", url: s.URL, run: runOpts{url: s.URL, token: s.Agent},
				install: []string{"--approval-timeout", "1s", "--stop-wait", "0"},
				asks:    s, stays: true, why: "the time " + a.title + " gives its hook"}
			runs = append(runs, startGated(t, a, c))
		}
		for _, g := range runs {
			g.decide(t)
		}
		for _, g := range runs {
			t.Run(g.a.name, g.check)
		}
	})
	quick := startAskd(t, "--approval-timeout", "3s")
	stopped := stoppedURL(t)
	for _, a := range otherAgents {
		if !a.yolo {
			continue
		}
		cases := []gatedCase{
			{name: "askd stopped", url: stopped, run: runOpts{url: stopped, token: s.Agent}, why: "gave no decision"},
			{name: "askd not on PATH", url: s.URL, run: runOpts{url: s.URL, token: s.Agent, noAskd: true}, why: "not on PATH"},
		}
		if a == opencode {
			reason := "Not without askd's wrapper."
			cases[1].asks, cases[1].reject, cases[1].why = s, reason, reason
			cases = append(cases, gatedCase{name: "no answer before the approval timeout", url: quick.URL,
				run: runOpts{url: quick.URL, token: quick.Agent}, install: []string{"--approval-timeout", "3s"},
				asks: quick, why: "no one decided within 3 seconds"})
		}
		for _, c := range cases {
			t.Run("fail closed/"+c.name+"/"+a.name, func(t *testing.T) {
				t.Parallel()
				g := startGated(t, a, c)
				g.decide(t)
				g.check(t)
			})
		}
	}
}

// gatedCase is a run in which askd cannot decide on a command, or a
// person refuses it.
type gatedCase struct {
	name    string
	url     string   // the askd install NAME is told
	install []string // more flags for it
	run     runOpts
	asks    *askdServer // where the command becomes an approval; nil: none can
	reject  string      // when set, the person rejects that approval, saying this; else no one answers
	stays   bool        // the approval stays pending, to be told once decided
	why     string      // what the model's next request says of why the command did not run, in part
}

// gatedRun is a CLI wired to askd at c.url, whose model runs a command
// once, started in a session of its own.
type gatedRun struct {
	a       *agent
	c       gatedCase
	session string
	w       *wiredAgent
	model   *modelScript
	run     *agentRun
	ask     *askd.Ask // the command's approval, when c.asks
}

func startGated(t *testing.T, a *agent, c gatedCase) *gatedRun {
	t.Helper()
	g := &gatedRun{a: a, c: c, session: "closed-" + strings.ReplaceAll(c.name, " ", "-") + "-" + a.name}
	g.model = newModel(t, callThen(a.shell, a.shellInput("echo ran >> gated.txt"), "Done."))
	g.w = wire(t, a, c.url, g.model, c.install...)
	g.run = g.w.start(t, c.run, g.session, "Write the note")
	return g
}

// decide waits, where the command becomes an approval, for that approval,
// and rejects it when the case says so.
func (g *gatedRun) decide(t *testing.T) {
	t.Helper()
	if g.c.asks == nil {
		return
	}
	g.ask = g.c.asks.created(t, g.run, g.session, 1)
	wantShellApproval(t, g.a, g.ask, "echo ran >> gated.txt")
	if g.c.reject != "" {
		if _, err := g.c.asks.person().Answer(context.Background(), g.ask.ID, &askd.Answer{Decision: askd.DecisionRejected, Comment: g.c.reject}); err != nil {
			t.Fatal(err)
		}
	}
}

// check waits for the run to end and checks that the command never ran
// and that the model's next request says why.
func (g *gatedRun) check(t *testing.T) {
	t.Helper()
	if _, err := g.run.end(t); err != nil {
		t.Logf("%s ended: %v", g.a.name, err)
	}
	g.model.logTimes(t, g.run)
	if _, err := os.Stat(filepath.Join(g.w.project, "gated.txt")); err == nil {
		t.Fatal("the gated command ran")
	}
	turns := g.model.agentTurns()
	if len(turns) < 2 {
		t.Fatalf("%d agent turns: the model was never told what became of its command", len(turns))
	}
	if len(turns) > 3 {
		// A next-prompt hook that denies when askd cannot answer
		// (exit 2) makes Gemini CLI and Qwen Code run turn after turn.
		t.Errorf("%d agent turns, want at most 3: the run went on after the model was told", len(turns))
	}
	if told := turns[1].sinceReply(); !strings.Contains(strings.ToLower(told), strings.ToLower(g.c.why)) {
		t.Fatalf("the model's next request does not say why the command did not run (%q):\n%s", g.c.why, told)
	}
	if g.c.stays {
		if d, err := g.c.asks.person().Show(context.Background(), g.ask.ID); err != nil || d.Status != askd.StatusPending {
			t.Errorf("ask %d after the run: %+v (%v), want it pending in the inbox, to be told once decided", g.ask.ID, d, err)
		}
	}
}

// wantShellApproval checks that ask is the approval of the CLI's shell
// running command: tool Bash with the command line as command, whatever
// the CLI calls its shell, the CLI's own name as agent_tool, and no Edit
// offered unless the CLI runs a person's edit.
func wantShellApproval(t *testing.T, a *agent, ask *askd.Ask, command string) {
	t.Helper()
	var payload struct{ Command string }
	if err := json.Unmarshal(ask.Payload, &payload); ask.Kind != askd.KindApproval || ask.ToolName != "Bash" || err != nil || payload.Command != command {
		t.Fatalf("ask %d: %s of %q %s, want an approval of Bash with command %q", ask.ID, ask.Kind, ask.ToolName, ask.Payload, command)
	}
	if ask.AgentTool != a.shell {
		t.Errorf("ask %d: agent_tool %q, want %s's own name %q", ask.ID, ask.AgentTool, a.name, a.shell)
	}
	if want := !a.runsEdits; ask.NoEdit != want {
		t.Errorf("ask %d: no_edit %v, want %v (only a CLI that runs a person's edit offers Edit)", ask.ID, ask.NoEdit, want)
	}
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
