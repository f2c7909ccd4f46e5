package apicmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
)

// describe prints an ask for people: everything the other side acts on.
// For an approval its details and payload and, after an edit, the edited
// payload as a diff against the original; comments and replies; for
// questions the answer to each. Every string from the server goes through
// cli.Term: a database written before askd refused control characters, or
// text a field may hold, reaches no terminal raw.
func describe(w io.Writer, a *askd.Ask) {
	st := string(a.Status)
	if a.CancelReason != "" {
		st += " (" + string(a.CancelReason) + ")"
	}
	fmt.Fprintf(w, "ask #%d  %s  %s  session %s of agent %s", a.ID, cli.Term(string(a.Kind)), cli.Term(st), cli.Term(a.Session), cli.Term(a.Agent))
	if a.Revision > 1 {
		fmt.Fprintf(w, "  revision %d", a.Revision)
	}
	fmt.Fprintln(w)
	// Who it is for (SPEC §10): its owner, whom it was escalated to, who
	// is on it.
	for _, r := range [][2]string{{"routed to", a.Owner}, {"escalated to", a.EscalatedTo}, {"claimed by", a.ClaimedBy}} {
		if r[1] != "" {
			fmt.Fprintf(w, "  %s %s\n", r[0], cli.Term(r[1]))
		}
	}
	if a.ApprovalsNeeded > 0 {
		fmt.Fprintf(w, "  %s\n", approvalCount(a))
	}
	if a.Kind == askd.KindForm {
		describeForm(w, a)
	} else if a.Title != "" {
		fmt.Fprintf(w, "  %s\n", cli.Term(a.Title))
	}
	if t := a.Through(); t != "" { // an MCP gate's approval (SPEC §14)
		fmt.Fprintf(w, "  %s\n", cli.Term(t))
	}
	if a.ToolName != "" {
		fmt.Fprintf(w, "  tool: %s\n", cli.Term(a.ToolName))
	}
	if a.Keyed() {
		fmt.Fprintf(w, "  key: %s\n", cli.Term(a.Key))
	}
	if a.Details != "" {
		block(w, "  ", a.Details)
	}
	ans := a.Answer
	for _, q := range a.Questions {
		multi := ""
		if q.MultiSelect {
			multi = " (several may be chosen)"
		}
		fmt.Fprintf(w, "  [%s] %s%s\n", cli.Term(q.Header), cli.Term(q.Question), multi)
		for _, o := range q.Options {
			option(w, o, "")
		}
		if ans != nil {
			if c, ok := ans.Answers[q.Question]; ok {
				fmt.Fprintf(w, "    answer: %s\n", choiceText(q.Options, c.Values))
			}
		}
	}
	for _, o := range a.Options {
		mark := ""
		if o.Label == a.Recommended {
			mark = " (recommended)"
		}
		option(w, o, mark)
	}
	if a.Payload != nil {
		fmt.Fprintln(w, "  payload:")
		block(w, "    ", indentJSON(a.Payload))
	}
	if ans != nil {
		by := "by " + cli.Term(a.SettledBy)
		switch {
		case ans.Action == askd.FormDecline:
			fmt.Fprintf(w, "  declined %s\n", by)
		case ans.Action == askd.FormAccept && a.URL != "":
			fmt.Fprintf(w, "  done %s\n", by)
		case ans.Action == askd.FormAccept:
			fmt.Fprintf(w, "  accepted %s\n", by)
		case ans.Decision != "":
			fmt.Fprintf(w, "  decision %s: %s\n", by, cli.Term(ans.Decision))
		case ans.Answer != "":
			fmt.Fprintf(w, "  answer %s: %s\n", by, choiceText(a.Options, []string{ans.Answer}))
		case len(ans.Answers) > 0:
			fmt.Fprintf(w, "  answered %s\n", by)
		case ans.Response != "":
			fmt.Fprintf(w, "  dismissed %s\n", by)
		}
		if ans.Decision == askd.DecisionModified {
			fmt.Fprintln(w, "  edited payload (- the agent's, + the person's):")
			block(w, "    ", payloadDiff(a.Payload, ans.Payload))
		}
		if ans.Comment != "" {
			fmt.Fprintln(w, "  comment:")
			block(w, "    ", ans.Comment)
		}
		if ans.Response != "" {
			fmt.Fprintln(w, "  reply:")
			block(w, "    ", ans.Response)
		}
	} else if a.Status == askd.StatusCancelled {
		fmt.Fprintf(w, "  no answer (%s by %s)\n", cli.Term(string(a.CancelReason)), cli.Term(a.SettledBy))
	}
}

// option prints one option of a list.
func option(w io.Writer, o askd.Option, mark string) {
	if o.Description == "" {
		fmt.Fprintf(w, "    - %s%s\n", cli.Term(o.Label), mark)
		return
	}
	fmt.Fprintf(w, "    - %s%s  %s\n", cli.Term(o.Label), mark, cli.Term(o.Description))
}

// choiceText is the values of an answer, each marked when it is the
// person's own words rather than a label.
func choiceText(opts []askd.Option, values []string) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = cli.Term(v)
		if len(opts) > 0 && !slices.ContainsFunc(opts, func(o askd.Option) bool { return o.Label == v }) {
			parts[i] += " (own words)"
		}
	}
	return strings.Join(parts, ", ")
}

// block prints text of several lines, each indented and made safe for a
// terminal on its own.
func block(w io.Writer, indent, text string) {
	for line := range strings.SplitSeq(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(w, "%s%s\n", indent, cli.Term(line))
	}
}

// indentJSON is a JSON value indented by two spaces, its keys in the order
// given; raw as it came when it is not JSON.
func indentJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// canonicalJSON is a JSON value indented with its keys sorted, so that two
// payloads differ line by line only where their values do.
func canonicalJSON(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// payloadDiff is the edited payload against the original, line by line:
// "- " for the agent's lines the person changed, "+ " for theirs, "  " for
// lines both share.
func payloadDiff(orig, edited json.RawMessage) string {
	return lineDiff(strings.Split(canonicalJSON(orig), "\n"), strings.Split(canonicalJSON(edited), "\n"))
}

// maxDiffCells bounds lineDiff's table (the lines of one times the lines of
// the other); past it the diff is the whole of both.
const maxDiffCells = 4_000_000

// lineDiff is a's lines turned into b's along a longest common subsequence.
func lineDiff(a, b []string) string {
	var out strings.Builder
	if len(a)*len(b) > maxDiffCells {
		for _, l := range a {
			out.WriteString("- " + l + "\n")
		}
		for _, l := range b {
			out.WriteString("+ " + l + "\n")
		}
		return out.String()
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	for i, j := 0, 0; i < len(a) || j < len(b); {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out.WriteString("  " + a[i] + "\n")
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			out.WriteString("- " + a[i] + "\n")
			i++
		default:
			out.WriteString("+ " + b[j] + "\n")
			j++
		}
	}
	return out.String()
}

// oneLine is s on one line of at most n characters, safe for a terminal.
func oneLine(s string, n int) string {
	s = cli.Term(strings.Join(strings.Fields(s), " "))
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// approvalCount is how far an approval a policy covers has come (SPEC
// §11): "1 of 2 approvals, by alice", "0 of 2 approvals; its owner may not
// approve".
func approvalCount(a *askd.Ask) string {
	by := make([]string, len(a.Approvals))
	for i, ap := range a.Approvals {
		by[i] = cli.Term(ap.By)
		if ap.Payload != nil {
			by[i] += " (edited)"
		}
	}
	s := fmt.Sprintf("%d of %d approvals", len(a.Approvals), a.ApprovalsNeeded)
	if len(by) > 0 {
		s += ", by " + strings.Join(by, ", ")
	}
	if a.ExcludeOwner && a.Owner != "" && !strings.HasPrefix(a.Owner, "team:") {
		s += "; its owner may not approve"
	}
	return s
}
