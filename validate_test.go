package askd_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
)

// options returns options with the given labels and no descriptions.
func options(labels ...string) []askd.Option {
	opts := make([]askd.Option, len(labels))
	for i, l := range labels {
		opts[i] = askd.Option{Label: l}
	}
	return opts
}

// question returns a single-select question with the given option labels.
func question(text, header string, labels ...string) askd.Question {
	return askd.Question{Question: text, Header: header, Options: options(labels...)}
}

func intPtr(n int) *int { return &n }

// baseInput returns a valid input of kind k that cases then break one rule at a time.
func baseInput(k askd.Kind) askd.AskInput {
	in := askd.AskInput{Kind: k}
	switch {
	case k == askd.KindQuestion:
		in.Questions = []askd.Question{{
			Question: "Which database?",
			Header:   "Database",
			Options: []askd.Option{
				{Label: "SQLite", Description: "embedded, zero setup"},
				{Label: "Postgres", Description: "shared, scales out"},
			},
		}}
	case k == askd.KindDecision:
		in.Title = "Deploy now?"
		in.Details = "The release branch is green."
		in.Options = options("Yes", "No")
		in.Recommended = "Yes"
	case k.IsAttention():
		in.Title = "Run the migration by hand"
	case k == askd.KindApproval:
		in.Title = "Remove the build directory"
		in.Details = "rm -rf build/"
		in.Payload = json.RawMessage(`{"command":"rm -rf build/"}`)
		in.GraceSeconds = intPtr(30)
	}
	return in
}

// wantInvalid fails the test unless err is an EINVALID *askd.Error with message
// want, or nil when want is "".
func wantInvalid(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("got error %q, want none", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("got no error, want %q", want)
	}
	var e *askd.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %T %q, want an *askd.Error", err, err)
	}
	if e.Code != askd.EINVALID {
		t.Errorf("code %q, want %q", e.Code, askd.EINVALID)
	}
	if e.Message != want {
		t.Errorf("message\n got %q\nwant %q", e.Message, want)
	}
}

func TestAskInputValidate(t *testing.T) {
	const kinds = "question, decision, action, ready, blocked, approval, form"
	q := askd.KindQuestion
	tests := []struct {
		name string
		kind askd.Kind
		edit func(in *askd.AskInput)
		html bool // previewHTML
		want string
	}{
		// A valid case for each kind.
		{name: "question valid", kind: q},
		{name: "decision valid", kind: askd.KindDecision},
		{name: "decision without options", kind: askd.KindDecision, edit: func(in *askd.AskInput) {
			in.Options, in.Recommended = nil, ""
		}},
		{name: "action valid", kind: askd.KindAction},
		{name: "ready valid", kind: askd.KindReady},
		{name: "blocked valid", kind: askd.KindBlocked},
		{name: "approval valid", kind: askd.KindApproval},
		{name: "approval with title only", kind: askd.KindApproval, edit: func(in *askd.AskInput) {
			in.Details, in.Payload, in.GraceSeconds = "", nil, nil
		}},
		{name: "approval through an MCP gate", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.Source = "filesystem" }},
		{name: "question with HTML previews valid", kind: q, html: true, edit: func(in *askd.AskInput) {
			in.Questions[0].Options[0].Preview = "<b>embedded</b>"
		}},

		// kind
		{name: "kind missing", kind: "", want: "kind: required, one of " + kinds},
		{name: "kind unknown", kind: "poll", want: `kind: "poll" is not one of ` + kinds},
		{name: "kind in wrong case", kind: "Question", want: `kind: "Question" is not one of ` + kinds},

		// questions: count, texts, headers
		{name: "questions none", kind: q, edit: func(in *askd.AskInput) { in.Questions = nil },
			want: "questions: required, 1 to 4 items"},
		{name: "questions empty list", kind: q, edit: func(in *askd.AskInput) { in.Questions = []askd.Question{} },
			want: "questions: required, 1 to 4 items"},
		{name: "questions four", kind: q, edit: func(in *askd.AskInput) {
			for i := 2; i <= 4; i++ {
				in.Questions = append(in.Questions, question(fmt.Sprintf("Question %d?", i), "H", "a", "b"))
			}
		}},
		{name: "questions five", kind: q, edit: func(in *askd.AskInput) {
			for i := 2; i <= 5; i++ {
				in.Questions = append(in.Questions, question(fmt.Sprintf("Question %d?", i), "H", "a", "b"))
			}
		}, want: "questions: 5 items, at most 4"},
		{name: "question texts duplicated", kind: q, edit: func(in *askd.AskInput) {
			in.Questions = append(in.Questions, question("Which database?", "Again", "a", "b"))
		}, want: "questions[1].question: same text as questions[0]; answers are keyed by the text, so each must differ"},
		{name: "question texts differing only in case", kind: q, edit: func(in *askd.AskInput) {
			in.Questions = append(in.Questions, question("which database?", "Again", "a", "b"))
		}},
		{name: "question text empty", kind: q, edit: func(in *askd.AskInput) { in.Questions[0].Question = "" },
			want: "questions[0].question: required, 1 to 1000 characters"},
		{name: "question text blank", kind: q, edit: func(in *askd.AskInput) { in.Questions[0].Question = " \t\n" },
			want: "questions[0].question: blank, must have visible text"},
		{name: "question text 1000 two-byte characters", kind: q, edit: func(in *askd.AskInput) {
			in.Questions[0].Question = strings.Repeat("é", 1000)
		}},
		{name: "question text 1001 characters", kind: q, edit: func(in *askd.AskInput) {
			in.Questions[0].Question = strings.Repeat("x", 1001)
		}, want: "questions[0].question: 1001 characters, at most 1000"},
		{name: "header 14 characters on the second question", kind: q, edit: func(in *askd.AskInput) {
			in.Questions = append(in.Questions, question("Which checks?", "Checks to run", "lint", "tests"))
			in.Questions[1].Header = "Checks to run!"
		}, want: "questions[1].header: 14 characters, at most 12"},
		{name: "header 12 ASCII characters", kind: q, edit: func(in *askd.AskInput) {
			in.Questions[0].Header = "Twelve chars"
		}},
		{name: "header 12 multi-byte characters", kind: q, edit: func(in *askd.AskInput) {
			in.Questions[0].Header = "データベース設定の選択肢" // 12 characters, 36 bytes
		}},
		{name: "header 12 emoji", kind: q, edit: func(in *askd.AskInput) {
			in.Questions[0].Header = strings.Repeat("🙂", 12) // 48 bytes
		}},
		{name: "header 13 multi-byte characters", kind: q, edit: func(in *askd.AskInput) {
			in.Questions[0].Header = "データベース設定の選択肢。"
		}, want: "questions[0].header: 13 characters, at most 12"},
		{name: "header empty", kind: q, edit: func(in *askd.AskInput) { in.Questions[0].Header = "" },
			want: "questions[0].header: required, 1 to 12 characters"},
		{name: "header blank", kind: q, edit: func(in *askd.AskInput) { in.Questions[0].Header = "   " },
			want: "questions[0].header: blank, must have visible text"},
		{name: "header invalid UTF-8", kind: q, edit: func(in *askd.AskInput) { in.Questions[0].Header = "Data\xffbase" },
			want: "questions[0].header: not valid UTF-8"},
		{name: "question text invalid UTF-8", kind: q, edit: func(in *askd.AskInput) { in.Questions[0].Question = "\xc3(" },
			want: "questions[0].question: not valid UTF-8"},

		// questions: options
		{name: "options none", kind: q, edit: func(in *askd.AskInput) { in.Questions[0].Options = nil },
			want: "questions[0].options: required, 2 to 4 items"},
		{name: "options one", kind: q, edit: func(in *askd.AskInput) { in.Questions[0].Options = options("SQLite") },
			want: "questions[0].options: 1 item, at least 2"},
		{name: "options one on the third question", kind: q, edit: func(in *askd.AskInput) {
			in.Questions = append(in.Questions, question("Q2?", "Two", "a", "b"), question("Q3?", "Three", "a"))
		}, want: "questions[2].options: 1 item, at least 2"},
		{name: "options four", kind: q, edit: func(in *askd.AskInput) { in.Questions[0].Options = options("a", "b", "c", "d") }},
		{name: "options five", kind: q, edit: func(in *askd.AskInput) {
			in.Questions[0].Options = options("a", "b", "c", "d", "e")
		}, want: "questions[0].options: 5 items, at most 4"},
		{name: "labels duplicated", kind: q, edit: func(in *askd.AskInput) {
			in.Questions[0].Options = options("SQLite", "Postgres", "SQLite")
		}, want: "questions[0].options[2].label: same label as questions[0].options[0]; labels must differ"},
		{name: "same label in two questions", kind: q, edit: func(in *askd.AskInput) {
			in.Questions = append(in.Questions, question("Which cache?", "Cache", "SQLite", "Redis"))
		}},
		{name: "label empty", kind: q, edit: func(in *askd.AskInput) { in.Questions[0].Options[1].Label = "" },
			want: "questions[0].options[1].label: required, 1 to 100 characters"},
		{name: "label 100 characters", kind: q, edit: func(in *askd.AskInput) {
			in.Questions[0].Options[0].Label = strings.Repeat("ß", 100)
		}},
		{name: "label 101 characters", kind: q, edit: func(in *askd.AskInput) {
			in.Questions[0].Options[0].Label = strings.Repeat("l", 101)
		}, want: "questions[0].options[0].label: 101 characters, at most 100"},
		{name: "description 500 characters", kind: q, edit: func(in *askd.AskInput) {
			in.Questions[0].Options[0].Description = strings.Repeat("d", 500)
		}},
		{name: "description 501 characters", kind: q, edit: func(in *askd.AskInput) {
			in.Questions[0].Options[1].Description = strings.Repeat("d", 501)
		}, want: "questions[0].options[1].description: 501 characters, at most 500"},
		{name: "description invalid UTF-8", kind: q, edit: func(in *askd.AskInput) {
			in.Questions[0].Options[0].Description = "\xff"
		}, want: "questions[0].options[0].description: not valid UTF-8"},
		{name: "preview 64 KiB", kind: q, edit: func(in *askd.AskInput) {
			in.Questions[0].Options[0].Preview = strings.Repeat("p", 64<<10)
		}},
		{name: "preview 64 KiB and one byte", kind: q, edit: func(in *askd.AskInput) {
			in.Questions[0].Options[0].Preview = strings.Repeat("p", 64<<10+1)
		}, want: "questions[0].options[0].preview: 65537 bytes, at most 65536 (64 KiB)"},
		{name: "preview invalid UTF-8", kind: q, edit: func(in *askd.AskInput) {
			in.Questions[0].Options[0].Preview = "# \xfe"
		}, want: "questions[0].options[0].preview: not valid UTF-8"},
		{name: "every problem listed", kind: q, edit: func(in *askd.AskInput) {
			in.Questions[0].Header = ""
			in.Questions[0].Options = options("SQLite")
		}, want: "questions[0].header: required, 1 to 12 characters; questions[0].options: 1 item, at least 2"},

		// question: fields of other kinds
		{name: "question with title", kind: q, edit: func(in *askd.AskInput) { in.Title = "t" },
			want: "title: only on attention, approval and form asks"},
		{name: "question with details", kind: q, edit: func(in *askd.AskInput) { in.Details = "d" },
			want: "details: only on attention and approval asks"},
		{name: "question with options", kind: q, edit: func(in *askd.AskInput) { in.Options = options("a", "b") },
			want: "options: only on decision asks"},
		{name: "question with recommended", kind: q, edit: func(in *askd.AskInput) { in.Recommended = "a" },
			want: "recommended: only on decision asks"},
		{name: "question with payload", kind: q, edit: func(in *askd.AskInput) { in.Payload = json.RawMessage(`{}`) },
			want: "payload: only on approval asks"},
		{name: "question with grace_seconds", kind: q, edit: func(in *askd.AskInput) { in.GraceSeconds = intPtr(0) },
			want: "grace_seconds: only on approval asks"},
		{name: "question with tool_name", kind: q, edit: func(in *askd.AskInput) { in.ToolName = "Bash" },
			want: "tool_name: only on approval asks"},
		{name: "question with tool_use_id", kind: q, edit: func(in *askd.AskInput) { in.ToolUseID = "toolu_1" },
			want: "tool_use_id: only on approval asks"},

		// attention asks
		{name: "title empty", kind: askd.KindAction, edit: func(in *askd.AskInput) { in.Title = "" },
			want: "title: required, 1 to 200 characters"},
		{name: "title blank", kind: askd.KindReady, edit: func(in *askd.AskInput) { in.Title = "   " },
			want: "title: blank, must have visible text"},
		{name: "title 200 characters", kind: askd.KindBlocked, edit: func(in *askd.AskInput) { in.Title = strings.Repeat("ü", 200) }},
		{name: "title 201 characters", kind: askd.KindDecision, edit: func(in *askd.AskInput) { in.Title = strings.Repeat("t", 201) },
			want: "title: 201 characters, at most 200"},
		{name: "title invalid UTF-8", kind: askd.KindAction, edit: func(in *askd.AskInput) { in.Title = "\x80" },
			want: "title: not valid UTF-8"},
		{name: "details 16 KiB", kind: askd.KindAction, edit: func(in *askd.AskInput) { in.Details = strings.Repeat("d", 16<<10) }},
		{name: "details 16 KiB and one byte", kind: askd.KindAction, edit: func(in *askd.AskInput) {
			in.Details = strings.Repeat("d", 16<<10+1)
		}, want: "details: 16385 bytes, at most 16384 (16 KiB)"},
		{name: "details counted in bytes", kind: askd.KindBlocked, edit: func(in *askd.AskInput) {
			in.Details = strings.Repeat("é", 8<<10+1) // 8193 characters, 16386 bytes
		}, want: "details: 16386 bytes, at most 16384 (16 KiB)"},
		{name: "details invalid UTF-8", kind: askd.KindReady, edit: func(in *askd.AskInput) { in.Details = "a\xffb" },
			want: "details: not valid UTF-8"},
		{name: "decision options one", kind: askd.KindDecision, edit: func(in *askd.AskInput) {
			in.Options, in.Recommended = options("Yes"), ""
		}, want: "options: 1 item, at least 2"},
		{name: "decision options empty list", kind: askd.KindDecision, edit: func(in *askd.AskInput) {
			in.Options, in.Recommended = []askd.Option{}, ""
		}, want: "options: required, 2 to 6 items"},
		{name: "decision options six", kind: askd.KindDecision, edit: func(in *askd.AskInput) {
			in.Options = options("Yes", "No", "c", "d", "e", "f")
		}},
		{name: "decision options seven", kind: askd.KindDecision, edit: func(in *askd.AskInput) {
			in.Options = options("Yes", "No", "c", "d", "e", "f", "g")
		}, want: "options: 7 items, at most 6"},
		{name: "decision labels duplicated", kind: askd.KindDecision, edit: func(in *askd.AskInput) {
			in.Options = options("Yes", "Yes")
		}, want: "options[1].label: same label as options[0]; labels must differ"},
		{name: "decision label 101 characters", kind: askd.KindDecision, edit: func(in *askd.AskInput) {
			in.Options[1].Label = strings.Repeat("n", 101)
		}, want: "options[1].label: 101 characters, at most 100"},
		{name: "decision description 501 characters", kind: askd.KindDecision, edit: func(in *askd.AskInput) {
			in.Options[0].Description = strings.Repeat("d", 501)
		}, want: "options[0].description: 501 characters, at most 500"},
		{name: "decision option with preview", kind: askd.KindDecision, edit: func(in *askd.AskInput) {
			in.Options[0].Preview = "p"
		}, want: "options[0].preview: only on question options"},
		{name: "recommended not among labels", kind: askd.KindDecision, edit: func(in *askd.AskInput) { in.Recommended = "Maybe" },
			want: `recommended: "Maybe" is not one of the options' labels`},
		{name: "recommended matched exactly, not by case", kind: askd.KindDecision, edit: func(in *askd.AskInput) { in.Recommended = "yes" },
			want: `recommended: "yes" is not one of the options' labels`},
		{name: "recommended without options", kind: askd.KindDecision, edit: func(in *askd.AskInput) { in.Options = nil },
			want: "recommended: only with options"},
		{name: "options on an action", kind: askd.KindAction, edit: func(in *askd.AskInput) { in.Options = options("a", "b") },
			want: "options: only on decision asks"},
		{name: "recommended on a ready ask", kind: askd.KindReady, edit: func(in *askd.AskInput) { in.Recommended = "a" },
			want: "recommended: only on decision asks"},
		{name: "questions on a blocked ask", kind: askd.KindBlocked, edit: func(in *askd.AskInput) {
			in.Questions = []askd.Question{question("q?", "h", "a", "b")}
		}, want: "questions: only on question asks"},
		{name: "payload on a decision", kind: askd.KindDecision, edit: func(in *askd.AskInput) { in.Payload = json.RawMessage(`{}`) },
			want: "payload: only on approval asks"},
		{name: "grace_seconds on an action", kind: askd.KindAction, edit: func(in *askd.AskInput) { in.GraceSeconds = intPtr(5) },
			want: "grace_seconds: only on approval asks"},
		{name: "tool_name on a ready ask", kind: askd.KindReady, edit: func(in *askd.AskInput) { in.ToolName = "Bash" },
			want: "tool_name: only on approval asks"},
		{name: "tool_use_id on a blocked ask", kind: askd.KindBlocked, edit: func(in *askd.AskInput) { in.ToolUseID = "toolu_1" },
			want: "tool_use_id: only on approval asks"},

		// approvals
		{name: "approval source of two lines", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.Source = "files\nystem" },
			want: "source: contains U+000A (control character), not allowed in source names"},
		{name: "approval source of 101 characters", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.Source = strings.Repeat("s", 101) },
			want: "source: 101 characters, at most 100"},
		{name: "source on a question", kind: q, edit: func(in *askd.AskInput) { in.Source = "filesystem" },
			want: "source: only on form and approval asks"},
		{name: "approval title empty", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.Title = "" },
			want: "title: required, 1 to 200 characters"},
		{name: "approval details beyond 16 KiB", kind: askd.KindApproval, edit: func(in *askd.AskInput) {
			in.Details = strings.Repeat("d", 16<<10+1)
		}},
		{name: "approval details 64 KiB and one byte", kind: askd.KindApproval, edit: func(in *askd.AskInput) {
			in.Details = strings.Repeat("d", 64<<10+1)
		}, want: "details: 65537 bytes, at most 65536 (64 KiB)"},
		{name: "approval details invalid UTF-8", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.Details = "\xff" },
			want: "details: not valid UTF-8"},
		{name: "payload empty object", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.Payload = json.RawMessage(`{}`) }},
		{name: "payload with a number beyond float64", kind: askd.KindApproval, edit: func(in *askd.AskInput) {
			in.Payload = json.RawMessage(`{"n": 1e400}`)
		}},
		{name: "payload a list", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.Payload = json.RawMessage(`[1,2]`) },
			want: "payload: must be a JSON object"},
		{name: "payload a string", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.Payload = json.RawMessage(`"x"`) },
			want: "payload: must be a JSON object"},
		{name: "payload null", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.Payload = json.RawMessage(`null`) },
			want: "payload: must be a JSON object"},
		{name: "payload not JSON", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.Payload = json.RawMessage(`{`) },
			want: "payload: must be a JSON object"},
		{name: "payload 256 KiB", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.Payload = objectOfSize(256 << 10) }},
		{name: "payload 256 KiB and one byte", kind: askd.KindApproval, edit: func(in *askd.AskInput) {
			in.Payload = objectOfSize(256<<10 + 1)
		}, want: "payload: 262145 bytes, at most 262144 (256 KiB)"},
		{name: "grace_seconds 0", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.GraceSeconds = intPtr(0) }},
		{name: "grace_seconds 120", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.GraceSeconds = intPtr(120) }},
		{name: "grace_seconds -1", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.GraceSeconds = intPtr(-1) },
			want: "grace_seconds: -1, must be 0 to 120"},
		{name: "grace_seconds 121", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.GraceSeconds = intPtr(121) },
			want: "grace_seconds: 121, must be 0 to 120"},
		{name: "approval from a permission prompt", kind: askd.KindApproval, edit: func(in *askd.AskInput) {
			in.ToolName, in.ToolUseID = "Bash", "toolu_01"
		}},
		{name: "tool_name 201 characters", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.ToolName = strings.Repeat("x", 201) },
			want: "tool_name: 201 characters, at most 200"},
		{name: "tool_use_id 201 characters", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.ToolUseID = strings.Repeat("x", 201) },
			want: "tool_use_id: 201 characters, at most 200"},
		{name: "approval keyed for one call", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.Key, in.OneCall = "mcp-gate 1", true }},
		{name: "one_call without key", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.OneCall = true },
			want: "one_call: only with key"},
		{name: "one_call with replaces", kind: askd.KindApproval, edit: func(in *askd.AskInput) {
			in.Key, in.Replaces, in.OneCall = "mcp-gate 1", "mcp-gate", true
		}, want: "replaces: not with one_call: a one-call approval is replaced by the next once told"},
		{name: "one_call on a decision", kind: askd.KindDecision, edit: func(in *askd.AskInput) { in.OneCall = true },
			want: "one_call: only on approval asks"},
		{name: "approval with options", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.Options = options("a", "b") },
			want: "options: only on decision asks"},
		{name: "approval with recommended", kind: askd.KindApproval, edit: func(in *askd.AskInput) { in.Recommended = "a" },
			want: "recommended: only on decision asks"},
		{name: "approval with questions", kind: askd.KindApproval, edit: func(in *askd.AskInput) {
			in.Questions = []askd.Question{question("q?", "h", "a", "b")}
		}, want: "questions: only on question asks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := baseInput(tt.kind)
			if tt.edit != nil {
				tt.edit(&in)
			}
			wantInvalid(t, in.Validate(tt.html), tt.want)
		})
	}
}

// objectOfSize returns a JSON object of exactly n bytes (n ≥ 8).
func objectOfSize(n int) json.RawMessage {
	return json.RawMessage(`{"a":"` + strings.Repeat("x", n-8) + `"}`)
}

func TestPermissionInputValidate(t *testing.T) {
	tests := []struct {
		name string
		in   askd.PermissionInput
		want string
	}{
		{name: "valid", in: askd.PermissionInput{ToolName: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}},
		{name: "valid with tool_use_id", in: askd.PermissionInput{ToolName: "Edit", Input: json.RawMessage(`{}`), ToolUseID: "toolu_01"}},
		{name: "valid with a number beyond float64", in: askd.PermissionInput{ToolName: "Bash", Input: json.RawMessage(`{"n":-1e999}`)}},
		{name: "tool_name missing", in: askd.PermissionInput{Input: json.RawMessage(`{}`)},
			want: "tool_name: required, 1 to 200 characters"},
		{name: "tool_name blank", in: askd.PermissionInput{ToolName: " ", Input: json.RawMessage(`{}`)},
			want: "tool_name: blank, must have visible text"},
		{name: "tool_name 201 characters", in: askd.PermissionInput{ToolName: strings.Repeat("t", 201), Input: json.RawMessage(`{}`)},
			want: "tool_name: 201 characters, at most 200"},
		{name: "tool_use_id 201 characters", in: askd.PermissionInput{ToolName: "Bash", Input: json.RawMessage(`{}`), ToolUseID: strings.Repeat("u", 201)},
			want: "tool_use_id: 201 characters, at most 200"},
		{name: "input missing", in: askd.PermissionInput{ToolName: "Bash"},
			want: "input: required, a JSON object"},
		{name: "input null", in: askd.PermissionInput{ToolName: "Bash", Input: json.RawMessage(`null`)},
			want: "input: must be a JSON object"},
		{name: "input a list", in: askd.PermissionInput{ToolName: "Bash", Input: json.RawMessage(`["ls"]`)},
			want: "input: must be a JSON object"},
		{name: "input 256 KiB", in: askd.PermissionInput{ToolName: "Bash", Input: objectOfSize(256 << 10)}},
		{name: "input 256 KiB and one byte", in: askd.PermissionInput{ToolName: "Bash", Input: objectOfSize(256<<10 + 1)},
			want: "input: 262145 bytes, at most 262144 (256 KiB)"},
		{name: "every problem listed", in: askd.PermissionInput{},
			want: "tool_name: required, 1 to 200 characters; input: required, a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantInvalid(t, tt.in.Validate(), tt.want)
		})
	}
}

func TestValidName(t *testing.T) {
	tests := []struct {
		name  string
		what  string
		value string
		want  string
	}{
		{name: "plain", what: "session", value: "ci-job-42"},
		{name: "unicode and spaces", what: "session", value: "séance 東京 #3"},
		{name: "one character", what: "session", value: "a"},
		{name: "128 characters", what: "session", value: strings.Repeat("名", 128)},
		{name: "129 characters", what: "session", value: strings.Repeat("n", 129),
			want: "session: 129 characters, at most 128"},
		{name: "empty", what: "session", value: "",
			want: "session: required, 1 to 128 characters"},
		{name: "blank", what: "session", value: "  ",
			want: "session: blank, must have visible text"},
		{name: "what names the field", what: "token name", value: "",
			want: "token name: required, 1 to 128 characters"},
		{name: "newline", what: "session", value: "a\nb",
			want: "session: contains U+000A (control character), not allowed in names"},
		{name: "tab", what: "session", value: "a\tb",
			want: "session: contains U+0009 (control character), not allowed in names"},
		{name: "NUL", what: "token name", value: "a\x00",
			want: "token name: contains U+0000 (control character), not allowed in names"},
		{name: "escape", what: "session", value: "a\x1b]52;c;aGk=\x07",
			want: "session: contains U+001B (control character), not allowed in names"},
		{name: "DEL", what: "session", value: "a\x7f",
			want: "session: contains U+007F (control character), not allowed in names"},
		{name: "C1 control", what: "session", value: "a\u0085b",
			want: "session: contains U+0085 (control character), not allowed in names"},
		{name: "C1 CSI", what: "session", value: "a\u009b2J",
			want: "session: contains U+009B (control character), not allowed in names"},
		{name: "line separator", what: "session", value: "a\u2028b",
			want: "session: contains U+2028 (line separator), not allowed in names"},
		{name: "zero-width space", what: "session", value: "main\u200b",
			want: "session: contains U+200B (zero-width), not allowed in names"},
		{name: "zero-width joiner", what: "session", value: "a\u200db",
			want: "session: contains U+200D (zero-width), not allowed in names"},
		{name: "word joiner", what: "session", value: "a\u2060b",
			want: "session: contains U+2060 (zero-width), not allowed in names"},
		{name: "byte order mark", what: "session", value: "\ufeffmain",
			want: "session: contains U+FEFF (zero-width), not allowed in names"},
		{name: "right-to-left override", what: "session", value: "ci\u202eboj",
			want: "session: contains U+202E (bidi control), not allowed in names"},
		{name: "left-to-right isolate", what: "session", value: "\u2066ci\u2069",
			want: "session: contains U+2066 (bidi control), not allowed in names"},
		{name: "right-to-left mark", what: "token name", value: "a\u200f",
			want: "token name: contains U+200F (bidi control), not allowed in names"},
		{name: "Arabic letter mark", what: "session", value: "a\u061c",
			want: "session: contains U+061C (bidi control), not allowed in names"},
		{name: "soft hyphen", what: "session", value: "ma\u00adin",
			want: "session: contains U+00AD (invisible), not allowed in names"},
		{name: "tag character", what: "session", value: "main\U000E0041",
			want: "session: contains U+E0041 (invisible), not allowed in names"},
		{name: "Hangul filler", what: "session", value: "\u3164",
			want: "session: contains U+3164 (invisible), not allowed in names"},
		{name: "variation selector", what: "session", value: "a\ufe01",
			want: "session: contains U+FE01 (invisible), not allowed in names"},
		{name: "emoji presentation selector allowed", what: "session", value: "\u2714\ufe0f done"},
		{name: "starts with a dash", what: "session", value: "--dangerously-skip-permissions",
			want: `session: starts with "-", which a command would read as an option`},
		{name: "one dash", what: "token name", value: "-",
			want: `token name: starts with "-", which a command would read as an option`},
		{name: "dash inside allowed", what: "session", value: "ci-job--1"},
		{name: "invalid UTF-8", what: "session", value: "a\xffb",
			want: "session: not valid UTF-8"},
		{name: "a control character before the length", what: "session", value: strings.Repeat("n", 129) + "\r",
			want: "session: contains U+000D (control character), not allowed in names"},
		{name: "too long and a dash", what: "session", value: "-" + strings.Repeat("n", 128),
			want: `session: 129 characters, at most 128; session: starts with "-", which a command would read as an option`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantInvalid(t, askd.ValidName(tt.what, tt.value), tt.want)
		})
	}
}

func TestValidateProblemsCapped(t *testing.T) {
	in := baseInput(askd.KindQuestion)
	in.Questions = nil
	for i := range 1000 {
		in.Questions = append(in.Questions, question(fmt.Sprintf("Q%d?", i), "", "a", "b"))
	}
	var want []string
	want = append(want, "questions: 1000 items, at most 4")
	for i := range 9 {
		want = append(want, fmt.Sprintf("questions[%d].header: required, 1 to 12 characters", i))
	}
	wantInvalid(t, in.Validate(false), strings.Join(want, "; ")+"; and 991 more problems")
}

// TestTextRules checks which characters each text field may hold (SPEC §7):
// one-line fields no control characters at all; labels, recommended and tool
// names nothing invisible either; multi-line fields line breaks and tabs
// only. Each case puts one string into one field of a valid input.
func TestTextRules(t *testing.T) {
	const (
		ctl   = "contains U+%04X (control character), not allowed in %s"
		multi = "contains U+%04X (control character); text may hold line breaks and tabs, no other control characters"
	)
	q, d, ap := askd.KindQuestion, askd.KindDecision, askd.KindApproval
	set := map[string]func(in *askd.AskInput, s string){
		"title":       func(in *askd.AskInput, s string) { in.Title = s },
		"details":     func(in *askd.AskInput, s string) { in.Details = s },
		"question":    func(in *askd.AskInput, s string) { in.Questions[0].Question = s },
		"header":      func(in *askd.AskInput, s string) { in.Questions[0].Header = s },
		"label":       func(in *askd.AskInput, s string) { in.Questions[0].Options[1].Label = s },
		"description": func(in *askd.AskInput, s string) { in.Questions[0].Options[0].Description = s },
		"preview":     func(in *askd.AskInput, s string) { in.Questions[0].Options[0].Preview = s },
		"option":      func(in *askd.AskInput, s string) { in.Options[1].Label = s },
		"recommended": func(in *askd.AskInput, s string) { in.Recommended = s },
		"tool_name":   func(in *askd.AskInput, s string) { in.ToolName = s },
		"tool_use_id": func(in *askd.AskInput, s string) { in.ToolUseID = s },
	}
	tests := []struct {
		name  string
		kind  askd.Kind
		field string
		value string
		want  string // "" for valid
	}{
		// one-line: titles and headers
		{name: "title plain", kind: ap, field: "title", value: "Deploy «prod» — now?"},
		{name: "title newline", kind: ap, field: "title", value: "Deploy\nnow",
			want: "title: " + fmt.Sprintf(ctl, 0x0a, "titles")},
		{name: "title tab", kind: askd.KindReady, field: "title", value: "a\tb",
			want: "title: " + fmt.Sprintf(ctl, 0x09, "titles")},
		{name: "title carriage return", kind: askd.KindAction, field: "title", value: "fake\roverwrite",
			want: "title: " + fmt.Sprintf(ctl, 0x0d, "titles")},
		{name: "title OSC 52 clipboard write", kind: d, field: "title", value: "hi\x1b]52;c;cm0gLXJmIH4=\x07",
			want: "title: " + fmt.Sprintf(ctl, 0x1b, "titles")},
		{name: "title NUL", kind: askd.KindBlocked, field: "title", value: "a\x00",
			want: "title: " + fmt.Sprintf(ctl, 0x00, "titles")},
		{name: "title DEL", kind: ap, field: "title", value: "a\x7f",
			want: "title: " + fmt.Sprintf(ctl, 0x7f, "titles")},
		{name: "title C1 CSI", kind: ap, field: "title", value: "a\u009b2J",
			want: "title: " + fmt.Sprintf(ctl, 0x9b, "titles")},
		{name: "title line separator", kind: ap, field: "title", value: "a\u2028b",
			want: "title: contains U+2028 (line separator), not allowed in titles"},
		{name: "title may carry a right-to-left mark", kind: ap, field: "title", value: "\u05e9\u05dc\u05d5\u05dd\u200f!"},
		{name: "header escape", kind: q, field: "header", value: "DB\x1b[2K",
			want: "questions[0].header: " + fmt.Sprintf(ctl, 0x1b, "headers")},
		{name: "header tab", kind: q, field: "header", value: "a\tb",
			want: "questions[0].header: " + fmt.Sprintf(ctl, 0x09, "headers")},

		// identifiers: labels, recommended, tool names
		{name: "label plain", kind: q, field: "label", value: "Postgres 17 ✔️"},
		{name: "label zero-width space", kind: q, field: "label", value: "No\u200b",
			want: "questions[0].options[1].label: contains U+200B (zero-width), not allowed in labels"},
		{name: "label zero-width non-joiner", kind: q, field: "label", value: "a\u200cb",
			want: "questions[0].options[1].label: contains U+200C (zero-width), not allowed in labels"},
		{name: "label right-to-left override", kind: q, field: "label", value: "\u202eoN",
			want: "questions[0].options[1].label: contains U+202E (bidi control), not allowed in labels"},
		{name: "label pop directional isolate", kind: q, field: "label", value: "No\u2069",
			want: "questions[0].options[1].label: contains U+2069 (bidi control), not allowed in labels"},
		{name: "label tag characters", kind: q, field: "label", value: "ok\U000E0069\U000E0067",
			want: "questions[0].options[1].label: contains U+E0069 (invisible), not allowed in labels"},
		{name: "label newline", kind: q, field: "label", value: "a\nb",
			want: "questions[0].options[1].label: " + fmt.Sprintf(ctl, 0x0a, "labels")},
		{name: "decision option label zero-width", kind: d, field: "option", value: "No\ufeff",
			want: "options[1].label: contains U+FEFF (zero-width), not allowed in labels"},
		{name: "recommended not a label and invisible", kind: d, field: "recommended", value: "Yes\u2060",
			want: "recommended: contains U+2060 (zero-width), not allowed in labels; " +
				`recommended: "Yes\u2060" is not one of the options' labels`},
		{name: "tool_name bidi", kind: ap, field: "tool_name", value: "Bash\u202d",
			want: "tool_name: contains U+202D (bidi control), not allowed in tool names"},
		{name: "tool_use_id escape", kind: ap, field: "tool_use_id", value: "toolu_\x1b",
			want: "tool_use_id: " + fmt.Sprintf(ctl, 0x1b, "tool use ids")},

		// multi-line: question text, descriptions, details, previews
		{name: "question text several lines", kind: q, field: "question", value: "Which database?\n\n\tFor the cache."},
		{name: "question text CRLF", kind: q, field: "question", value: "Which\r\ndatabase?"},
		{name: "question text bidi allowed", kind: q, field: "question", value: "\u202bWhich?\u202c"},
		{name: "question text lone carriage return", kind: q, field: "question", value: "Which?\rOverwritten",
			want: "questions[0].question: " + fmt.Sprintf(multi, 0x0d)},
		{name: "question text escape", kind: q, field: "question", value: "Which?\x1b[8mhidden",
			want: "questions[0].question: " + fmt.Sprintf(multi, 0x1b)},
		{name: "description C1", kind: q, field: "description", value: "a\u0090b",
			want: "questions[0].options[0].description: " + fmt.Sprintf(multi, 0x90)},
		{name: "description zero-width allowed", kind: q, field: "description", value: "a\u200db"},
		{name: "details diff", kind: ap, field: "details", value: "--- a\n+++ b\r\n@@\n-\tx\n+\ty\n"},
		{name: "details bell", kind: ap, field: "details", value: "ring\x07",
			want: "details: " + fmt.Sprintf(multi, 0x07)},
		{name: "details NUL", kind: askd.KindReady, field: "details", value: "a\x00b",
			want: "details: " + fmt.Sprintf(multi, 0x00)},
		{name: "preview backspace", kind: q, field: "preview", value: "# x\n\x08",
			want: "questions[0].options[0].preview: " + fmt.Sprintf(multi, 0x08)},
		{name: "preview DEL", kind: q, field: "preview", value: "\x7f",
			want: "questions[0].options[0].preview: " + fmt.Sprintf(multi, 0x7f)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := baseInput(tt.kind)
			set[tt.field](&in, tt.value)
			wantInvalid(t, in.Validate(false), tt.want)
		})
	}
}

// TestPayloadStrictJSON: a payload from a Go caller (not through Decode) is
// held to strict JSON too, named under its field.
func TestPayloadStrictJSON(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		want    string
	}{
		{name: "plain", payload: `{"command":"ls","env":{"A":"1"}}`},
		{name: "duplicate key", payload: `{"command":"ls","command":"rm -rf /"}`,
			want: "payload.command: duplicate key; each key may appear once in an object"},
		{name: "duplicate key deep", payload: `{"a":[{"b":1},{"b":1,"b":2}]}`,
			want: "payload.a[1].b: duplicate key; each key may appear once in an object"},
		{name: "duplicate odd key", payload: `{"a b":1,"a b":2}`,
			want: `payload["a b"]: duplicate key; each key may appear once in an object`},
		{name: "invalid UTF-8", payload: "{\"command\":\"ls \xff\"}",
			want: "payload.command: not valid UTF-8 (byte 0xff)"},
		{name: "lone surrogate", payload: `{"command":"\udc00"}`,
			want: `payload.command: \udc00 is half of a surrogate pair, not a character`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := baseInput(askd.KindApproval)
			in.Payload = json.RawMessage(tt.payload)
			wantInvalid(t, in.Validate(false), tt.want)
			pin := askd.PermissionInput{ToolName: "Bash", Input: json.RawMessage(tt.payload)}
			want := strings.Replace(tt.want, "payload", "input", 1)
			wantInvalid(t, pin.Validate(), want)
		})
	}
}

func TestPrintable(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "plain", in: "Deploy now?", want: "Deploy now?"},
		{name: "letters of any script", in: "séance 東京 שלום 😀 ✔️", want: "séance 東京 שלום 😀 ✔️"},
		{name: "backslashes as they are", in: `C:\x1b \n`, want: `C:\x1b \n`},
		{name: "replacement character as it is", in: "a\ufffdb", want: "a\ufffdb"},
		{name: "OSC 52 clipboard write", in: "hi\x1b]52;c;cm0gLXJm\x07", want: `hi\x1b]52;c;cm0gLXJm\x07`},
		{name: "line overwrite", in: "ok\r\x1b[2Kfake", want: `ok\r\x1b[2Kfake`},
		{name: "line breaks and tabs", in: "a\nb\tc\r\n", want: `a\nb\tc\r\n`},
		{name: "NUL and DEL", in: "\x00\x7f", want: `\x00\x7f`},
		{name: "C1 CSI", in: "a\u009b2J", want: `a\u009b2J`},
		{name: "line separator", in: "a\u2028b", want: `a\u2028b`},
		{name: "right-to-left override", in: "txt.\u202eexe", want: `txt.\u202eexe`},
		{name: "zero-width space", in: "No\u200b", want: `No\u200b`},
		{name: "byte order mark", in: "\ufeffx", want: `\ufeffx`},
		{name: "tag characters", in: "ok\U000E0069", want: `ok\U000e0069`},
		{name: "bytes that are not UTF-8", in: "a\xff\xc3", want: `a\xff\xc3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := askd.Printable(tt.in)
			if got != tt.want {
				t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
			}
			for _, r := range got {
				if askd.Unprintable(r) {
					t.Errorf("output %q holds U+%04X", got, r)
				}
			}
			if err := askd.ValidName("name", "n"+got); err != nil && tt.in != "" {
				t.Errorf("output %q is not a valid name: %v", got, err)
			}
		})
	}
}
