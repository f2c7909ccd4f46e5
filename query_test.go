package askd_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/askd-dev/askd"
)

func TestSearchWords(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"", nil},
		{"  ", nil},
		{"Deploy on Friday?", []string{"Deploy", "on", "Friday"}},
		{"staging.example.com/build_tmp v1.2", []string{"staging", "example", "com", "build", "tmp", "v1", "2"}},
		{"don't", []string{"don", "t"}},
		{"Welche Datenbank? 数据库 café", []string{"Welche", "Datenbank", "数据库", "café"}},
		{"x²—y", []string{"x²", "y"}},
	} {
		if got := askd.SearchWords(c.text); !slices.Equal(got, c.want) {
			t.Errorf("SearchWords(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// SearchText holds the words people read and wrote, not previews or
// payloads, in the same order every time.
func TestSearchText(t *testing.T) {
	a := &askd.Ask{
		Kind: askd.KindQuestion, Title: "Title", Details: "some details.",
		Questions: []askd.Question{
			{Question: "Which db?", Header: "DB", Options: []askd.Option{{Label: "SQLite", Description: "embedded", Preview: "previewword"}}},
			{Question: "Which checks?", Header: "Checks", MultiSelect: true, Options: []askd.Option{{Label: "lint"}}},
		},
		Options: []askd.Option{{Label: "merge", Description: "now"}},
		Payload: json.RawMessage(`{"cmd": "payloadword"}`),
		Answer: &askd.Answer{
			Answers: map[string]askd.Choice{
				"Which db?":     {Values: []string{"own words"}},
				"Which checks?": {Values: []string{"lint", "vet"}, Multi: true},
			},
			Response: "a reply", Answer: "an answer", Comment: "a comment",
			Payload: json.RawMessage(`{"cmd": "payloadword"}`),
		},
	}
	want := "Title some details Which db DB SQLite embedded Which checks Checks lint merge now an answer a reply a comment own words lint vet"
	for range 5 {
		if got := a.SearchText(); got != want {
			t.Fatalf("SearchText =\n%q, want\n%q", got, want)
		}
	}
}
