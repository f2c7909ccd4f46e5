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
	bin := installCLI(t, claudePackage, "claude")
	args := append([]string{"-p", prompt, "--model", "claude-sonnet-4-5", "--output-format", "json"}, extra...)
	if x := os.Getenv("PROBE_ARGS"); x != "" {
		args = append(args, strings.Fields(x)...)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = project
	cmd.Env = agentEnv(s, home, session,
		"ANTHROPIC_BASE_URL="+model.URL,
		"ANTHROPIC_API_KEY=sk-ant-scripted",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_MAX_RETRIES=0",
		"SHELL=/bin/bash", // what a person's shell would say; Claude Code still runs hooks with /bin/sh
	)
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
	if last := turns[2].lastMessage(); !strings.Contains(last, "Memcached") {
		t.Fatalf("the third turn does not carry the person's answer: %s", last)
	}
}
