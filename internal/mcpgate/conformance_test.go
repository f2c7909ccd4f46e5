package mcpgate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/mcpserver"
	"github.com/askd-dev/askd/internal/testserver"
)

// The official MCP conformance suite, pinned as internal/mcpserver's
// TestConformance pins it, and the Node 22 it needs (the system's may be
// older; the same pinned node internal/agentcli runs newer CLIs on).
const (
	conformancePackage = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
	conformanceNode    = "node@22.23.3"
)

// conformanceRuns are the suite's three runs, as TestConformance makes them
// against askd (one per revision askd serves, at that revision's wire), and
// in each the scenarios that need no fixture of the suite's own: those
// TestConformance requires askd to pass (docs/conformance.md).
var conformanceRuns = []struct {
	revision  string
	args      []string
	noFixture []string
}{
	{"2026-07-28", []string{"--requirements", "2026-07-28"}, []string{
		"server-stateless", "tools-list", "prompts-list", "resources-list", "sep-2164-resource-not-found", "caching",
		"server-sse-multiple-streams", "dns-rebinding-protection", "input-required-result-unsupported-methods", "http-header-validation",
	}},
	{"2025-11-25", []string{"--requirements", "2025-11-25"}, []string{
		"server-initialize", "ping", "logging-set-level", "tools-list", "resources-list", "prompts-list",
		"server-sse-multiple-streams", "dns-rebinding-protection", "server-sse-polling", "server-session-lifecycle",
	}},
	{"2025-06-18", []string{"--suite", "all", "--spec-version", "2025-06-18"}, []string{
		"server-initialize", "server-session-lifecycle", "ping", "logging-set-level", "tools-list", "resources-list", "prompts-list",
	}},
}

// gateScoresOtherwise are the checks of no-fixture scenarios that the
// gate scores otherwise than askd alone, keyed by revision, scenario and
// check: the status every such check has through the gate, a text one of
// their messages holds ("" for none), and why. Any other difference fails
// the test, and so does an entry whose check scores the same again.
var gateScoresOtherwise = map[string]struct{ status, holds, why string }{
	// The listener keeps state where askd's /mcp keeps none.
	"2025-11-25 server-session-lifecycle server-session-delete-accepted":                          {"SUCCESS", "", listenerSessions},
	"2025-11-25 server-session-lifecycle server-session-terminated-returns-404":                   {"SUCCESS", "", listenerSessions},
	"2025-06-18 server-session-lifecycle server-session-delete-accepted":                          {"SUCCESS", "", listenerSessions},
	"2025-06-18 server-session-lifecycle server-session-terminated-returns-404":                   {"SUCCESS", "", listenerSessions},
	"2026-07-28 server-stateless sep-2575-http-server-header-mismatch-400":                        {"FAILURE", "got status 200 with code -32022", listenerDoor},
	"2026-07-28 server-stateless sep-2575-http-server-meta-invalid-400":                           {"FAILURE", "got status code 200", listenerDoor},
	"2026-07-28 server-stateless sep-2575-http-server-unsupported-version-400":                    {"FAILURE", "got status code 200", listenerDoor},
	"2026-07-28 server-stateless sep-2575-request-meta-invalid-missing-meta":                      {"FAILURE", "got -32601", listenerDoor},
	"2026-07-28 server-stateless sep-2575-request-meta-invalid-missing-protocol-version":          {"FAILURE", "got -32601", listenerDoor},
	"2026-07-28 server-stateless sep-2575-http-server-method-not-found-404":                       {"FAILURE", "got HTTP 200 and code -32601", listenerStatus},
	"2026-07-28 server-stateless sep-2575-http-server-method-not-found-404-initialize":            {"FAILURE", "got HTTP 200 and code -32601", listenerDoor},
	"2026-07-28 server-stateless sep-2575-http-server-method-not-found-404-logging-setlevel":      {"FAILURE", "got HTTP 200 and code -32601", listenerDoor},
	"2026-07-28 server-stateless sep-2575-http-server-method-not-found-404-ping":                  {"FAILURE", "got HTTP 200 and code -32601", listenerDoor},
	"2026-07-28 server-stateless sep-2575-http-server-method-not-found-404-resources-subscribe":   {"FAILURE", "got HTTP 200 and code -32601", listenerDoor},
	"2026-07-28 server-stateless sep-2575-http-server-method-not-found-404-resources-unsubscribe": {"FAILURE", "got HTTP 200 and code -32601", listenerDoor},
	"2026-07-28 http-header-validation sep-2243-server-reject-invalid-headers":                    {"FAILURE", "Expected HTTP 400, got 200", listenerHeaders},
	"2026-07-28 http-header-validation sep-2243-server-reject-error-code":                         {"WARNING", "got (missing)", listenerHeaders},
}

const (
	listenerSessions = "the listener gives each initialize a session of its own (a server of its own behind it) and ends it on DELETE; " +
		"askd's /mcp is stateless and answers DELETE with 405, which the suite scores SKIPPED"
	listenerDoor = "the listener does not check a 2026-07-28 request at the door as askd's /mcp (the go-sdk's handler) does: " +
		"Mcp-Protocol-Version against _meta, a missing or unsupported _meta protocol version (HTTP 400), the methods 2026-07-28 removed (HTTP 404); " +
		"the upstream's answer comes back as a JSON-RPC error on a stream already opened with HTTP 200, " +
		"or, without _meta, the request goes upstream at the session's revision"
	listenerStatus = "an unknown method's -32601 comes from the upstream on a stream the listener opened with HTTP 200 " +
		"(on 2026-07-28 it must be HTTP 404): the listener writes a request's status before the upstream answers"
	listenerHeaders = "the listener does not compare 2026-07-28's Mcp-Method and Mcp-Name headers with the body; " +
		"it sends the upstream headers of its own, made from the body, so the upstream never sees the mismatch"
)

// TestConformanceThroughTheGate: the official MCP conformance suite scores
// the HTTP gate (askd gate mcp --listen, in front of askd's own /mcp over
// --upstream) as it scores askd's /mcp alone, check for check, in every
// scenario that needs no fixture, on each revision, but for the checks of
// gateScoresOtherwise. The gate is asked everything the suite sends: a
// person approves each call it holds (the suite's calls of fixture tools
// askd does not have, which askd then answers as it answers the suite
// directly). A scenario that needs a fixture may differ where the gate
// refuses on purpose (doc.go: answers to questions the server did not ask
// through it); those differences are logged, but what the gate says there
// must fit the revision's schema as askd's answers do. In CI (CI=true) a
// missing node or npm fails the test; elsewhere it skips, loudly.
func TestConformanceThroughTheGate(t *testing.T) {
	testserver.Node(t) // npm's node package runs its own, but the system's installs it
	suite := filepath.Join(testserver.NPM(t, conformancePackage), "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	node := filepath.Join(testserver.NPM(t, conformanceNode), "node_modules", ".bin", "node")

	s := testserver.Start(t, testserver.Options{MCP: func(svc *app.Service) http.Handler {
		return mcpserver.Handler(svc, mcpserver.Options{})
	}})
	f := &fixture{askd: s, person: s.Human()}
	const session = "conformance"
	approveEvery(t, f, session)
	direct := testserver.TokenProxy(t, s.URL, s.AgentToken)
	addr := make(chan string, 1)
	tun := testTunables
	tun.listening = func(a string) { addr <- a }
	startGateWith(t, f.env(), tun, "--name", "askd", "--session", session, "--listen", "127.0.0.1:0",
		"--upstream", s.URL+"/mcp", "--upstream-header", "Authorization: Bearer "+s.AgentToken)
	gate := "http://" + <-addr

	seen := map[string]bool{}
	for _, run := range conformanceRuns {
		t.Run(run.revision, func(t *testing.T) {
			alone := runSuite(t, node, suite, direct, run.args)
			gated := runSuite(t, node, suite, gate, run.args)
			for _, name := range slices.Sorted(maps.Keys(alone)) {
				if !slices.Contains(run.noFixture, name) {
					if a, g := scoreOf(alone[name]), scoreOf(gated[name]); a != g {
						t.Logf("%s (needs a fixture): askd alone %s\nthrough the gate %s", name, a, g)
					}
					// What the gate says of its own (a refusal) fits
					// the revision's schema as what askd says does.
					if allAre(byCheck(alone[name])[wireSchema], "SUCCESS") && !allAre(byCheck(gated[name])[wireSchema], "SUCCESS") {
						t.Errorf("%s: %s through the gate: %s", name, wireSchema, messages(gated[name], wireSchema))
					}
					continue
				}
				a, g := byCheck(alone[name]), byCheck(gated[name])
				for _, id := range slices.Sorted(maps.Keys(joinKeys(a, g))) {
					if slices.Equal(a[id], g[id]) {
						continue
					}
					key := run.revision + " " + name + " " + id
					other, known := gateScoresOtherwise[key]
					if known && allAre(g[id], other.status) && holdsOne(gated[name], id, other.holds) {
						seen[key] = true
						t.Logf("%s: %s: %s alone, %s through the gate, explained: %s", name, id, a[id], g[id], other.why)
						continue
					}
					t.Errorf("%s: %s: askd alone %v, through the gate %v: %s", name, id, a[id], g[id], messages(gated[name], id))
				}
			}
			for name := range gated {
				if _, ok := alone[name]; !ok {
					t.Errorf("%s: run through the gate only", name)
				}
			}
			t.Logf("no-fixture scenarios: askd alone %s; through the gate %s", tally(alone, run.noFixture), tally(gated, run.noFixture))
		})
	}
	if !t.Failed() {
		for _, key := range slices.Sorted(maps.Keys(gateScoresOtherwise)) {
			if !seen[key] {
				t.Errorf("%s: the gate scores it as askd alone now; take it out of gateScoresOtherwise", key)
			}
		}
	}
}

// wireSchema is the check of every message against the revision's schema.
const wireSchema = "wire-schema-valid"

// approveEvery approves, as the person, every approval asked in session
// until the test ends.
func approveEvery(t *testing.T, f *fixture, session string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	events, err := f.person.EventsWith(ctx, -1, client.EventFilter{Session: session})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ev := range events {
			if ev.Event.Action != askd.ActionCreated || ev.Event.Ask == nil || ev.Event.Ask.Kind != askd.KindApproval {
				continue
			}
			if _, err := f.person.Answer(ctx, ev.Event.Ask.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil && ctx.Err() == nil {
				t.Errorf("approve ask %d: %v", ev.Event.Ask.ID, err)
			}
		}
	}()
}

// runSuite runs the suite's server scenarios that args select against the
// MCP endpoint at base, and returns each scenario's checks.
func runSuite(t *testing.T, node, suite, base string, args []string) map[string][]suiteCheck {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	began := time.Now()
	cmd := exec.CommandContext(ctx, node, append([]string{suite, "server", "--url", base + "/mcp", "-o", out}, args...)...)
	cmd.Dir = out
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	// Its exit status says only that something failed, which the
	// scenarios that need a fixture always do.
	err := cmd.Run()
	t.Logf("conformance %s against %s: %s (%v)", strings.Join(args, " "), base, time.Since(began).Round(time.Millisecond), err)
	if ctx.Err() != nil {
		t.Fatalf("the conformance suite did not finish: %v\n%s", ctx.Err(), stdout.String())
	}
	return readSuite(t, out)
}

// suiteCheck is one entry of a scenario's checks.json.
type suiteCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, INFO, SKIPPED
	ErrorMessage string `json:"errorMessage"`
}

// scoreOf is a scenario's checks as a line to log: each check's id and
// status (and message, where it did not succeed), sorted.
func scoreOf(checks []suiteCheck) string {
	var s []string
	for _, c := range checks {
		line := c.ID + " " + c.Status
		if c.Status != "SUCCESS" && c.Status != "INFO" {
			line += " (" + c.ErrorMessage + ")"
		}
		s = append(s, line)
	}
	slices.Sort(s)
	return "[" + strings.Join(s, "; ") + "]"
}

// byCheck is the statuses of a scenario's checks by id, sorted (a check
// may run more than once, for several inputs).
func byCheck(checks []suiteCheck) map[string][]string {
	m := map[string][]string{}
	for _, c := range checks {
		m[c.ID] = append(m[c.ID], c.Status)
	}
	for _, st := range m {
		slices.Sort(st)
	}
	return m
}

func joinKeys(a, b map[string][]string) map[string]bool {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

func allAre(statuses []string, status string) bool {
	return len(statuses) > 0 && !slices.ContainsFunc(statuses, func(s string) bool { return s != status })
}

// holdsOne reports whether a check id of checks has a message holding text.
func holdsOne(checks []suiteCheck, id, text string) bool {
	return slices.ContainsFunc(checks, func(c suiteCheck) bool { return c.ID == id && strings.Contains(c.ErrorMessage, text) })
}

// messages are the messages of the checks of id.
func messages(checks []suiteCheck, id string) string {
	var m []string
	for _, c := range checks {
		if c.ID == id && c.ErrorMessage != "" {
			m = append(m, c.ErrorMessage)
		}
	}
	return strings.Join(m, " | ")
}

// tally counts the scenarios of names with no FAILURE and every check of
// them by status.
func tally(results map[string][]suiteCheck, names []string) string {
	passed, statuses := 0, map[string]int{}
	for _, name := range names {
		failed := false
		for _, c := range results[name] {
			statuses[c.Status]++
			failed = failed || c.Status == "FAILURE"
		}
		if !failed && len(results[name]) > 0 {
			passed++
		}
	}
	var counts []string
	for _, st := range slices.Sorted(maps.Keys(statuses)) {
		counts = append(counts, fmt.Sprintf("%d %s", statuses[st], st))
	}
	return fmt.Sprintf("%d of %d scenarios without a FAILURE, checks %s", passed, len(names), strings.Join(counts, ", "))
}

// suiteResultDir is a scenario's result directory: "server-", the
// scenario, "-", and an ISO time with its ':' and '.' made '-'.
var suiteResultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

func readSuite(t *testing.T, out string) map[string][]suiteCheck {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(out, "*", "checks.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no checks.json under the suite's output (%v)", err)
	}
	results := map[string][]suiteCheck{}
	for _, file := range files {
		m := suiteResultDir.FindStringSubmatch(filepath.Base(filepath.Dir(file)))
		if m == nil {
			t.Fatalf("%s: not a directory name the suite writes", file)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var checks []suiteCheck
		if err := json.Unmarshal(data, &checks); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		results[m[1]] = append(results[m[1]], checks...)
	}
	return results
}
