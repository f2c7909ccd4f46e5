package apicmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/testserver"
)

// commands are this package's commands by the names askd's command table
// gives them.
var commands = map[string]func(context.Context, *cli.Env, []string) error{
	"ask": Ask, "check": Check, "cancel": Cancel,
	"list": List, "show": Show, "answer": Answer, "dismiss": Dismiss, "claim": Claim,
	"rule": Rule, "policy": Policy, "session": Session,
}

// run runs `askd args...` as askd's main does for one of this package's
// commands, args[0], in the process's environment.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd, ok := commands[args[0]]
	if !ok {
		return fmt.Errorf("askd %s is not a command of package apicmd", args[0])
	}
	return cmd(ctx, &cli.Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv}, args[1:])
}

// runCLI runs askd with args and returns its stdout, stderr and error.
func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(t.Context(), args, nil, &out, &errOut)
	return out.String(), errOut.String(), err
}

// askFixtures creates, in session s1, the asks the answer tests answer.
type askFixtures struct {
	srv *testserver.Server
	n   map[string]int // questions asked so far, by text
}

func newFixtures(srv *testserver.Server) askFixtures { return askFixtures{srv, map[string]int{}} }

// unique is text, numbered from its second use: the same questions asked
// again in a session re-attach to the first ask (SPEC §2.1).
func (f askFixtures) unique(text string) string {
	f.n[text]++
	if f.n[text] == 1 {
		return text
	}
	return fmt.Sprintf("%s (%d)", text, f.n[text])
}

func (f askFixtures) create(t *testing.T, in askd.AskInput) string {
	t.Helper()
	a, err := f.srv.Agent("s1").Create(t.Context(), &in, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(a.ID)
}

func (f askFixtures) approval(t *testing.T) string {
	return f.create(t, askd.AskInput{Kind: askd.KindApproval, Title: "Run the migration",
		Details: "Adds two columns.\nLocks the table for a second.", Payload: json.RawMessage(`{"table": "users", "batch": 500}`)})
}

func (f askFixtures) question(t *testing.T) string {
	return f.create(t, askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{{
		Question: f.unique("Which day?"), Header: "Day", Options: []askd.Option{{Label: "Monday"}, {Label: "Tuesday"}}}}})
}

func (f askFixtures) decision(t *testing.T) string {
	return f.create(t, askd.AskInput{Kind: askd.KindDecision, Title: "Which region?",
		Options: []askd.Option{{Label: "eu-west", Description: "Ireland"}, {Label: "us-east"}}, Recommended: "eu-west"})
}

func (f askFixtures) twoQuestions(t *testing.T) string {
	return f.create(t, askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{
		{Question: f.unique("Which database?"), Header: "Database", Options: []askd.Option{{Label: "SQLite", Description: "embedded"}, {Label: "Postgres"}}},
		{Question: f.unique("Which checks?"), Header: "Checks", MultiSelect: true, Options: []askd.Option{{Label: "lint"}, {Label: "tests"}, {Label: "fuzz"}}},
	}})
}

// TestAnswerStoresWhatWasMeant: askd answer with its flags before or after
// the answer stores exactly what the person typed (read back through the
// API), and whatever it cannot take as meant is refused with exit 2 and
// the ask left pending.
func TestAnswerStoresWhatWasMeant(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	f := newFixtures(srv)
	conn := []string{"--url", srv.URL, "--token", srv.HumanToken}
	stored := func(t *testing.T, id string) *askd.Ask {
		t.Helper()
		var n int64
		fmt.Sscan(id, &n)
		d, err := srv.Human().Show(t.Context(), n)
		if err != nil {
			t.Fatal(err)
		}
		return &d.Ask
	}
	answers := []struct {
		name   string
		ask    func(*testing.T) string
		args   func(id string) []string // after "answer"
		want   askd.Answer
		stdout string // in the output
	}{
		{"modify, flags after (the README's example)", f.approval,
			func(id string) []string {
				return []string{id, "modify", "--payload", `{"table": "users", "batch": 100}`, "--comment", "smaller first"}
			},
			askd.Answer{Decision: askd.DecisionModified, Payload: json.RawMessage(`{"table": "users", "batch": 100}`), Comment: "smaller first"},
			`+   "batch": 100`},
		{"reject, comment after", f.approval,
			func(id string) []string { return []string{id, "reject", "--comment", "not in prod"} },
			askd.Answer{Decision: askd.DecisionRejected, Comment: "not in prod"}, "not in prod"},
		{"reject, comment before", f.approval,
			func(id string) []string { return []string{"--comment", "not in prod", id, "reject"} },
			askd.Answer{Decision: askd.DecisionRejected, Comment: "not in prod"}, "not in prod"},
		{"a label then --json", f.question,
			func(id string) []string { return []string{id, "Monday", "--json"} },
			askd.Answer{Answers: map[string]askd.Choice{"Which day?": {Values: []string{"Monday"}}}}, `"answers":{"Which day?":"Monday"}`},
		{"own words, said so", f.decision,
			func(id string) []string { return []string{id, "EU-WEST", "--own-words"} },
			askd.Answer{Answer: "EU-WEST"}, "EU-WEST (own words)"},
		{"a label of a decision", f.decision,
			func(id string) []string { return []string{"--json", id, "eu-west"} },
			askd.Answer{Answer: "eu-west"}, `"answer":"eu-west"`},
		{"two questions as HEADER=LABEL", f.twoQuestions,
			func(id string) []string {
				return []string{id, "database=SQLite", "Checks=lint", "--response", "ship it", "Checks=tests"}
			},
			askd.Answer{Answers: map[string]askd.Choice{"Which database?": {Values: []string{"SQLite"}}, "Which checks?": {Values: []string{"lint", "tests"}, Multi: true}}, Response: "ship it"},
			"answer: lint, tests"},
		{"-- ends the flags", func(t *testing.T) string { return f.create(t, askd.AskInput{Kind: askd.KindBlocked, Title: "Stuck"}) },
			func(id string) []string { return []string{id, "--json", "--", "--force", "is", "fine"} },
			askd.Answer{Answer: "--force is fine"}, `"answer":"--force is fine"`},
	}
	for _, tt := range answers {
		t.Run(tt.name, func(t *testing.T) {
			id := tt.ask(t)
			out, errOut, err := runCLI(t, append(append([]string{"answer"}, conn...), tt.args(id)...)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			if !strings.Contains(out, tt.stdout) {
				t.Errorf("output lacks %q:\n%s", tt.stdout, out)
			}
			got := stored(t, id)
			if got.Status != askd.StatusAnswered {
				t.Fatalf("status %s, want answered", got.Status)
			}
			gotJSON, _ := json.Marshal(got.Answer)
			wantJSON, _ := json.Marshal(tt.want)
			if tt.want.Payload != nil { // compare payloads as values
				var g, w any
				json.Unmarshal(got.Answer.Payload, &g)
				json.Unmarshal(tt.want.Payload, &w)
				gp, _ := json.Marshal(g)
				wp, _ := json.Marshal(w)
				if !bytes.Equal(gp, wp) {
					t.Errorf("payload stored %s, want %s", got.Answer.Payload, tt.want.Payload)
				}
				got.Answer.Payload, tt.want.Payload = nil, nil
				gotJSON, _ = json.Marshal(got.Answer)
				wantJSON, _ = json.Marshal(tt.want)
			}
			if !bytes.Equal(gotJSON, wantJSON) {
				t.Errorf("stored %s, want %s", gotJSON, wantJSON)
			}
		})
	}

	refusals := []struct {
		name string
		ask  func(*testing.T) string
		args func(id string) []string
		want string // in the error
	}{
		{"a near miss of a label", f.decision, func(id string) []string { return []string{id, "EU-WEST"} },
			`"EU-WEST" is not an option; did you mean "eu-west"?`},
		{"a near miss with spaces", f.question, func(id string) []string { return []string{id, "mon", "day"} },
			`did you mean "Monday"?`},
		{"no label at all", f.question, func(id string) []string { return []string{id, "Friday"} },
			`"Friday" is none of the options ("Monday", "Tuesday"); give one of them, or --own-words`},
		{"modify without a payload", f.approval, func(id string) []string { return []string{id, "modify", "--comment", "x"} },
			"modify needs --payload JSON"},
		{"a payload with approve", f.approval, func(id string) []string { return []string{id, "approve", "--payload", `{"a": 1}`} },
			"--payload goes with modify"},
		{"a payload that is not JSON", f.approval, func(id string) []string { return []string{id, "modify", "--payload", `{bad`} },
			"--payload: not valid JSON"},
		{"a comment on a question", f.question, func(id string) []string { return []string{id, "Monday", "--comment", "x"} },
			"--comment is not for question asks"},
		{"words after an approval's decision", f.approval, func(id string) []string { return []string{id, "reject", "not", "in", "prod"} },
			"a comment goes in --comment"},
		{"one of two questions", f.twoQuestions, func(id string) []string { return []string{id, "Database=SQLite"} },
			`"Checks" is not answered`},
		{"words for two questions", f.twoQuestions, func(id string) []string { return []string{id, "SQLite"} },
			"answer each as HEADER=LABEL"},
		{"an unknown flag", f.question, func(id string) []string { return []string{id, "Monday", "--jsn"} },
			"unknown flag --jsn"},
		{"--body with words", f.question, func(id string) []string { return []string{id, "Monday", "--body", `{"answers": {}}`} },
			"--body is the whole answer"},
	}
	for _, tt := range refusals {
		t.Run("refused: "+tt.name, func(t *testing.T) {
			id := tt.ask(t)
			before := stored(t, id)
			_, errOut, err := runCLI(t, append(append([]string{"answer"}, tt.args(id)...), conn...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) || cli.ExitCode(err) != 2 {
				t.Fatalf("err %v (exit %d), want exit 2 saying %q", err, cli.ExitCode(err), tt.want)
			}
			if errOut != "" {
				t.Errorf("stderr %q: a mistake is one line, printed once by main", errOut)
			}
			if after := stored(t, id); after.Status != askd.StatusPending || after.UpdatedAt != before.UpdatedAt {
				t.Errorf("ask after the refusal: %s, updated %v (was %v); want pending and untouched", after.Status, after.UpdatedAt, before.UpdatedAt)
			}
		})
	}
}

// TestFlagsAnywhere: every command that takes arguments takes its flags
// before, between or after them, with the same result.
func TestFlagsAnywhere(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	f := newFixtures(srv)
	human := []string{"--url", srv.URL, "--token", srv.HumanToken}
	agent := []string{"--url", srv.URL, "--token", srv.AgentToken, "--session", "s1"}
	id := f.decision(t)
	for _, tt := range []struct {
		name        string
		before, mid []string // the command, then its arguments
		conn        []string
		want        string
	}{
		{"show", []string{"show"}, []string{id}, human, "Which region?"},
		{"check", []string{"check"}, []string{id}, agent, "Which region?"},
		{"list", []string{"list"}, nil, human, "Which region?"},
		{"session set-channel", []string{"session", "set-channel"}, []string{"s1", "--hook"}, agent[:4], "session s1: told"},
	} {
		orders := map[string][]string{
			"flags after":  append(append(append([]string{}, tt.before...), tt.mid...), tt.conn...),
			"flags before": append(append(append([]string{}, tt.before...), tt.conn...), tt.mid...),
		}
		if len(tt.mid) > 0 {
			orders["flags between"] = append(append(append(append([]string{}, tt.before...), tt.conn[:2]...), tt.mid...), tt.conn[2:]...)
		}
		for order, args := range orders {
			t.Run(tt.name+" "+order, func(t *testing.T) {
				out, errOut, err := runCLI(t, args...)
				if err != nil {
					t.Fatalf("askd %v: %v\n%s", args, err, errOut)
				}
				if !strings.Contains(out, tt.want) {
					t.Errorf("askd %v printed %q, want %q", args, out, tt.want)
				}
			})
		}
	}
	// dismiss and cancel settle: one ask for each order.
	for _, order := range []func(id string) []string{
		func(id string) []string { return []string{"dismiss", id, "--response", "later"} },
		func(id string) []string { return []string{"dismiss", "--response", "later", id} },
	} {
		id := f.decision(t)
		args := append(order(id), human...)
		if _, errOut, err := runCLI(t, args...); err != nil {
			t.Fatalf("askd %v: %v\n%s", args, err, errOut)
		}
		d, err := srv.Human().Show(t.Context(), mustID(t, id))
		if err != nil || d.Status != askd.StatusCancelled || d.Answer == nil || d.Answer.Response != "later" {
			t.Errorf("askd %v stored %+v %v; want dismissed with the reply", args, d, err)
		}
	}
	for _, order := range []func(id string) []string{
		func(id string) []string { return []string{"cancel", id, "--json"} },
		func(id string) []string { return []string{"cancel", "--json", id} },
	} {
		id := f.decision(t)
		args := append(order(id), agent...)
		if _, errOut, err := runCLI(t, args...); err != nil {
			t.Fatalf("askd %v: %v\n%s", args, err, errOut)
		}
		if d, _ := srv.Human().Show(t.Context(), mustID(t, id)); d.Status != askd.StatusCancelled || d.CancelReason != askd.ReasonWithdrawn {
			t.Errorf("askd %v: ask %s/%s, want withdrawn", args, d.Status, d.CancelReason)
		}
	}
}

func mustID(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMistakesInPlainWords: command-line mistakes and an unreachable
// server are told in askd's words, naming the flag, never Go's.
func TestMistakesInPlainWords(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "--jsn"}, "list: unknown flag --jsn"},
		{[]string{"ask", "--title"}, "ask: --title needs a value"},
		{[]string{"check", "1", "--wait", "5"}, `--wait: "5" is not a duration such as 30s, 5m or 2h`},
		{[]string{"list", "--limit", "x"}, `--limit: "x" is not a whole number`},
		{[]string{"list", "--json=maybe"}, `--json: "maybe" is not true or false`},
		{[]string{"list", "--token", "askd_h_x", "--url", "localhost:7777"}, `--url: "localhost:7777" is not an http(s) URL`},
		{[]string{"list", "--token", "askd_h_x", "--url", "http://127.0.0.1:1"}, "nothing answers there (is askd serve running?"},
		{[]string{"answer", "x1", "--token", "askd_h_x"}, `answer: "x1" is not an ask id`},
		{[]string{"session", "set-channel"}, "session set-channel: give one session NAME (askd session -h)"},
	} {
		_, _, err := runCLI(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("askd %v: %v\nwant one line saying %q", tt.args, err, tt.want)
		}
	}
}

// TestTokenRoles: with both tokens in the environment, as a person who
// wired Claude Code has them, each command takes the one of its role; a
// token of the wrong role is refused before the server is asked.
func TestTokenRoles(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	f := newFixtures(srv)
	id := f.question(t)
	other, err := srv.Agent("s2").Create(t.Context(), &askd.AskInput{Kind: askd.KindReady, Title: "Other session"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("ASKD_URL", srv.URL)
	t.Setenv("ASKD_TOKEN", srv.AgentToken)
	t.Setenv("ASKD_SESSION", "s1")
	t.Setenv("ASKD_HUMAN_TOKEN", srv.HumanToken)

	out, errOut, err := runCLI(t, "list")
	if err != nil || !strings.Contains(out, "Which day?") || !strings.Contains(out, "Other session") {
		t.Fatalf("askd list: %v %s\n%s\nwant both sessions' asks (ASKD_SESSION is the agent's)", err, errOut, out)
	}
	if _, errOut, err := runCLI(t, "answer", id, "Monday"); err != nil {
		t.Fatalf("askd answer: %v\n%s", err, errOut)
	}
	if out, _, err := runCLI(t, "check", id); err != nil || !strings.Contains(out, "answer: Monday") {
		t.Errorf("askd check with ASKD_TOKEN: %v\n%s", err, out)
	}
	if _, _, err := runCLI(t, "check", fmt.Sprint(other.ID)); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("askd check of session s2's ask from session s1: %v, want not found", err)
	}

	t.Setenv("ASKD_HUMAN_TOKEN", "")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"list"}, "no human token: set ASKD_HUMAN_TOKEN"},
		{[]string{"list", "--token", srv.AgentToken}, "that is an agent token"},
		{[]string{"dismiss", fmt.Sprint(other.ID)}, "no human token"},
		{[]string{"cancel", fmt.Sprint(other.ID), "--token", srv.HumanToken}, "that is a human token"},
	} {
		_, _, err := runCLI(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || cli.ExitCode(err) != 2 {
			t.Errorf("askd %v: %v (exit %d), want exit 2 saying %q", tt.args, err, cli.ExitCode(err), tt.want)
		}
	}
	if d, _ := srv.Human().Show(t.Context(), other.ID); d.Status != askd.StatusPending {
		t.Errorf("session s2's ask is %s after the refusals, want pending", d.Status)
	}
}

// TestAskRefusesBadPayload: askd ask --payload that is not JSON is refused
// in the flag's words (not Go's), and nothing is asked.
func TestAskRefusesBadPayload(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	_, _, err := runCLI(t, "ask", "--kind", "approval", "--title", "t", "--payload", "{bad", "--url", srv.URL, "--token", srv.AgentToken)
	if err == nil || !strings.Contains(err.Error(), "--payload: not valid JSON") || strings.Contains(err.Error(), "RawMessage") || cli.ExitCode(err) != 2 {
		t.Fatalf("askd ask --payload '{bad': %v (exit %d)", err, cli.ExitCode(err))
	}
	if asks, err := srv.Human().List(context.Background(), client.ListOptions{}); err != nil || len(asks) != 0 {
		t.Errorf("asks after the refusal: %d %v, want none", len(asks), err)
	}
}

// timestamps are the local times askd show prints in a history.
var timestamps = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`)

// TestDescribeGolden: askd check (the agent's view) and askd show (the
// person's) print everything the other side acts on: an approval with edits
// as a diff, a rejection's comment, both answers of a two-question ask.
func TestDescribeGolden(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	f := newFixtures(srv)
	human := []string{"--url", srv.URL, "--token", srv.HumanToken}
	agent := []string{"--url", srv.URL, "--token", srv.AgentToken, "--session", "s1"}
	for _, tt := range []struct {
		name   string
		ask    func(*testing.T) string
		answer []string
	}{
		{"approval-modified", f.approval, []string{"modify", "--payload", `{"batch": 100, "table": "users", "dry_run": true}`, "--comment", "smaller first\nthen the rest"}},
		{"approval-rejected", f.approval, []string{"reject", "--comment", "not in prod"}},
		{"two-questions", f.twoQuestions, []string{"Database=SQLite", "Checks=lint", "Checks=tests", "--response", "keep it small"}},
		{"decision-own-words", f.decision, []string{"ap-south", "--own-words"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := tt.ask(t)
			if _, errOut, err := runCLI(t, append(append([]string{"answer", id}, tt.answer...), human...)...); err != nil {
				t.Fatalf("answer: %v\n%s", err, errOut)
			}
			check, _, err := runCLI(t, append([]string{"check", id}, agent...)...)
			if err != nil {
				t.Fatal(err)
			}
			show, _, err := runCLI(t, append([]string{"show", id}, human...)...)
			if err != nil {
				t.Fatal(err)
			}
			// The ids differ with the order the subtests run in.
			norm := func(s string) []byte {
				return []byte(timestamps.ReplaceAllString(strings.ReplaceAll(s, "#"+id+" ", "#N "), "TIME"))
			}
			testserver.Golden(t, filepath.Join("testdata", "describe", tt.name+".check"), norm(check))
			testserver.Golden(t, filepath.Join("testdata", "describe", tt.name+".show"), norm(show))
		})
	}
}
