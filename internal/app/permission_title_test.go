package app_test

import (
	"encoding/json"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// A tool call whose command holds control characters still becomes an
// approval, its title quoting them as escapes (a title may not hold them).
func TestPermissionTitleQuotesControlCharacters(t *testing.T) {
	tests := []struct {
		name, input, title string
	}{
		{name: "plain", input: `{"command":"make test"}`, title: "Allow Bash: make test"},
		{name: "escape sequence", input: `{"command":"printf '\u001b[1mbold\u001b[0m'"}`, title: `Allow Bash: printf '\x1b[1mbold\x1b[0m'`},
		{name: "line breaks folded", input: `{"command":"a\n\tb"}`, title: "Allow Bash: a b"},
		{name: "bidi override", input: `{"command":"ls \u202e"}`, title: `Allow Bash: ls \u202e`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ai, err := app.PermissionAsk(&askd.PermissionInput{ToolName: "Bash", Input: json.RawMessage(tt.input)})
			if err != nil {
				t.Fatal(err)
			}
			if ai.Title != tt.title {
				t.Errorf("title %q, want %q", ai.Title, tt.title)
			}
			if err := ai.Validate(false); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}
