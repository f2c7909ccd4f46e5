package strictjson_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/askd-dev/askd"
)

// Copies of the root package's test helpers and asks (validate_test.go,
// answer_test.go), which the tests of another package cannot share.

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
	approvalAsk = &askd.Ask{ID: 6, Kind: askd.KindApproval, Session: "s1", Status: askd.StatusPending,
		Title: "Remove the build directory", Payload: json.RawMessage(`{"command":"rm -rf build/"}`)}
)
