package askd_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
)

// Every one-tap answer is one the ask takes (CheckAnswer), and only asks a
// tap can answer have any.
func TestOneTapAnswers(t *testing.T) {
	single := &askd.Ask{Kind: askd.KindQuestion, Questions: []askd.Question{question("Which database?", "Database", "SQLite", "Postgres")}}
	withPreview := &askd.Ask{Kind: askd.KindQuestion, Questions: []askd.Question{question("Which layout?", "Layout", "A", "B")}}
	withPreview.Questions[0].Options[1].Preview = "## B\nsidebar left"
	permission := &askd.Ask{Kind: askd.KindApproval, Title: "Allow Bash: make test", ToolName: "Bash"}
	noOptions := &askd.Ask{Kind: askd.KindDecision, Title: "What now?"}
	tests := []struct {
		name   string
		ask    *askd.Ask
		labels []string
		styles []string
	}{
		{"one single-select question", single, []string{"SQLite", "Postgres"}, []string{"", ""}},
		{"several questions", questionAsk, nil, nil},
		{"an option with a preview", withPreview, nil, nil},
		{"decision", decisionAsk, []string{"Yes", "No"}, []string{"primary", ""}},
		{"decision without options", noOptions, nil, nil},
		{"action", actionAsk, []string{"Done"}, []string{"primary"}},
		{"ready", readyAsk, []string{"Done"}, []string{"primary"}},
		{"blocked wants words", blockedAsk, nil, nil},
		{"approval", approvalAsk, []string{"Approve", "Reject"}, []string{"primary", "danger"}},
		{"permission prompt", permission, []string{"Allow", "Deny"}, []string{"primary", "danger"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			taps := tt.ask.OneTapAnswers()
			if len(taps) != len(tt.labels) {
				t.Fatalf("%d one-tap answers %+v, want %v", len(taps), taps, tt.labels)
			}
			for i, tap := range taps {
				if tap.Label != tt.labels[i] || tap.Style != tt.styles[i] {
					t.Errorf("answer %d: %q (%q), want %q (%q)", i, tap.Label, tap.Style, tt.labels[i], tt.styles[i])
				}
				ans := tap.Answer
				if err := tt.ask.CheckAnswer(&ans); err != nil {
					t.Errorf("answer %q does not fit its ask: %v", tap.Label, err)
				}
			}
		})
	}
}

func TestAnswerWords(t *testing.T) {
	answered := func(a *askd.Ask, ans *askd.Answer) *askd.Ask {
		b := *a
		b.Status, b.Answer = askd.StatusAnswered, ans
		return &b
	}
	cancelled := func(a *askd.Ask, why askd.CancelReason) *askd.Ask {
		b := *a
		b.Status, b.CancelReason = askd.StatusCancelled, why
		return &b
	}
	permission := &askd.Ask{Kind: askd.KindApproval, Title: "Allow Bash: make test", ToolName: "Bash"}
	tests := []struct {
		name string
		ask  *askd.Ask
		want string
	}{
		{"pending", decisionAsk, "not answered yet"},
		{"a label", answered(decisionAsk, &askd.Answer{Answer: "Yes"}), "Yes"},
		{"questions", answered(questionAsk, &askd.Answer{Answers: map[string]askd.Choice{
			"Which database?": {Values: []string{"SQLite"}}, "Which checks?": {Values: []string{"lint", "tests"}, Multi: true}}}), "SQLite; lint, tests"},
		{"a reply alone", answered(questionAsk, &askd.Answer{Response: "later"}), "later"},
		{"approved", answered(approvalAsk, &askd.Answer{Decision: askd.DecisionApproved}), "approved"},
		{"rejected", answered(approvalAsk, &askd.Answer{Decision: askd.DecisionRejected}), "rejected"},
		{"allowed", answered(permission, &askd.Answer{Decision: askd.DecisionApproved}), "allowed"},
		{"denied", answered(permission, &askd.Answer{Decision: askd.DecisionRejected}), "denied"},
		{"timed out", cancelled(decisionAsk, askd.ReasonTimeout), "no one answered in time"},
		{"dismissed", cancelled(decisionAsk, askd.ReasonDismissed), "closed without an answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.ask.AnswerWords(); got != tt.want {
				t.Errorf("AnswerWords = %q, want %q", got, tt.want)
			}
		})
	}
}

// formAsk is a form ask of the schema, pending.
func formAsk(schema string) *askd.Ask {
	return &askd.Ask{Kind: askd.KindForm, Status: askd.StatusPending, Title: "Where to?", Source: "deployer", Schema: []byte(schema)}
}

// oneOf is a schema of one single-select field "env" with the choices given
// as const, title pairs, and default def ("" for none).
func oneOf(def string, pairs ...string) string {
	s := `{"type":"object","properties":{"env":{"type":"string","title":"Environment","oneOf":[`
	for i := 0; i < len(pairs); i += 2 {
		if i > 0 {
			s += ","
		}
		s += `{"const":"` + pairs[i] + `","title":"` + pairs[i+1] + `"}`
	}
	s += `]`
	if def != "" {
		s += `,"default":"` + def + `"`
	}
	return s + `}},"required":["env"]}`
}

// A form gets one-tap answers only when it is one single-select field of 2
// to 6 choices (a decision's most), each labelled in at most 100
// characters: one per choice, by its title, answering exactly {field:
// const}, the default primary, then an optional Decline, left out when a
// choice reads "decline" already. Every answer is one the ask takes.
func TestFormOneTapAnswers(t *testing.T) {
	urlMode := &askd.Ask{Kind: askd.KindForm, Status: askd.StatusPending, Title: "Sign in", Source: "github", URL: "https://example.com/login"}
	seven := oneOf("", "1", "One", "2", "Two", "3", "Three", "4", "Four", "5", "Five", "6", "Six", "7", "Seven")
	tests := []struct {
		name   string
		ask    *askd.Ask
		labels []string // the last is Decline when decline
		consts []string // the choices' answers, in order
		styles []string
	}{
		{"oneOf with a default", formAsk(oneOf("prod", "staging", "Staging", "prod", "Production")),
			[]string{"Staging", "Production", "Decline"}, []string{"staging", "prod"}, []string{"", "primary", "danger"}},
		{"enum with enumNames", formAsk(`{"type":"object","properties":{"color":{"type":"string","enum":["r","g"],"enumNames":["Red","Green"]}}}`),
			[]string{"Red", "Green", "Decline"}, []string{"r", "g"}, []string{"", "", "danger"}},
		{"enum without titles reads as its values", formAsk(`{"type":"object","properties":{"color":{"type":"string","enum":["red","green"]}}}`),
			[]string{"red", "green", "Decline"}, []string{"red", "green"}, []string{"", "", "danger"}},
		{"six choices", formAsk(oneOf("", "1", "One", "2", "Two", "3", "Three", "4", "Four", "5", "Five", "6", "Six")),
			[]string{"One", "Two", "Three", "Four", "Five", "Six", "Decline"}, []string{"1", "2", "3", "4", "5", "6"}, []string{"", "", "", "", "", "", "danger"}},
		{"a choice reads decline", formAsk(oneOf("", "yes", "Accept the invite", "no", " decline ")),
			[]string{"Accept the invite", " decline "}, []string{"yes", "no"}, []string{"", ""}},
		{"seven choices: more than a decision may have", formAsk(seven), nil, nil, nil},
		{"one choice", formAsk(oneOf("", "only", "Only")), nil, nil, nil},
		{"a title over 100 characters", formAsk(oneOf("", "a", strings.Repeat("x", 101), "b", "B")), nil, nil, nil},
		{"two fields", formAsk(`{"type":"object","properties":{"color":{"type":"string","enum":["r","g"]},"size":{"type":"string","enum":["s","m"]}}}`), nil, nil, nil},
		{"one boolean", formAsk(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`), nil, nil, nil},
		{"one multi-select", formAsk(`{"type":"object","properties":{"pets":{"type":"array","items":{"enum":["cat","dog"]}}}}`), nil, nil, nil},
		{"one text field", formAsk(`{"type":"object","properties":{"name":{"type":"string"}}}`), nil, nil, nil},
		{"url mode", urlMode, nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			taps := tt.ask.OneTapAnswers()
			if len(taps) != len(tt.labels) {
				t.Fatalf("%d one-tap answers %+v, want %q", len(taps), taps, tt.labels)
			}
			for i, tap := range taps {
				if tap.Label != tt.labels[i] || tap.Style != tt.styles[i] {
					t.Errorf("answer %d: %q (%q), want %q (%q)", i, tap.Label, tap.Style, tt.labels[i], tt.styles[i])
				}
				s, _ := askd.ParseFormSchema(tt.ask.Schema)
				if i < len(tt.consts) {
					want := map[string]any{s.Fields[0].Name: tt.consts[i]}
					if tap.Optional || tap.Answer.Action != askd.FormAccept || !reflect.DeepEqual(tap.Answer.Content, want) {
						t.Errorf("answer %q: %+v (optional %t), want accept with %v", tap.Label, tap.Answer, tap.Optional, want)
					}
				} else if !tap.Optional || tap.Answer.Action != askd.FormDecline || tap.Answer.Content != nil {
					t.Errorf("answer %q: %+v (optional %t), want an optional decline", tap.Label, tap.Answer, tap.Optional)
				}
				ans := tap.Answer
				if err := tt.ask.CheckAnswer(&ans); err != nil {
					t.Errorf("answer %q does not fit its ask: %v", tap.Label, err)
				}
			}
		})
	}
}

// A form's answer in words, as the answer link's page and Slack say it:
// choices by their titles.
func TestFormAnswerWords(t *testing.T) {
	answered := func(a *askd.Ask, ans *askd.Answer) *askd.Ask {
		b := *a
		b.Status, b.Answer = askd.StatusAnswered, ans
		return &b
	}
	one := formAsk(oneOf("", "staging", "Staging", "prod", "Production"))
	several := formAsk(`{"type":"object","properties":{"name":{"type":"string","title":"Name"},"n":{"type":"integer"},` +
		`"ok":{"type":"boolean","title":"Sure"},"pets":{"type":"array","title":"Pets","items":{"anyOf":[{"const":"c","title":"Cat"},{"const":"d","title":"Dog"}]}}}}`)
	urlMode := &askd.Ask{Kind: askd.KindForm, Title: "Sign in", URL: "https://example.com/login"}
	tests := []struct {
		name string
		ask  *askd.Ask
		want string
	}{
		{"one choice", answered(one, &askd.Answer{Action: askd.FormAccept, Content: map[string]any{"env": "prod"}}), "Production"},
		{"declined", answered(one, &askd.Answer{Action: askd.FormDecline}), "declined"},
		{"several fields", answered(several, &askd.Answer{Action: askd.FormAccept, Content: map[string]any{
			"name": "Ada", "n": 7.0, "ok": true, "pets": []any{"c", "d"}}}), "Name: Ada; n: 7; Sure: yes; Pets: Cat, Dog"},
		{"nothing filled in", answered(several, &askd.Answer{Action: askd.FormAccept, Content: map[string]any{}}), "accepted"},
		{"url mode done", answered(urlMode, &askd.Answer{Action: askd.FormAccept}), "done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.ask.AnswerWords(); got != tt.want {
				t.Errorf("AnswerWords = %q, want %q", got, tt.want)
			}
		})
	}
}
