package askd_test

import (
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
