package agentcli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// TestOtherAgentsAskThroughMCP proves the harness for Copilot, Qwen Code,
// Gemini CLI and OpenCode with what askd serves today: each CLI, run by its
// headless line with askd's MCP server written into its user config by
// hand (the token and session as references it expands), against its
// scripted model on one shared server, calls askd's ask_user_question; the
// person answers through askd's API; the model's next request carries the
// answer as the tool's result. It logs each CLI's start-up (its start to
// its first model request) and its one call (the model's tool call to
// the ask in the inbox, plus the answer to the next model request).
func TestOtherAgentsAskThroughMCP(t *testing.T) {
	s := startAskd(t)
	for _, a := range otherAgents {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			bin := a.path(t)
			session := "mcp-" + a.name
			question := "Which color should the button be?"
			model := newModel(t, callThen(a.tool("ask_user_question"), map[string]any{"questions": []map[string]any{{
				"question": question, "header": "Color", "multiSelect": false,
				"options": []map[string]string{{"label": "Blue", "description": "Calm"}, {"label": "Red", "description": "Loud"}},
			}}}, "Using the chosen color."))
			home, project := t.TempDir(), t.TempDir()
			env := cliEnv(t, a, home, session, runOpts{url: s.URL, token: s.Agent}, a.setUp(t, home, model))
			a.wireMCP(t, home, s.URL)
			var extra []string
			if a == copilot {
				extra = []string{"--allow-tool", "askd"} // -p has no one to approve an MCP call
			}
			run := startAgent(t, a.name, bin, a.args("Style the button", extra...), project, env)
			ask := s.created(t, run, session, 1)
			if ask.Kind != askd.KindQuestion || len(ask.Questions) != 1 || ask.Questions[0].Question != question {
				t.Fatalf("pending ask: %+v, want the question", ask)
			}
			answer := &askd.Answer{Answers: map[string]askd.Choice{question: {Values: []string{"Red"}}}}
			if _, err := s.person().Answer(context.Background(), ask.ID, answer); err != nil {
				t.Fatal(err)
			}
			answered := time.Now()
			total := run.wait(t)
			turns := model.agentTurns()
			if len(turns) != 2 {
				t.Fatalf("%d agent turns, want 2 (the call, then its result)", len(turns))
			}
			if !turns[0].offers(a.tool("ask_user_question")) {
				t.Errorf("the model was not offered %s: %v", a.tool("ask_user_question"), turns[0].Tools)
			}
			if got := turns[1].sinceReply(); !strings.Contains(got, `"Red"`) || !strings.Contains(got, question) {
				t.Fatalf("the second turn does not carry the person's answer:\n%s", got)
			}
			t.Logf("%s: start-up %s; one call %s (tool call to ask %s, answer to next request %s); whole run %s, %s of CPU",
				a.name, turns[0].at.Sub(run.started).Round(time.Millisecond),
				(ask.CreatedAt.Sub(turns[0].at) + turns[1].at.Sub(answered)).Round(time.Millisecond),
				ask.CreatedAt.Sub(turns[0].at).Round(time.Millisecond), turns[1].at.Sub(answered).Round(time.Millisecond),
				total.Round(time.Millisecond), run.cpu().Round(time.Millisecond))
		})
	}
}
