package api_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/askd-dev/askd/internal/testserver"
)

// redoclyCLI is the OpenAPI linter the document is held to, pinned.
const redoclyCLI = "@redocly/cli@2.77.0"

// TestLintedByRedocly: Redocly CLI, a linter of its own, finds no error and
// no warning in openapi.json under its recommended rules, but the two
// problems .redocly.lint-ignore.yaml leaves out, each for its reason.
func TestLintedByRedocly(t *testing.T) {
	t.Parallel()
	node := testserver.Node(t)
	redocly := testserver.NPMBin(t, redoclyCLI, "redocly")
	cmd := exec.Command(node, redocly, "lint", "--format=json", "openapi.json")
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var report struct {
		Totals   struct{ Errors, Warnings, Ignored int }
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string `json:"severity"`
			Message  string `json:"message"`
			Location []struct {
				Pointer string `json:"pointer"`
			} `json:"location"`
		}
	}
	if jerr := json.Unmarshal(out, &report); jerr != nil {
		t.Fatalf("redocly lint: %v, %v\n%s%s", err, jerr, out, stderr.String())
	}
	for _, p := range report.Problems {
		if p.Severity != "off" { // an ignored problem is listed as off
			where := ""
			if len(p.Location) > 0 {
				where = p.Location[0].Pointer
			}
			t.Errorf("%s %s at %s: %s", p.Severity, p.RuleID, where, p.Message)
		}
	}
	if report.Totals.Errors != 0 || report.Totals.Warnings != 0 || report.Totals.Ignored != 1 || err != nil {
		t.Errorf("redocly lint: %+v (%v), want no errors or warnings and the 1 problem ignored", report.Totals, err)
	}
}
