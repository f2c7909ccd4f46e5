package askd_test

import (
	"testing"

	"github.com/askd-dev/askd"
)

// Through names the server only of an approval with a source (an MCP gate's,
// SPEC §14); a form's source is who asks, said otherwise.
func TestThrough(t *testing.T) {
	for _, tt := range []struct {
		name string
		ask  askd.Ask
		want string
	}{
		{"a gate's approval", askd.Ask{Kind: askd.KindApproval, ToolName: "mcp__filesystem__write_file", Source: "filesystem"}, "through filesystem"},
		{"an approval with a source and no tool", askd.Ask{Kind: askd.KindApproval, Source: "deployer"}, "through deployer"},
		{"a permission prompt", askd.Ask{Kind: askd.KindApproval, ToolName: "mcp__filesystem__write_file"}, ""},
		{"a form", askd.Ask{Kind: askd.KindForm, Source: "deployer"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.ask.Through(); got != tt.want {
				t.Errorf("Through() = %q, want %q", got, tt.want)
			}
		})
	}
}
