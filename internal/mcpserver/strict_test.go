package mcpserver_test

import (
	"encoding/json"
	"testing"

	"github.com/askd-dev/askd/internal/app"
)

// TestStrictArguments calls the tools with what SPEC §7 refuses, as raw JSON
// arguments (a Go map cannot hold a key twice): each call is a tool error
// naming the field and the rule, and no ask is stored.
func TestStrictArguments(t *testing.T) {
	srv := start(t, app.Config{})
	const dup = "duplicate key; each key may appear once in an object"
	question := func(label string) json.RawMessage {
		return json.RawMessage(`{"questions":[{"question":"Ship it?","header":"Ship","options":[{"label":"Yes"},{"label":"` + label + `"}],"multiSelect":false}]}`)
	}
	cases := []struct {
		name, tool string
		args       json.RawMessage
		want       string // the whole text of the tool error
	}{
		{"duplicate key", "ask", json.RawMessage(`{"kind":"ready","title":"Deploy?","title":"Delete prod?"}`), "title: " + dup},
		{"duplicate header", "ask_user_question",
			json.RawMessage(`{"questions":[{"question":"Q?","header":"A","header":"B","options":[{"label":"a"},{"label":"b"}]}]}`),
			"questions[0].header: " + dup},
		{"duplicate key in a payload", "request_approval", json.RawMessage(`{"title":"Run?","payload":{"cmd":"ls","cmd":"rm -rf ~"}}`),
			"payload.cmd: " + dup},
		{"duplicate key in a permission input", "permission_prompt",
			json.RawMessage(`{"tool_name":"Bash","input":{"command":"ls","command":"rm -rf ~"}}`), "input.command: " + dup},
		{"invalid UTF-8", "ask", json.RawMessage("{\"kind\":\"ready\",\"title\":\"caf\xe9\"}"), "title: not valid UTF-8 (byte 0xe9)"},
		{"lone surrogate", "ask", json.RawMessage(`{"kind":"ready","title":"\udfff"}`), `title: \udfff is half of a surrogate pair, not a character`},
		{"zero-width label", "ask_user_question", question(`No\u200b`),
			"questions[0].options[1].label: contains U+200B (zero-width), not allowed in labels"},
		{"bidi label", "ask", json.RawMessage(`{"kind":"decision","title":"t","options":[{"label":"a"},{"label":"\u2067b"}]}`),
			"options[1].label: contains U+2067 (bidi control), not allowed in labels"},
		{"control character in a title", "ask", json.RawMessage(`{"kind":"blocked","title":"x\u001b[2K\rfake"}`),
			"title: contains U+001B (control character), not allowed in titles"},
		{"control character in a permission question", "permission_prompt",
			json.RawMessage(`{"tool_name":"AskUserQuestion","input":{"questions":[{"question":"Q?","header":"H\u0085","options":[{"label":"a"},{"label":"b"}]}]}}`),
			"input.questions[0].header: contains U+0085 (control character), not allowed in headers"},
		{"tool name with a bidi override", "permission_prompt", json.RawMessage(`{"tool_name":"Bash\u202e","input":{}}`),
			"tool_name: contains U+202E (bidi control), not allowed in tool names"},
	}
	forEach(t, func(t *testing.T, tr transport) {
		cs := connect(t, srv, tr, "strict-"+tr.name, nil)
		before := countAsks(t, srv)
		for _, c := range cases {
			res := call(t, cs, c.tool, c.args)
			if got := text(t, res); !res.IsError || got != c.want {
				t.Errorf("%s: %q (isError %v), want an error %q", c.name, got, res.IsError, c.want)
			}
		}
		if after := countAsks(t, srv); after != before {
			t.Errorf("refused calls stored %d asks", after-before)
		}
	})
}
