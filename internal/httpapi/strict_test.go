package httpapi_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/testserver"
)

// TestStrictInputOverHTTP sends what SPEC §7 refuses through the real server
// (the agent API, the human API and Claude Code's hooks): each is refused
// with the field and the rule named, and nothing is stored.
func TestStrictInputOverHTTP(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	q, err := s.Agent("s").Create(ctx, question(false, "Which checks?"), 0)
	if err != nil {
		t.Fatal(err)
	}
	ap, err := s.Agent("t").Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "Go?", Payload: json.RawMessage(`{"cmd":"ls"}`)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, s)
	const dup = "duplicate key; each key may appear once in an object"
	answer := func(id int64) string { return fmt.Sprintf("/api/asks/%d/answer", id) }
	label := func(l string) string {
		return `{"kind":"question","questions":[{"question":"Q?","header":"H","options":[{"label":"Yes"},{"label":"` + l + `"}]}]}`
	}
	tests := []struct {
		name, path, token, body string
		session                 string // Askd-Session, if any
		status                  int
		msg                     string // the whole error message
	}{
		{name: "duplicate key", path: "/api/asks", token: s.AgentToken,
			body: `{"kind":"ready","title":"Deploy?","title":"Delete prod?"}`, status: 400, msg: "title: " + dup},
		{name: "duplicate key in a question", path: "/api/asks", token: s.AgentToken,
			body:   `{"kind":"question","questions":[{"question":"Q?","header":"A","header":"B","options":[{"label":"a"},{"label":"b"}]}]}`,
			status: 400, msg: "questions[0].header: " + dup},
		{name: "duplicate key in a payload", path: "/api/asks", token: s.AgentToken,
			body: `{"kind":"approval","title":"Run?","payload":{"command":"ls","command":"rm -rf ~"}}`, status: 400, msg: "payload.command: " + dup},
		{name: "invalid UTF-8", path: "/api/asks", token: s.AgentToken,
			body: "{\"kind\":\"ready\",\"title\":\"caf\xe9\"}", status: 400, msg: "title: not valid UTF-8 (byte 0xe9)"},
		{name: "lone surrogate", path: "/api/asks", token: s.AgentToken,
			body: `{"kind":"ready","title":"a\ud800"}`, status: 400, msg: `title: \ud800 is half of a surrogate pair, not a character`},
		{name: "zero-width label", path: "/api/asks", token: s.AgentToken, body: label(`No\u200b`), status: 400,
			msg: "questions[0].options[1].label: contains U+200B (zero-width), not allowed in labels"},
		{name: "bidi label", path: "/api/asks", token: s.AgentToken, body: label(`\u202eoN`), status: 400,
			msg: "questions[0].options[1].label: contains U+202E (bidi control), not allowed in labels"},
		{name: "control character in a title", path: "/api/asks", token: s.AgentToken,
			body: `{"kind":"ready","title":"hi\u001b]52;c;cm0gLXJm\u0007"}`, status: 400,
			msg: "title: contains U+001B (control character), not allowed in titles"},
		{name: "C1 control in a header", path: "/api/asks", token: s.AgentToken,
			body: `{"kind":"question","questions":[{"question":"Q?","header":"H\u009b","options":[{"label":"a"},{"label":"b"}]}]}`, status: 400,
			msg: "questions[0].header: contains U+009B (control character), not allowed in headers"},
		{name: "session starting with a dash", path: "/api/asks", token: s.AgentToken, session: "--dangerously-skip-permissions",
			body: `{"kind":"ready","title":"x"}`, status: 400, msg: `Askd-Session: starts with "-", which a command would read as an option`},
		{name: "session with a zero-width space", path: "/api/asks", token: s.AgentToken, session: "s\u200b",
			body: `{"kind":"ready","title":"x"}`, status: 400, msg: "Askd-Session: contains U+200B (zero-width), not allowed in names"},
		{name: "answer with a duplicate question", path: answer(q.ID), token: s.HumanToken,
			body: `{"answers":{"Which checks?":"lint","Which checks?":"docs"}}`, status: 400, msg: `answers["Which checks?"]: ` + dup},
		{name: "answer in own words with an escape", path: answer(q.ID), token: s.HumanToken,
			body: `{"answers":{"Which checks?":"mine\u001b[2J"}}`, status: 422,
			msg: `answers["Which checks?"]: contains U+001B (control character); text may hold line breaks and tabs, no other control characters`},
		{name: "edited payload with a duplicate key", path: answer(ap.ID), token: s.HumanToken,
			body: `{"decision":"modified","payload":{"cmd":"ls","cmd":"rm"}}`, status: 400, msg: "payload.cmd: " + dup},
		{name: "comment not UTF-8", path: answer(ap.ID), token: s.HumanToken,
			body: "{\"decision\":\"rejected\",\"comment\":\"\xff\"}", status: 400, msg: "comment: not valid UTF-8 (byte 0xff)"},
		{name: "hook with a duplicate key in the tool input", path: "/hooks/claude", token: s.AgentToken,
			body: permissionRequest("h1", "Bash", `{"command":"ls","command":"rm -rf ~"}`), status: 400, msg: "tool_input.command: " + dup},
		{name: "hook not UTF-8", path: "/hooks/claude", token: s.AgentToken,
			body: preToolUse("h1", "AskUserQuestion", "{\"questions\":[{\"question\":\"\xff\"}]}"), status: 400,
			msg: "tool_input.questions[0].question: not valid UTF-8 (byte 0xff)"},
		{name: "hook session starting with a dash", path: "/hooks/claude", token: s.AgentToken,
			body: stopInput("-rf", false), status: 400, msg: `session_id: starts with "-", which a command would read as an option`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string]string{"Content-Type": "application/json"}
			if tt.session != "" {
				hdr["Askd-Session"] = tt.session
			}
			code, body := rawRequest(t, s, "POST", tt.path, tt.token, tt.body, hdr)
			var e struct{ Error string }
			json.Unmarshal([]byte(body), &e)
			if code != tt.status || e.Error != tt.msg {
				t.Errorf("got %d %s\nwant %d %q", code, body, tt.status, tt.msg)
			}
		})
	}
	if after := snapshot(t, s); after != before {
		t.Fatal("a refused request changed the store")
	}
}
