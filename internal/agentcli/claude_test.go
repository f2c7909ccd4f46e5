package agentcli_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
)

// claudeRun is one claude -p run in a project wired by askd install claude.
type claudeRun struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan error
}

// wiredProject makes a project directory wired only by askd install claude
// with installArgs (run in it, as the README says), and a home for Claude
// Code's own files.
func wiredProject(t *testing.T, s *askdServer, installArgs ...string) (project, home string) {
	t.Helper()
	project, home = t.TempDir(), t.TempDir()
	out := s.run(t, project, []string{"HOME=" + home}, append([]string{"install", "claude"}, installArgs...)...)
	t.Logf("askd install claude %s:\n%s", strings.Join(installArgs, " "), out)
	return project, home
}

// startClaude runs the real Claude Code CLI, claude -p prompt with extra
// arguments, in project, against the scripted model.
func startClaude(t *testing.T, s *askdServer, model *fakeClaudeModel, project, home, session, prompt string, extra ...string) *claudeRun {
	t.Helper()
	return startClaudeEnv(t, s, model, project, home, session, prompt, nil, extra...)
}

// startClaudeEnv is startClaude with env added to the CLI's environment.
func startClaudeEnv(t *testing.T, s *askdServer, model *fakeClaudeModel, project, home, session, prompt string, env []string, extra ...string) *claudeRun {
	t.Helper()
	bin := installCLI(t, claudePackage, "claude")
	args := append([]string{"-p", prompt, "--model", "claude-sonnet-4-5", "--output-format", "json"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = project
	cmd.Env = agentEnv(s, home, session, append([]string{
		"ANTHROPIC_BASE_URL=" + model.URL,
		"ANTHROPIC_API_KEY=sk-ant-scripted",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_MAX_RETRIES=0",
		"SHELL=/bin/bash", // what a person's shell would say; Claude Code still runs hooks with /bin/sh
	}, env...)...)
	cmd.Stdin = nil
	r := &claudeRun{cmd: cmd, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = &r.stdout, &r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-r.done
	})
	return r
}

// wait waits for the run to end and returns its output.
func (r *claudeRun) wait(t *testing.T) string {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err
		if err != nil {
			t.Fatalf("claude -p: %v\nstdout: %s\nstderr: %s", err, &r.stdout, &r.stderr)
		}
	case <-time.After(5 * time.Minute):
		t.Fatalf("claude -p did not end\nstdout: %s\nstderr: %s", &r.stdout, &r.stderr)
	}
	return r.stdout.String()
}

func shIsDash(t *testing.T) {
	t.Helper()
	target, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("/bin/sh is %s", target)
	if os.Getenv("CI") == "true" && !strings.HasSuffix(target, "dash") {
		t.Logf("note: /bin/sh is not dash here")
	}
}

// TestClaudeStopHookHandsBackTheAnswer: in a project wired only by askd
// install claude --stop-wait, claude -p's model posts a decision and ends
// its turn; the Stop hook askd wrote (run by Claude Code with /bin/sh -c)
// waits; the person answers in the inbox; the answer comes back as the
// model's next instruction, and the run ends after it, in three agent turns.
func TestClaudeStopHookHandsBackTheAnswer(t *testing.T) {
	shIsDash(t)
	s := startAskd(t)
	project, home := wiredProject(t, s, "--stop-wait", "2m")
	model := newFakeClaudeModel(t, func(i int, req *messagesRequest) []block {
		switch i {
		case 0:
			return []block{{Tool: "mcp__askd__ask", Input: map[string]any{
				"kind": "decision", "title": "Which database for the cache?",
				"options": []map[string]string{{"label": "Redis"}, {"label": "Memcached"}}, "recommended": "Redis",
			}}}
		case 1:
			return []block{{Text: "I asked which database to use; waiting for the answer."}}
		default:
			return []block{{Text: "Going with the person's choice."}}
		}
	})
	run := startClaude(t, s, model, project, home, "stop-flow", "Set up the cache")
	ask := s.pending(t, "stop-flow")
	if ask.Kind != askd.KindDecision {
		t.Fatalf("pending ask is %s, want a decision: %+v", ask.Kind, ask)
	}
	if _, err := s.person().Answer(context.Background(), ask.ID, &askd.Answer{Answer: "Memcached"}); err != nil {
		t.Fatal(err)
	}
	out := run.wait(t)
	turns := model.agentTurns()
	t.Logf("result: %s", out)
	for i, tr := range turns {
		t.Logf("turn %d last message: %.600s", i, tr.lastMessage())
	}
	if len(turns) != 3 {
		t.Fatalf("%d agent turns, want 3 (ask, end of turn, the answer as the next instruction)", len(turns))
	}
	// The skill askd install wrote is one Claude Code read and offers.
	if !bytes.Contains(turns[0].raw, []byte("Ask the person you work for through their askd inbox")) {
		t.Errorf("the model was not offered askd's skill")
	}
	if last := turns[2].lastMessage(); !strings.Contains(last, "Memcached") {
		t.Fatalf("the third turn does not carry the person's answer: %s", last)
	}
	told(t, s, ask.ID)
}

// told checks, reading the ask's history back, that its answer was told
// to the agent exactly once.
func told(t *testing.T, s *askdServer, id int64) {
	t.Helper()
	detail, err := s.person().Show(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range detail.History {
		if ev.Action == "told" {
			n++
		}
	}
	if n != 1 || detail.ToldAt == nil {
		t.Fatalf("ask %d: %d told rows in its history, told_at %v; want exactly one", id, n, detail.ToldAt)
	}
}

// TestClaudeBashNeedsApproval: in a project wired only by askd install
// claude, a Bash call that needs permission in claude -p reaches askd's
// PermissionRequest hook (run by Claude Code with /bin/sh -c) as an approval
// in the inbox; nothing runs before the person approves, and the command
// runs once after.
func TestClaudeBashNeedsApproval(t *testing.T) {
	s := startAskd(t)
	project, home := wiredProject(t, s)
	command := "echo ran >> approved.txt"
	model := newFakeClaudeModel(t, func(i int, req *messagesRequest) []block {
		if i == 0 {
			return []block{{Tool: "Bash", Input: map[string]any{"command": command, "description": "note that the person approved"}}}
		}
		return []block{{Text: "Done."}}
	})
	run := startClaude(t, s, model, project, home, "bash-flow", "Write the note")
	ask := s.pending(t, "bash-flow")
	if ask.Kind != askd.KindApproval || ask.ToolName != "Bash" || !strings.Contains(string(ask.Payload), "approved.txt") {
		t.Fatalf("pending ask: %s %q %s, want an approval of the Bash command", ask.Kind, ask.ToolName, ask.Payload)
	}
	if _, err := os.Stat(filepath.Join(project, "approved.txt")); err == nil {
		t.Fatal("the command ran before anyone approved it")
	}
	if _, err := s.person().Answer(context.Background(), ask.ID, &askd.Answer{Decision: "approved"}); err != nil {
		t.Fatal(err)
	}
	run.wait(t)
	data, err := os.ReadFile(filepath.Join(project, "approved.txt"))
	if err != nil || string(data) != "ran\n" {
		t.Fatalf("approved.txt: %q (%v), want the command to have run once", data, err)
	}
	turns := model.agentTurns()
	if len(turns) != 2 || !strings.Contains(turns[1].lastMessage(), "tool_result") || strings.Contains(turns[1].lastMessage(), `"is_error":true`) {
		t.Fatalf("%d turns; the second's last message: %s", len(turns), turns[len(turns)-1].lastMessage())
	}
}

// TestClaudeAskUserQuestionThroughPreToolUse: claude -p's AskUserQuestion
// reaches the inbox through the PreToolUse hook askd install claude wrote;
// the person's choice comes back as the tool's answer. claude -p offers the
// model AskUserQuestion only with a permission prompt tool, so the run has
// askd's, as the README's headless line says; the hook answers first, so
// the permission tool is never called (one ask, not two).
func TestClaudeAskUserQuestionThroughPreToolUse(t *testing.T) {
	s := startAskd(t)
	project, home := wiredProject(t, s)
	model := newFakeClaudeModel(t, func(i int, req *messagesRequest) []block {
		if i == 0 {
			if !req.hasTool("AskUserQuestion") {
				t.Errorf("claude -p did not offer AskUserQuestion: %v", req.Tools)
			}
			return []block{{Tool: "AskUserQuestion", Input: map[string]any{"questions": []map[string]any{{
				"question": "Which color should the button be?", "header": "Color", "multiSelect": false,
				"options": []map[string]string{{"label": "Blue", "description": "Calm"}, {"label": "Red", "description": "Loud"}},
			}}}}}
		}
		return []block{{Text: "Using the chosen color."}}
	})
	run := startClaude(t, s, model, project, home, "question-flow", "Style the button", "--permission-prompt-tool", "mcp__askd__permission_prompt")
	ask := s.pending(t, "question-flow")
	if ask.Kind != askd.KindQuestion || len(ask.Questions) != 1 {
		t.Fatalf("pending ask: %+v, want the question", ask)
	}
	answer := &askd.Answer{Answers: map[string]askd.Choice{"Which color should the button be?": {Values: []string{"Red"}}}}
	if _, err := s.person().Answer(context.Background(), ask.ID, answer); err != nil {
		t.Fatal(err)
	}
	run.wait(t)
	turns := model.agentTurns()
	if len(turns) != 2 {
		t.Fatalf("%d agent turns, want 2", len(turns))
	}
	for _, status := range []askd.Status{askd.StatusPending, askd.StatusAnswered, askd.StatusCancelled} {
		asks, err := s.person().List(context.Background(), client.ListOptions{Session: "question-flow", Status: status})
		if want := map[askd.Status]int{askd.StatusAnswered: 1}[status]; err != nil || len(asks) != want {
			t.Fatalf("session question-flow holds %d %s asks (%v), want %d: the one question, answered", len(asks), status, err, want)
		}
	}
	if last := turns[1].lastMessage(); !strings.Contains(last, `\"Which color should the button be?\"=\"Red\"`) {
		t.Fatalf("the tool result does not carry the person's answer: %s", last)
	}
}
