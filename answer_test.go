package askd_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
)

// The asks answers are checked against.
var (
	questionAsk = &askd.Ask{ID: 1, Kind: askd.KindQuestion, Session: "s1", Status: askd.StatusPending,
		Questions: []askd.Question{
			question("Which database?", "Database", "SQLite", "Postgres"),
			{Question: "Which checks?", Header: "Checks", Options: options("lint", "tests", "vet"), MultiSelect: true},
		}}
	decisionAsk = &askd.Ask{ID: 2, Kind: askd.KindDecision, Session: "s1", Status: askd.StatusPending,
		Title: "Deploy now?", Options: options("Yes", "No"), Recommended: "Yes"}
	actionAsk = &askd.Ask{ID: 3, Kind: askd.KindAction, Session: "s1", Status: askd.StatusPending,
		Title: "Rotate the key"}
	readyAsk    = &askd.Ask{ID: 4, Kind: askd.KindReady, Session: "s1", Title: "Review the branch"}
	blockedAsk  = &askd.Ask{ID: 5, Kind: askd.KindBlocked, Session: "s1", Title: "Need credentials"}
	approvalAsk = &askd.Ask{ID: 6, Kind: askd.KindApproval, Session: "s1", Status: askd.StatusPending,
		Title: "Remove the build directory", Payload: json.RawMessage(`{"command":"rm -rf build/"}`)}
)

func TestAskCheck(t *testing.T) {
	long := strings.Repeat("w", 4001)
	tests := []struct {
		name string
		ask  *askd.Ask
		body string
		want string
		// norm, when set, is the answers map Check must leave behind.
		norm map[string]askd.Choice
	}{
		// question asks
		{name: "every question answered", ask: questionAsk,
			body: `{"answers":{"Which database?":"SQLite","Which checks?":["lint","tests"]}}`,
			norm: map[string]askd.Choice{
				"Which database?": {Values: []string{"SQLite"}},
				"Which checks?":   {Values: []string{"lint", "tests"}, Multi: true},
			}},
		{name: "answers with a response", ask: questionAsk,
			body: `{"answers":{"Which database?":"Postgres","Which checks?":["vet"]},"response":"and hurry"}`},
		{name: "response alone", ask: questionAsk, body: `{"response":"neither, use files"}`},
		{name: "response with empty answers", ask: questionAsk, body: `{"answers":{},"response":"later"}`},
		{name: "nothing given", ask: questionAsk, body: `{}`,
			want: "answers: required: answer every question, or give a response alone"},
		{name: "empty answers alone", ask: questionAsk, body: `{"answers":{}}`,
			want: "answers: required: answer every question, or give a response alone"},
		{name: "one question unanswered", ask: questionAsk, body: `{"answers":{"Which database?":"SQLite"}}`,
			want: `answers["Which checks?"]: not answered; every question needs an answer`},
		{name: "unknown question key", ask: questionAsk,
			body: `{"answers":{"Which database?":"SQLite","Which checks?":["lint"],"Which colour?":"red"}}`,
			want: `answers["Which colour?"]: no such question in this ask`},
		{name: "question key matched exactly", ask: questionAsk,
			body: `{"answers":{"which database?":"SQLite","Which checks?":["lint"]}}`,
			want: `answers["which database?"]: no such question in this ask; answers["Which database?"]: not answered; every question needs an answer`},
		{name: "single-select given a list", ask: questionAsk,
			body: `{"answers":{"Which database?":["SQLite"],"Which checks?":["lint"]}}`,
			want: `answers["Which database?"]: a list, but this question takes one answer`},
		{name: "multi-select given a string becomes a list", ask: questionAsk,
			body: `{"answers":{"Which database?":"SQLite","Which checks?":"tests"}}`,
			norm: map[string]askd.Choice{
				"Which database?": {Values: []string{"SQLite"}},
				"Which checks?":   {Values: []string{"tests"}, Multi: true},
			}},
		{name: "multi-select own words as a string", ask: questionAsk,
			body: `{"answers":{"Which database?":"SQLite","Which checks?":"fuzzing"}}`},
		{name: "single-select own words accepted", ask: questionAsk,
			body: `{"answers":{"Which database?":"MySQL, sadly","Which checks?":["lint"]}}`},
		{name: "multi-select one own-words value accepted", ask: questionAsk,
			body: `{"answers":{"Which database?":"SQLite","Which checks?":["lint","fuzzing"]}}`},
		{name: "multi-select two own-words values refused", ask: questionAsk,
			body: `{"answers":{"Which database?":"SQLite","Which checks?":["lint","fuzzing","benchmarks"]}}`,
			want: `answers["Which checks?"]: 2 values are not option labels; at most one may be the person's own words`},
		{name: "multi-select every label", ask: questionAsk,
			body: `{"answers":{"Which database?":"SQLite","Which checks?":["vet","lint","tests"]}}`},
		{name: "multi-select duplicate label", ask: questionAsk,
			body: `{"answers":{"Which database?":"SQLite","Which checks?":["lint","tests","lint"]}}`,
			want: `answers["Which checks?"][2]: "lint" given twice`},
		{name: "multi-select duplicate own words", ask: questionAsk,
			body: `{"answers":{"Which database?":"SQLite","Which checks?":["fuzz","fuzz"]}}`,
			want: `answers["Which checks?"][1]: "fuzz" given twice; answers["Which checks?"]: 2 values are not option labels; at most one may be the person's own words`},
		{name: "multi-select empty list", ask: questionAsk,
			body: `{"answers":{"Which database?":"SQLite","Which checks?":[]}}`,
			want: `answers["Which checks?"]: empty; choose at least one option or give your own words`},
		{name: "label matched exactly, else own words", ask: questionAsk,
			body: `{"answers":{"Which database?":"sqlite","Which checks?":["LINT","Tests"]}}`,
			want: `answers["Which checks?"]: 2 values are not option labels; at most one may be the person's own words`},
		{name: "own words empty", ask: questionAsk,
			body: `{"answers":{"Which database?":"","Which checks?":["lint"]}}`,
			want: `answers["Which database?"]: required, 1 to 4000 characters`},
		{name: "own words blank in a list", ask: questionAsk,
			body: `{"answers":{"Which database?":"SQLite","Which checks?":["lint"," "]}}`,
			want: `answers["Which checks?"][1]: blank, must have visible text`},
		{name: "own words 4001 characters", ask: questionAsk,
			body: `{"answers":{"Which database?":"` + long + `","Which checks?":["lint"]}}`,
			want: `answers["Which database?"]: 4001 characters, at most 4000`},
		{name: "response 4001 characters", ask: questionAsk, body: `{"response":"` + long + `"}`,
			want: "response: 4001 characters, at most 4000"},
		{name: "question ask given answer", ask: questionAsk, body: `{"response":"r","answer":"Yes"}`,
			want: "answer: not for question asks"},
		{name: "question ask given decision", ask: questionAsk, body: `{"response":"r","decision":"approved"}`,
			want: "decision: not for question asks"},
		{name: "question ask given payload", ask: questionAsk, body: `{"response":"r","payload":{}}`,
			want: "payload: not for question asks"},
		{name: "question ask given comment", ask: questionAsk, body: `{"response":"r","comment":"c"}`,
			want: "comment: not for question asks"},

		// attention asks
		{name: "decision answered with a label", ask: decisionAsk, body: `{"answer":"Yes"}`},
		{name: "decision answered in own words", ask: decisionAsk, body: `{"answer":"Wait until Monday"}`},
		{name: "action answered", ask: actionAsk, body: `{"answer":"done"}`},
		{name: "ready answered", ask: readyAsk, body: `{"answer":"looks good"}`},
		{name: "blocked answered", ask: blockedAsk, body: `{"answer":"sent them by mail"}`},
		{name: "attention answer missing", ask: decisionAsk, body: `{}`,
			want: "answer: required, 1 to 4000 characters"},
		{name: "attention answer blank", ask: actionAsk, body: `{"answer":"  "}`,
			want: "answer: blank, must have visible text"},
		{name: "attention answer 4001 characters", ask: readyAsk, body: `{"answer":"` + long + `"}`,
			want: "answer: 4001 characters, at most 4000"},
		{name: "attention answer of several lines", ask: decisionAsk, body: `{"answer":"Not yet.\n\tWait for CI.\r\n"}`},
		{name: "attention answer escape", ask: decisionAsk, body: `{"answer":"ok\u001b]52;c;eA==\u0007"}`,
			want: "answer: contains U+001B (control character); text may hold line breaks and tabs, no other control characters"},
		{name: "attention answer lone carriage return", ask: actionAsk, body: `{"answer":"done\rnot done"}`,
			want: "answer: contains U+000D (control character); text may hold line breaks and tabs, no other control characters"},
		{name: "own words C1", ask: questionAsk, body: `{"answers":{"Which database?":"My\u009bSQL","Which checks?":["lint"]}}`,
			want: `answers["Which database?"]: contains U+009B (control character); text may hold line breaks and tabs, no other control characters`},
		{name: "response DEL", ask: questionAsk, body: `{"response":"no\u007f"}`,
			want: "response: contains U+007F (control character); text may hold line breaks and tabs, no other control characters"},
		{name: "comment NUL", ask: approvalAsk, body: `{"decision":"rejected","comment":"no\u0000"}`,
			want: "comment: contains U+0000 (control character); text may hold line breaks and tabs, no other control characters"},
		{name: "attention ask given answers", ask: decisionAsk, body: `{"answer":"Yes","answers":{}}`,
			want: "answers: not for decision asks"},
		{name: "attention ask given response", ask: blockedAsk, body: `{"answer":"a","response":"r"}`,
			want: "response: not for blocked asks"},
		{name: "attention ask given decision", ask: actionAsk, body: `{"answer":"a","decision":"approved"}`,
			want: "decision: not for action asks"},
		{name: "attention ask given payload", ask: readyAsk, body: `{"answer":"a","payload":{"x":1}}`,
			want: "payload: not for ready asks"},
		{name: "attention ask given comment", ask: decisionAsk, body: `{"answer":"a","comment":"c"}`,
			want: "comment: not for decision asks"},

		// approvals
		{name: "approved", ask: approvalAsk, body: `{"decision":"approved"}`},
		{name: "approved with a comment", ask: approvalAsk, body: `{"decision":"approved","comment":"fine"}`},
		{name: "rejected with a comment", ask: approvalAsk, body: `{"decision":"rejected","comment":"not today"}`},
		{name: "modified with a payload", ask: approvalAsk, body: `{"decision":"modified","payload":{"command":"rm -rf build/cache"}}`},
		{name: "modified without payload", ask: approvalAsk, body: `{"decision":"modified"}`,
			want: "payload: required with decision modified"},
		{name: "modified with payload null", ask: approvalAsk, body: `{"decision":"modified","payload":null}`,
			want: "payload: must be a JSON object"},
		{name: "modified with a list payload", ask: approvalAsk, body: `{"decision":"modified","payload":["rm"]}`,
			want: "payload: must be a JSON object"},
		{name: "modified with a payload over 256 KiB", ask: approvalAsk,
			body: `{"decision":"modified","payload":` + string(objectOfSize(256<<10+1)) + `}`,
			want: "payload: 262145 bytes, at most 262144 (256 KiB)"},
		{name: "approved with a payload", ask: approvalAsk, body: `{"decision":"approved","payload":{}}`,
			want: "payload: only with decision modified"},
		{name: "rejected with a payload", ask: approvalAsk, body: `{"decision":"rejected","payload":{"a":1}}`,
			want: "payload: only with decision modified"},
		{name: "decision missing", ask: approvalAsk, body: `{"comment":"hm"}`,
			want: "decision: required, one of approved, modified, rejected"},
		{name: "decision unknown", ask: approvalAsk, body: `{"decision":"maybe"}`,
			want: `decision: "maybe" is not one of approved, modified, rejected`},
		{name: "decision in wrong case", ask: approvalAsk, body: `{"decision":"Approved"}`,
			want: `decision: "Approved" is not one of approved, modified, rejected`},
		{name: "comment 4001 characters", ask: approvalAsk, body: `{"decision":"rejected","comment":"` + long + `"}`,
			want: "comment: 4001 characters, at most 4000"},
		{name: "approval given answer", ask: approvalAsk, body: `{"decision":"approved","answer":"yes"}`,
			want: "answer: not for approval asks"},
		{name: "approval given answers", ask: approvalAsk, body: `{"decision":"approved","answers":{"q":"a"}}`,
			want: "answers: not for approval asks"},
		{name: "approval given response", ask: approvalAsk, body: `{"decision":"approved","response":"r"}`,
			want: "response: not for approval asks"},
		{name: "every problem listed", ask: approvalAsk, body: `{"answer":"yes","decision":"ok"}`,
			want: `answer: not for approval asks; decision: "ok" is not one of approved, modified, rejected`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ans askd.Answer
			if err := askd.Decode([]byte(tt.body), &ans); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			wantInvalid(t, tt.ask.CheckAnswer(&ans), tt.want)
			if tt.norm != nil && !reflect.DeepEqual(ans.Answers, tt.norm) {
				t.Errorf("answers after Check\n got %#v\nwant %#v", ans.Answers, tt.norm)
			}
		})
	}
}

func TestChoiceJSON(t *testing.T) {
	tests := []struct {
		name   string
		json   string
		choice askd.Choice
		joined string
	}{
		{name: "string", json: `"SQLite"`, choice: askd.Choice{Values: []string{"SQLite"}}, joined: "SQLite"},
		{name: "empty string", json: `""`, choice: askd.Choice{Values: []string{""}}, joined: ""},
		{name: "list of two", json: `["lint","tests"]`, choice: askd.Choice{Values: []string{"lint", "tests"}, Multi: true}, joined: "lint, tests"},
		{name: "list of one", json: `["lint"]`, choice: askd.Choice{Values: []string{"lint"}, Multi: true}, joined: "lint"},
		{name: "empty list", json: `[]`, choice: askd.Choice{Values: []string{}, Multi: true}, joined: ""},
		{name: "text needing escapes", json: `"a \"quoted\" \u003cword\u003e"`, choice: askd.Choice{Values: []string{`a "quoted" <word>`}}, joined: `a "quoted" <word>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c askd.Choice
			if err := json.Unmarshal([]byte(tt.json), &c); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !reflect.DeepEqual(c, tt.choice) {
				t.Errorf("decoded %#v, want %#v", c, tt.choice)
			}
			got, err := json.Marshal(c)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(got) != tt.json {
				t.Errorf("encoded %s, want %s", got, tt.json)
			}
			if j := c.Joined(); j != tt.joined {
				t.Errorf("Joined() = %q, want %q", j, tt.joined)
			}
		})
	}
}

func TestChoiceMarshalZero(t *testing.T) {
	tests := []struct {
		name   string
		choice askd.Choice
		want   string
	}{
		{name: "single without values", choice: askd.Choice{}, want: `""`},
		{name: "multi without values", choice: askd.Choice{Multi: true}, want: `[]`},
		{name: "single keeps the first value", choice: askd.Choice{Values: []string{"a", "b"}}, want: `"a"`},
		{name: "in an answer", choice: askd.Choice{Values: []string{"x"}, Multi: true}, want: `["x"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.choice)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestChoiceUnmarshalRefusesOtherTypes(t *testing.T) {
	for _, body := range []string{`5`, `true`, `{}`, `[1]`, `["a",["b"]]`} {
		t.Run(body, func(t *testing.T) {
			var c askd.Choice
			err := json.Unmarshal([]byte(body), &c)
			wantInvalid(t, err, "answers: each value must be a string or a list of strings")
		})
	}
}

func TestAnswerJSON(t *testing.T) {
	ans := askd.Answer{
		Answers: map[string]askd.Choice{
			"Which database?": {Values: []string{"SQLite"}},
			"Which checks?":   {Values: []string{"lint", "tests"}, Multi: true},
		},
		Response: "thanks",
	}
	got, err := json.Marshal(ans)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"answers":{"Which checks?":["lint","tests"],"Which database?":"SQLite"},"response":"thanks"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var back askd.Answer
	if err := askd.Decode(got, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, ans) {
		t.Errorf("round trip: got %#v, want %#v", back, ans)
	}
}

func TestAskMarshalJSONKey(t *testing.T) {
	for _, k := range askd.Kinds {
		t.Run(string(k), func(t *testing.T) {
			a := (&askd.Ask{ID: 9, Kind: k, Session: "build-7", Status: askd.StatusPending, Title: "t"}).WithKey()
			b, err := json.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			key, has := m["key"]
			if k.IsAttention() {
				if key != "session:build-7" {
					t.Errorf("key = %v, want session:build-7 in %s", key, b)
				}
			} else if has {
				t.Errorf("key %v present on a %s ask: %s", key, k, b)
			}
			// The other fields are still there, under their own names.
			if m["id"] != 9.0 || m["kind"] != string(k) || m["session"] != "build-7" || m["status"] != "pending" {
				t.Errorf("fields missing or wrong: %s", b)
			}
		})
	}
}

func TestAskMarshalJSONInEvent(t *testing.T) {
	e := askd.Event{ID: 1, AskID: 2, Action: askd.ActionCreated,
		Ask: (&askd.Ask{ID: 2, Kind: askd.KindBlocked, Session: "s"}).WithKey()}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"key":"session:s"`) {
		t.Errorf("event snapshot lacks the key: %s", b)
	}
}

func TestKinds(t *testing.T) {
	tests := []struct {
		kind      askd.Kind
		valid     bool
		attention bool
	}{
		{askd.KindQuestion, true, false},
		{askd.KindDecision, true, true},
		{askd.KindAction, true, true},
		{askd.KindReady, true, true},
		{askd.KindBlocked, true, true},
		{askd.KindApproval, true, false},
		{"", false, false},
		{"Decision", false, false},
		{"poll", false, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			if got := tt.kind.Valid(); got != tt.valid {
				t.Errorf("Valid() = %v, want %v", got, tt.valid)
			}
			if got := tt.kind.IsAttention(); got != tt.attention {
				t.Errorf("IsAttention() = %v, want %v", got, tt.attention)
			}
		})
	}
}

// A refusal lists the first ten problems and counts the rest, so a large bad
// body cannot make a message many times its size.
func TestCheckProblemsCapped(t *testing.T) {
	tests := []struct {
		name  string
		dups  int // repeats of "lint" in the multi-select answer
		extra string
	}{
		{name: "ten problems listed", dups: 11},
		{name: "one more counted", dups: 12, extra: "; and 1 more problem"},
		{name: "many more counted", dups: 100001, extra: "; and 99990 more problems"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"answers":{"Which database?":"SQLite","Which checks?":[` +
				strings.TrimSuffix(strings.Repeat(`"lint",`, tt.dups), ",") + `]}}`
			var ans askd.Answer
			if err := askd.Decode([]byte(body), &ans); err != nil {
				t.Fatal(err)
			}
			var want []string
			for i := 1; i <= 10; i++ {
				want = append(want, fmt.Sprintf(`answers["Which checks?"][%d]: "lint" given twice`, i))
			}
			wantInvalid(t, questionAsk.CheckAnswer(&ans), strings.Join(want, "; ")+tt.extra)
		})
	}
}
