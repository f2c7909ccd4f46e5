package agentcli_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// startCodex runs the real Codex CLI, codex exec prompt, in project with
// CODEX_HOME codexHome (wired by askd install codex), against the scripted
// model, and returns when it ends.
func startCodex(t *testing.T, s *askdServer, model *fakeCodexModel, project, codexHome, session, prompt string) (done <-chan error, output func() string) {
	t.Helper()
	bin := installCLI(t, codexPackage, "codex")
	provider := `model_providers.scripted={name="scripted",base_url="` + model.URL + `/v1",env_key="SCRIPTED_API_KEY",wire_api="responses"}`
	cmd := exec.Command(bin, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
		"-c", provider, "-c", `model_provider="scripted"`, "-m", "scripted-model", prompt)
	cmd.Dir = project
	cmd.Env = append(agentEnv(s, t.TempDir(), session), "CODEX_HOME="+codexHome, "SCRIPTED_API_KEY=scripted", "SHELL=/bin/bash")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Stdin = nil // /dev/null: codex exec reads stdin otherwise
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := make(chan error, 1)
	go func() { ch <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		if t.Failed() {
			t.Logf("codex exec output:\n%s", out.String())
		}
	})
	return ch, out.String
}

// TestCodexStopHookHandsBackTheAnswer: with only what askd install codex
// wrote in CODEX_HOME, codex exec's model posts a decision through askd's
// MCP server and ends its turn; askd's Stop hook (run by Codex the way it
// runs hook commands) waits; the person answers; Codex runs the model again
// with the answer, and the run ends.
func TestCodexStopHookHandsBackTheAnswer(t *testing.T) {
	s := startAskd(t)
	codexHome, project := t.TempDir(), t.TempDir()
	out := s.run(t, project, nil, "install", "codex", "--config", filepath.Join(codexHome, "config.toml"), "--url", s.URL, "--stop-wait", "2m")
	t.Logf("askd install codex:\n%s", out)
	model := newFakeCodexModel(t, func(i int, req *responsesRequest) []call {
		switch i {
		case 0:
			return []call{{Namespace: "mcp__askd", Name: "ask", Arguments: map[string]any{
				"kind": "decision", "title": "Which database for the cache?",
				"options": []map[string]string{{"label": "Redis"}, {"label": "Memcached"}},
			}}}
		case 1:
			return []call{{Text: "I asked which database to use; waiting for the answer."}}
		default:
			return []call{{Text: "Going with the person's choice."}}
		}
	})
	done, output := startCodex(t, s, model, project, codexHome, "codex-stop", "Set up the cache")
	ask := s.pending(t, "codex-stop")
	if ask.Kind != askd.KindDecision {
		t.Fatalf("pending ask is %s, want the decision", ask.Kind)
	}
	if _, err := s.person().Answer(context.Background(), ask.ID, &askd.Answer{Answer: "Memcached"}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("codex exec: %v\n%s", err, output())
		}
	case <-time.After(5 * time.Minute):
		t.Fatalf("codex exec did not end:\n%s", output())
	}
	turns := model.agentTurns()
	for i, tr := range turns {
		t.Logf("turn %d last input: %.500s", i, tr.lastInput())
	}
	if len(turns) != 3 {
		t.Fatalf("%d agent turns, want 3 (ask, end of turn, the answer as the next instruction)\n%s", len(turns), output())
	}
	if last := turns[2].lastInput(); !strings.Contains(last, "Memcached") {
		t.Fatalf("the third turn does not carry the person's answer: %s", last)
	}
	told(t, s, ask.ID)
}
