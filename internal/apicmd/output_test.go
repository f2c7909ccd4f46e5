package apicmd

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/testserver"
)

// hostile is text an old database may hold: askd refuses it as input now, but
// it was stored before, so the CLI must still print it harmlessly.
const hostile = "Deploy\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2K\rfake \u202eexe.txt\u009b2J\x7f"

// TestOutputEscapesStoredText: askd list, show and check print agent and
// person text with every control, bidi and invisible character escaped, and
// --json writes JSON in which they are escaped too, with the same values.
func TestOutputEscapesStoredText(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := t.Context()
	now := time.Now().UTC()
	a := &askd.Ask{
		Kind: askd.KindDecision, Session: "s\x1b[31m1", Agent: "agent-1", Status: askd.StatusPending, Revision: 1,
		Title:     hostile,
		Options:   []askd.Option{{Label: "Yes\u200b", Description: "sure\x1b[8m hidden"}, {Label: "No\u2066"}},
		CreatedAt: now, UpdatedAt: now, ToBeTold: true,
	}
	q := &askd.Ask{
		Kind: askd.KindQuestion, Session: "s1", Agent: "agent-1", Status: askd.StatusPending, Revision: 1,
		Questions: []askd.Question{{Question: "Which?\n\x1b[1A\x1b[2Kgone", Header: "H\x1b[0m",
			Options: []askd.Option{{Label: "a\u202e"}, {Label: "b"}}}},
		CreatedAt: now, UpdatedAt: now,
	}
	hostileJSON, _ := json.Marshal(hostile)
	fm := &askd.Ask{
		Kind: askd.KindForm, Session: "s1", Agent: "agent-1", Status: askd.StatusPending, Revision: 1,
		Title: "Fill in\n" + hostile, Source: "crm\x1b[0m",
		Schema: json.RawMessage(`{"type":"object","properties":{"f\u202e":{"type":"string","title":` + string(hostileJSON) +
			`,"description":"line\n\u001b[2Kgone","enum":["a\u200b"],"enumNames":["A\u009b"],"default":"a\u200b"}}}`),
		CreatedAt: now, UpdatedAt: now,
	}
	// An MCP gate's approval: the server's name is third-party text.
	ga := &askd.Ask{
		Kind: askd.KindApproval, Session: "s1", Agent: "agent-1", Status: askd.StatusPending, Revision: 1,
		Title: "Call write_file", ToolName: "mcp__files__write_file", Source: "files\u202e\x1b[8m",
		Payload: json.RawMessage(`{"path":"a.txt"}`), CreatedAt: now, UpdatedAt: now,
	}
	err := srv.Store.Update(ctx, func(tx askd.Tx) error {
		for _, x := range []*askd.Ask{a, q, fm, ga} {
			if err := tx.Asks.CreateAsk(ctx, x); err != nil {
				return err
			}
			if err := tx.Events.AddEvent(ctx, &askd.Event{AskID: x.ID, Session: x.Session, Action: askd.ActionCreated,
				Actor: "agent\x1b[5m", At: now, Note: "note\u009b1m", Ask: x}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	id := func(x *askd.Ask) string { return strconv.FormatInt(x.ID, 10) }
	human := []string{"--url", srv.URL, "--token", srv.HumanToken}
	tests := []struct {
		name string
		args []string
		want []string // escaped forms the output must show
	}{
		{name: "list", args: append([]string{"list"}, human...), want: []string{`s\x1b[31m1`, `Deploy\x1b]52;c;`, `Which? \x1b[1A`,
			`Call write_file (through files\u202e\x1b[8m)`}},
		{name: "show gated approval", args: append([]string{"show", id(ga)}, human...),
			want: []string{"  Call write_file\n  through files\\u202e\\x1b[8m\n  tool: mcp__files__write_file"}},
		{name: "show decision", args: append([]string{"show", id(a)}, human...),
			want: []string{`\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2K\rfake \u202eexe.txt\u009b2J\x7f`, `Yes\u200b`, `No\u2066`,
				`sure\x1b[8m hidden`, `agent\x1b[5m`, `note\u009b1m`}},
		{name: "show question", args: append([]string{"show", id(q)}, human...),
			want: []string{`[H\x1b[0m] Which?\n\x1b[1A\x1b[2Kgone`, `a\u202e`}},
		{name: "show form", args: append([]string{"show", id(fm)}, human...),
			// A schema askd refuses now (it was written to the store
			// directly) is named, escaped, rather than shown.
			want: []string{`  Deploy\x1b]52;c;`, `asked by crm\x1b[0m`, `the form cannot be shown: schema.properties.f\u202e: contains U+202E`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if err := run(context.Background(), tt.args, nil, &out, &errOut); err != nil {
				t.Fatalf("%v: %v\n%s", tt.args, err, errOut.String())
			}
			checkTerminalSafe(t, out.String())
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %s:\n%s", w, out.String())
				}
			}
		})
		t.Run(tt.name+" --json", func(t *testing.T) {
			var out, errOut bytes.Buffer
			if err := run(context.Background(), append(tt.args, "--json"), nil, &out, &errOut); err != nil {
				t.Fatalf("%v: %v\n%s", tt.args, err, errOut.String())
			}
			checkTerminalSafe(t, strings.TrimSuffix(out.String(), "\n"))
			var v any
			if err := json.Unmarshal(out.Bytes(), &v); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out.String())
			}
			if tt.name == "show decision" && !strings.Contains(out.String(), `\u202eexe.txt\u009b2J\u007f`) {
				t.Errorf("JSON lacks the escaped title:\n%s", out.String())
			}
		})
	}
	// The JSON holds the same values.
	var out bytes.Buffer
	if err := run(context.Background(), append([]string{"show", id(a), "--json"}, human...), nil, &out, &out); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Title   string        `json:"title"`
		Session string        `json:"session"`
		Options []askd.Option `json:"options"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Title != hostile || got.Session != a.Session || got.Options[0].Label != "Yes\u200b" {
		t.Errorf("JSON values changed: %+q", got)
	}
}

// checkTerminalSafe fails if s holds a character that could act on a
// terminal: a control character other than the line breaks between lines,
// a C1 control, a bidi control or an invisible one.
func checkTerminalSafe(t *testing.T, s string) {
	t.Helper()
	for i, line := range strings.Split(s, "\n") {
		for _, r := range line {
			if askd.Unprintable(r) {
				t.Errorf("line %d holds U+%04X raw: %q", i+1, r, line)
				return
			}
		}
	}
}
