package tell_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/tell"
	"github.com/askd-dev/askd/internal/testserver"
)

// TestMain doubles as the test command of command channels and gates: run
// with the first argument "askd-tell-helper" the test binary records its
// arguments and exits (see helperMain).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == helperArg {
		os.Exit(helperMain(os.Args[2:]))
	}
	code := pgtest.Run(m)
	testserver.RemoveBinary()
	os.Exit(code)
}

const helperArg = "askd-tell-helper"

// helperMain: "record FILE ARGS..." appends ARGS as one JSON line to FILE and
// exits 0; "gate allow|deny" reads stdin and exits 0, or prints a reason and
// exits 1.
func helperMain(args []string) int {
	switch args[0] {
	case "record":
		f, err := os.OpenFile(args[1], os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return 3
		}
		defer f.Close()
		b, _ := json.Marshal(args[2:])
		f.Write(append(b, '\n'))
		return 0
	case "gate":
		in, _ := io.ReadAll(os.Stdin)
		var req app.GateRequest
		if json.Unmarshal(in, &req) != nil || req.Ask == nil {
			fmt.Println("bad gate input")
			return 1
		}
		if args[1] == "deny" {
			fmt.Printf("no answers to %q today\n", req.Ask.Title)
			return 1
		}
		return 0
	}
	return 2
}

// receiver is a local HTTP server that records what it receives and answers
// each request with the status status(n) gives for the n-th (from 1).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []received
	status func(n int) int
}

type received struct {
	header http.Header
	body   []byte
}

func newReceiver(t testing.TB, status func(n int) int) *receiver {
	t.Helper()
	r := &receiver{status: status}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, received{req.Header.Clone(), body})
		n := len(r.reqs)
		r.mu.Unlock()
		code := http.StatusOK
		if r.status != nil {
			code = r.status(n)
		}
		w.WriteHeader(code)
		fmt.Fprintf(w, "status %d for request %d", code, n)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) got() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.reqs...)
}

// start runs askd (SQLite) with cfg and a tell worker.
func start(t *testing.T, cfg app.Config) *testserver.Server {
	t.Helper()
	return startResolving(t, cfg, nil)
}

// startResolving is start with a worker whose agents' webhooks resolve host
// names through resolver (nil: the system's).
func startResolving(t *testing.T, cfg app.Config, resolver *net.Resolver) *testserver.Server {
	t.Helper()
	if cfg.Backoff == nil {
		cfg.Backoff = func(int) time.Duration { return 20 * time.Millisecond }
	}
	srv := testserver.Start(t, testserver.Options{Config: cfg})
	runWorker(t, srv.App, resolver)
	return srv
}

// loopback lets agents' webhooks reach the tests' receivers, which listen on
// 127.0.0.1 (askd serve --webhook-allow 127.0.0.1).
var loopback = askd.WebhookAllow{Nets: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}

func runWorker(t testing.TB, svc *app.Service, resolver *net.Resolver) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := tell.New(svc, tell.Options{Timeout: 5 * time.Second, Tick: 50 * time.Millisecond, PublicURL: "https://inbox.test", Resolver: resolver})
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// askDecision creates a decision ask in session and returns it.
func askDecision(t *testing.T, agent *client.Client, title string) *askd.Ask {
	t.Helper()
	a, err := agent.Create(t.Context(), &askd.AskInput{Kind: askd.KindDecision, Title: title,
		Options: []askd.Option{{Label: "Monday"}, {Label: "Friday"}}}, 0)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return a
}

// history returns the actions of ask id's history.
func history(t *testing.T, srv *testserver.Server, id int64) []*askd.Event {
	t.Helper()
	d, err := srv.Human().Show(t.Context(), id)
	if err != nil {
		t.Fatalf("show %d: %v", id, err)
	}
	return d.History
}

func count(evs []*askd.Event, action string) int {
	n := 0
	for _, e := range evs {
		if e.Action == action {
			n++
		}
	}
	return n
}

// finished waits until ask id's tell delivery is sent or failed, and returns
// it. A finished delivery is never attempted again, and the receiver records
// each attempt's request before the worker records the attempt: so from
// then on the receiver has seen every request it will, one per attempt.
func finished(t *testing.T, srv *testserver.Server, id int64) *askd.Delivery {
	t.Helper()
	var d *askd.Delivery
	testserver.Eventually(t, fmt.Sprintf("ask %d's delivery to finish", id), func() bool {
		d = delivery(t, srv, id)
		return d.Status == askd.DeliverySent || d.Status == askd.DeliveryFailed
	})
	return d
}

// delivery returns the stored tell delivery of ask id.
func delivery(t *testing.T, srv *testserver.Server, id int64) *askd.Delivery {
	t.Helper()
	var a *askd.Ask
	var d *askd.Delivery
	err := srv.Store.View(t.Context(), func(tx askd.Tx) (err error) {
		if a, err = tx.Asks.Ask(t.Context(), id); err != nil {
			return err
		}
		d, err = tx.Deliveries.Delivery(t.Context(), askd.TellKey(a))
		return err
	})
	if err != nil {
		t.Fatalf("delivery of ask %d: %v", id, err)
	}
	return d
}

func TestWebhookTellsOnceSigned(t *testing.T) {
	srv := start(t, app.Config{WebhookAllow: loopback})
	rcv := newReceiver(t, nil)
	agent := srv.Agent("deploy")
	const secret = "correct horse battery staple"
	if _, err := agent.SetChannel(t.Context(), "deploy", askd.Channel{Type: askd.ChannelWebhook, URL: rcv.URL + "/tell", Secret: secret}); err != nil {
		t.Fatal(err)
	}
	a := askDecision(t, agent, "Deploy on Monday or Friday?")
	if len(rcv.got()) != 0 {
		t.Fatal("told before anyone answered")
	}
	answered, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Answer: "Monday"})
	if err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the webhook", func() bool { return len(rcv.got()) == 1 })
	testserver.Eventually(t, "told", func() bool { return count(history(t, srv, a.ID), askd.ActionTold) == 1 })
	finished(t, srv, a.ID) // nothing more comes
	reqs := rcv.got()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if got, want := r.header.Get("Idempotency-Key"), askd.TellKey(answered); got != want {
		t.Errorf("Idempotency-Key %q, want %q", got, want)
	}
	if !strings.HasPrefix(r.header.Get("Idempotency-Key"), fmt.Sprintf("ask:%d@", a.ID)) {
		t.Errorf("Idempotency-Key %q is not ask:<id>@<settled_at>", r.header.Get("Idempotency-Key"))
	}
	if !tell.Verify(secret, r.body, r.header.Get("Askd-Signature")) {
		t.Errorf("Askd-Signature %q does not verify", r.header.Get("Askd-Signature"))
	}
	if tell.Verify("wrong secret", r.body, r.header.Get("Askd-Signature")) {
		t.Error("the signature verifies under another secret")
	}
	var body tell.TellBody
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`The user answered your ask #%d (decision: "Deploy on Monday or Friday?"): Monday`, a.ID)
	if body.Text != want {
		t.Errorf("text %q, want %q", body.Text, want)
	}
	if body.Ask == nil || body.Ask.ID != a.ID || body.Ask.Answer == nil || body.Ask.Answer.Answer != "Monday" {
		t.Errorf("ask in the body: %+v", body.Ask)
	}
	if d := delivery(t, srv, a.ID); d.Status != askd.DeliverySent || d.Attempts != 1 {
		t.Errorf("delivery %+v, want sent after 1 attempt", d)
	}

	// The agent checking afterwards sees the answer, and is not told again.
	if _, err := agent.Check(t.Context(), a.ID, 0); err != nil {
		t.Fatal(err)
	}
	// A later answer is refused: the answer never changes, nothing is told again.
	if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Answer: "Friday"}); askd.ErrorCode(err) != askd.ECONFLICT {
		t.Errorf("second answer: %v, want a conflict", err)
	}
	// Neither made a new outcome to tell: the one delivery is still the
	// finished one, after its one attempt.
	if d := finished(t, srv, a.ID); d.Attempts != 1 {
		t.Errorf("delivery %+v after a check and a late answer, want its 1 attempt", d)
	}
	if n := len(rcv.got()); n != 1 {
		t.Errorf("%d requests after a check and a late answer, want 1", n)
	}
	if n := count(history(t, srv, a.ID), askd.ActionTold); n != 1 {
		t.Errorf("%d told events, want 1", n)
	}
}

func TestWebhookRetriesWithTheSameKey(t *testing.T) {
	srv := start(t, app.Config{WebhookAllow: loopback})
	rcv := newReceiver(t, func(n int) int {
		if n <= 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	agent := srv.Agent("s1")
	if _, err := agent.SetChannel(t.Context(), "s1", askd.Channel{Type: askd.ChannelWebhook, URL: rcv.URL, Secret: "k"}); err != nil {
		t.Fatal(err)
	}
	a := askDecision(t, agent, "Which day?")
	if _, err := srv.Human().Dismiss(t.Context(), a.ID, "neither, wait for the freeze to end"); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "three attempts", func() bool { return len(rcv.got()) >= 3 })
	testserver.Eventually(t, "told", func() bool { return count(history(t, srv, a.ID), askd.ActionTold) >= 1 })
	finished(t, srv, a.ID) // nothing more comes
	reqs := rcv.got()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	key := reqs[0].header.Get("Idempotency-Key")
	for i, r := range reqs {
		if got := r.header.Get("Idempotency-Key"); got != key || key == "" {
			t.Errorf("request %d: Idempotency-Key %q, want %q each time", i+1, got, key)
		}
	}
	if n := count(history(t, srv, a.ID), askd.ActionTold); n != 1 {
		t.Errorf("%d told events, want 1", n)
	}
	var body tell.TellBody
	json.Unmarshal(reqs[2].body, &body)
	if !strings.Contains(body.Text, "without answering it. They said: neither, wait for the freeze to end") {
		t.Errorf("text %q", body.Text)
	}
	if d := delivery(t, srv, a.ID); d.Status != askd.DeliverySent || d.Attempts != 3 {
		t.Errorf("delivery %+v, want sent after 3 attempts", d)
	}
}

func TestWebhookGoneGivesUpAtOnce(t *testing.T) {
	srv := start(t, app.Config{WebhookAllow: loopback})
	rcv := newReceiver(t, func(int) int { return http.StatusGone })
	agent := srv.Agent("s1")
	agent.SetChannel(t.Context(), "s1", askd.Channel{Type: askd.ChannelWebhook, URL: rcv.URL, Secret: "k"})
	a := askDecision(t, agent, "Ship it?")
	srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Answer: "Friday"})
	testserver.Eventually(t, "the failure in the history", func() bool { return count(history(t, srv, a.ID), askd.ActionTellFail) == 1 })
	finished(t, srv, a.ID)
	if n := len(rcv.got()); n != 1 {
		t.Errorf("%d requests, want 1: 410 gives up at once", n)
	}
	d := delivery(t, srv, a.ID)
	if d.Status != askd.DeliveryFailed || !strings.Contains(d.LastError, "410") {
		t.Errorf("delivery %+v, want failed with the 410", d)
	}
	for _, e := range history(t, srv, a.ID) {
		if e.Action == askd.ActionTellFail && !strings.Contains(e.Note, "410 Gone") {
			t.Errorf("tell_failed note %q does not say why", e.Note)
		}
	}
	// Still untold: the agent learns it when it checks.
	got, err := agent.Check(t.Context(), a.ID, 0)
	if err != nil || got.Answer == nil || got.Answer.Answer != "Friday" {
		t.Fatalf("check: %+v, %v", got, err)
	}
}

func TestRetryLimitFailsWithReason(t *testing.T) {
	srv := start(t, app.Config{TellAttempts: 3, WebhookAllow: loopback})
	rcv := newReceiver(t, func(int) int { return http.StatusInternalServerError })
	agent := srv.Agent("s1")
	agent.SetChannel(t.Context(), "s1", askd.Channel{Type: askd.ChannelWebhook, URL: rcv.URL, Secret: "k"})
	a := askDecision(t, agent, "Retry?")
	srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Answer: "Monday"})
	testserver.Eventually(t, "the failure", func() bool { return count(history(t, srv, a.ID), askd.ActionTellFail) == 1 })
	finished(t, srv, a.ID)
	if n := len(rcv.got()); n != 3 {
		t.Errorf("%d requests, want 3 (the limit)", n)
	}
	evs := history(t, srv, a.ID)
	note := evs[len(evs)-1].Note
	if !strings.Contains(note, "gave up after 3 attempts") || !strings.Contains(note, "500") {
		t.Errorf("tell_failed note %q, want the attempts and the last error", note)
	}
	if n := count(evs, askd.ActionTold); n != 0 {
		t.Errorf("%d told events for a delivery that failed", n)
	}
}

// helperArgv is a command template running this test binary as the
// helper, recording its arguments in file.
func helperArgv(t *testing.T, file string) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, helperArg, "record", file, "{session}", "{prompt}", "id={id}"}
}

func readRecords(t *testing.T, file string) [][]string {
	t.Helper()
	data, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var args []string
		if err := json.Unmarshal(line, &args); err != nil {
			t.Fatalf("record %q: %v", line, err)
		}
		out = append(out, args)
	}
	return out
}

func TestCommandChannelNeverUsesAShell(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // askd runs commands in its working directory
	file := filepath.Join(dir, "args.jsonl")
	srv := start(t, app.Config{TellCommands: map[string][]string{"record": helperArgv(t, file)}})
	agent := srv.Agent("cmd-session")
	if _, err := agent.SetChannel(t.Context(), "cmd-session", askd.Channel{Type: askd.ChannelCommand, Name: "record"}); err != nil {
		t.Fatal(err)
	}
	a, err := agent.Create(t.Context(), &askd.AskInput{Kind: askd.KindAction, Title: "Run the migration"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	const evil = "$(touch pwned); echo hi"
	if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Answer: evil}); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the command", func() bool { return count(history(t, srv, a.ID), askd.ActionTold) == 1 })
	recs := readRecords(t, file)
	if len(recs) != 1 {
		t.Fatalf("command ran %d times, want once: %v", len(recs), recs)
	}
	args := recs[0]
	want := []string{"cmd-session", fmt.Sprintf(`The user answered your ask #%d (action: "Run the migration"): %s`, a.ID, evil), fmt.Sprintf("id=%d", a.ID)}
	if len(args) != len(want) {
		t.Fatalf("arguments %q, want %q", args, want)
	}
	for i := range want {
		if args[i] != want[i] {
			t.Errorf("argument %d = %q, want %q", i, args[i], want[i])
		}
	}
	for _, d := range []string{dir, "."} {
		if _, err := os.Stat(filepath.Join(d, "pwned")); err == nil {
			t.Fatalf("a shell ran the prompt: %s/pwned exists", d)
		}
	}
}

func TestCommandFailureIsRetried(t *testing.T) {
	srv := start(t, app.Config{TellAttempts: 2, TellCommands: map[string][]string{"missing": {filepath.Join(t.TempDir(), "no-such-program")}}})
	agent := srv.Agent("s1")
	if _, err := agent.SetChannel(t.Context(), "s1", askd.Channel{Type: askd.ChannelCommand, Name: "missing"}); err != nil {
		t.Fatal(err)
	}
	a := askDecision(t, agent, "Which?")
	srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Answer: "Monday"})
	testserver.Eventually(t, "the failure", func() bool { return count(history(t, srv, a.ID), askd.ActionTellFail) == 1 })
	if d := delivery(t, srv, a.ID); d.Attempts != 2 || !strings.Contains(d.LastError, "no-such-program") {
		t.Errorf("delivery %+v, want 2 attempts and the error", d)
	}
}

// TestStopHookTellsOnce is the Claude Code path: an ask created over the API
// and answered in the inbox comes back from the Stop hook once.
func TestStopHookTellsOnce(t *testing.T) {
	srv := start(t, app.Config{})
	agent := srv.Agent("claude-1")
	a := askDecision(t, agent, "Deploy on Monday or Friday?")
	stop := func() map[string]any {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/hooks/claude",
			strings.NewReader(`{"hook_event_name":"Stop","session_id":"claude-1","stop_hook_active":false}`))
		req.Header.Set("Authorization", "Bearer "+srv.AgentToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("stop hook: %d, %v", resp.StatusCode, err)
		}
		return out
	}
	if out := stop(); len(out) != 0 {
		t.Fatalf("stop before an answer: %v, want {}", out)
	}
	if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Answer: "Monday"}); err != nil {
		t.Fatal(err)
	}
	if d := delivery(t, srv, a.ID); d.Status != askd.DeliveryPending || d.Channel.Type != askd.ChannelHook || d.NextAt != nil {
		t.Fatalf("hook delivery %+v, want pending for the agent to fetch", d)
	}
	out := stop()
	want := fmt.Sprintf(`The user answered your ask #%d (decision: "Deploy on Monday or Friday?"): Monday`, a.ID)
	if out["decision"] != "block" || out["reason"] != want {
		t.Fatalf("stop after the answer: %v, want block with %q", out, want)
	}
	if out := stop(); len(out) != 0 {
		t.Fatalf("second stop: %v, want {}", out)
	}
	if d := delivery(t, srv, a.ID); d.Status != askd.DeliverySent {
		t.Errorf("delivery %+v, want sent once the hook told it", d)
	}
	if n := count(history(t, srv, a.ID), askd.ActionTold); n != 1 {
		t.Errorf("%d told events, want 1", n)
	}
}

func TestSnoozeTellsNothing(t *testing.T) {
	srv := start(t, app.Config{WebhookAllow: loopback})
	rcv := newReceiver(t, nil)
	agent := srv.Agent("s1")
	agent.SetChannel(t.Context(), "s1", askd.Channel{Type: askd.ChannelWebhook, URL: rcv.URL, Secret: "k"})
	a := askDecision(t, agent, "Later?")
	if _, err := srv.Human().Snooze(t.Context(), a.ID, time.Hour); err != nil {
		t.Fatal(err)
	}
	// Answered after the snooze, the answer is told: once that delivery is
	// finished, its request is the only one the receiver got.
	if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Answer: "Monday"}); err != nil {
		t.Fatal(err)
	}
	finished(t, srv, a.ID)
	if n := len(rcv.got()); n != 1 {
		t.Errorf("%d requests, want 1: the answer's; the snooze sent %d", n, n-1)
	}
}

func TestTimeoutOfAToldAskIsTold(t *testing.T) {
	srv := start(t, app.Config{WebhookAllow: loopback})
	rcv := newReceiver(t, nil)
	c := askd.Caller{Name: "agent-1", Role: askd.RoleAgent, Session: "s1"}
	if err := srv.App.SetChannel(t.Context(), c, "s1", &askd.Channel{Type: askd.ChannelWebhook, URL: rcv.URL, Secret: "k"}); err != nil {
		t.Fatal(err)
	}
	a, err := srv.App.Create(t.Context(), c, &askd.AskInput{Kind: askd.KindBlocked, Title: "Need the VPN"}, app.CreateOptions{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the timeout told", func() bool { return len(rcv.got()) == 1 }) // the app's sweep times it out
	var body tell.TellBody
	json.Unmarshal(rcv.got()[0].body, &body)
	if body.Ask.ID != a.ID || !strings.HasPrefix(body.Text, "No one answered your ask") {
		t.Errorf("told %q", body.Text)
	}
}

func TestGate(t *testing.T) {
	exe, _ := os.Executable()
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req app.GateRequest
		json.NewDecoder(r.Body).Decode(&req)
		if req.Action == "answer" && req.Answer != nil && req.Answer.Answer == "Monday" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"reason":"Fridays are frozen"}`)
	}))
	defer refusing.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()

	tests := []struct {
		name      string
		gate      string
		answer    string
		allowed   bool
		wantError string
	}{
		{"url allows", refusing.URL, "Monday", true, ""},
		{"url refuses", refusing.URL, "Friday", false, "the before-tell gate refused this answer: Fridays are frozen"},
		{"unreachable", deadURL, "Monday", false, "could not be asked, so the answer was refused (fail closed)"},
		{"command allows", fmt.Sprintf("[%q,%q,%q,%q]", exe, helperArg, "gate", "allow"), "Friday", true, ""},
		{"command refuses", fmt.Sprintf("[%q,%q,%q,%q]", exe, helperArg, "gate", "deny"), "Friday", false, `no answers to "Which day?" today`},
		{"command missing", filepath.Join(t.TempDir(), "no-gate"), "Friday", false, "fail closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate, err := tell.NewGate(tt.gate, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			srv := start(t, app.Config{BeforeTell: gate})
			a := askDecision(t, srv.Agent("s1"), "Which day?")
			_, err = srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Answer: tt.answer})
			got, gerr := srv.Agent("s1").Check(t.Context(), a.ID, 0)
			if gerr != nil {
				t.Fatal(gerr)
			}
			if tt.allowed {
				if err != nil || got.Status != askd.StatusAnswered {
					t.Fatalf("answer: %v, status %s; want answered", err, got.Status)
				}
				return
			}
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Status != http.StatusForbidden || !strings.Contains(ce.Message, tt.wantError) {
				t.Fatalf("answer: %v, want 403 saying %q", err, tt.wantError)
			}
			if got.Status != askd.StatusPending {
				t.Errorf("ask %s after a refusal, want pending", got.Status)
			}
		})
	}

	t.Run("not asked for asks that are not told", func(t *testing.T) {
		gate, _ := tell.NewGate(deadURL, time.Second)
		srv := start(t, app.Config{BeforeTell: gate})
		q, err := srv.Agent("s1").Create(t.Context(), &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{{
			Question: "Which database?", Header: "Database", Options: []askd.Option{{Label: "SQLite"}, {Label: "Postgres"}}}}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := srv.Human().Answer(t.Context(), q.ID, &askd.Answer{Answers: map[string]askd.Choice{"Which database?": {Values: []string{"SQLite"}}}}); err != nil {
			t.Fatalf("answer to a blocking question: %v", err)
		}
	})
}

func TestNotifiers(t *testing.T) {
	hook, slack, ntfy := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
	failing := newReceiver(t, func(int) int { return http.StatusBadGateway })
	srv := start(t, app.Config{TellAttempts: 2, Notifiers: []askd.Channel{
		{Type: askd.NotifyWebhook, URL: hook.URL}, {Type: askd.NotifySlack, URL: slack.URL},
		{Type: askd.NotifyNtfy, URL: ntfy.URL}, {Type: askd.NotifyWebhook, URL: failing.URL},
	}})
	a, err := srv.Agent("build-7").Create(t.Context(), &askd.AskInput{Kind: askd.KindReady, Title: "PR <12> is ready & green"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	link := fmt.Sprintf("https://inbox.test/?ask=%d", a.ID)
	testserver.Eventually(t, "every notifier", func() bool {
		return len(hook.got()) == 1 && len(slack.got()) == 1 && len(ntfy.got()) == 1 && len(failing.got()) == 2
	})

	var n map[string]any
	json.Unmarshal(hook.got()[0].body, &n)
	if n["kind"] != "ready" || n["session"] != "build-7" || n["title"] != "PR <12> is ready & green" || n["link"] != link {
		t.Errorf("webhook notification %v", n)
	}
	var s map[string]string
	json.Unmarshal(slack.got()[0].body, &s)
	if !strings.Contains(s["text"], "PR &lt;12&gt; is ready &amp; green") || !strings.Contains(s["text"], "<"+link+"|") || !strings.Contains(s["text"], "ready from build-7") {
		t.Errorf("slack text %q", s["text"])
	}
	nt, err := readNtfy(ntfy.got()[0])
	if err != nil || nt.Message != "PR <12> is ready & green" || nt.Click != link || nt.Title != "askd: ready from build-7" {
		t.Errorf("ntfy: %v, message %q, Title %q, Click %q", err, nt.Message, nt.Title, nt.Click)
	}

	// The failing notifier changed nothing about the ask, once its failure
	// is recorded (after its last request): its delivery, the fourth, failed.
	testserver.Eventually(t, "the failing notifier's delivery to fail", func() bool {
		var d *askd.Delivery
		err := srv.Store.View(t.Context(), func(tx askd.Tx) (err error) {
			d, err = tx.Deliveries.Delivery(t.Context(), askd.NotifyKey(a, 3))
			return err
		})
		return err == nil && d.Status == askd.DeliveryFailed
	})
	got, err := srv.Human().Show(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != askd.StatusPending || len(got.History) != 1 || got.History[0].Action != askd.ActionCreated {
		t.Errorf("ask after a notifier failed: %s, history %v", got.Status, got.History)
	}
	if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Answer: "merged"}); err != nil {
		t.Errorf("answer: %v", err)
	}
}

func TestSetChannelValidation(t *testing.T) {
	srv := start(t, app.Config{TellCommands: map[string][]string{"resume": {"claude", "-p", "--resume", "{session}", "{prompt}"}}})
	agent := srv.Agent("s1")
	before := askd.Channel{Type: askd.ChannelWebhook, URL: "https://x.test/", Secret: "hunter2"}
	got, err := agent.SetChannel(t.Context(), "s1", before)
	if err != nil || got.Secret == "hunter2" || got.URL != "https://x.test/" {
		t.Errorf("set: %+v, %v; want the channel with its secret hidden", got, err)
	}
	tests := []struct {
		name string
		body string
		want string
	}{
		{"unknown field", `{"type":"hook","colour":"red"}`, "colour: unknown field"},
		{"bad type", `{"type":"pigeon"}`, `is not hook, webhook or command`},
		{"ftp url", `{"type":"webhook","url":"ftp://x.test/","secret":"k"}`, "url: must be an http or https URL"},
		{"no secret", `{"type":"webhook","url":"https://x.test/"}`, "secret: required"},
		{"no name", `{"type":"command"}`, "name: required with type command"},
		{"argv", `{"type":"command","argv":["echo"]}`, "argv: not accepted: programs come only from the operator's command templates"},
		{"unknown template", `{"type":"command","name":"sh"}`, `name: no command template \"sh\"; this server defines: resume`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := putChannel(t, srv, "s1", tt.body)
			if status != http.StatusBadRequest || !strings.Contains(body, tt.want) {
				t.Errorf("%d %s, want 400 saying %q", status, body, tt.want)
			}
			if got := storedChannel(t, srv, "s1"); !reflect.DeepEqual(got, &before) {
				t.Errorf("stored %+v after a refusal, want %+v", got, before)
			}
		})
	}
	if _, err := srv.Human().SetChannel(t.Context(), "s1", askd.Channel{Type: askd.ChannelHook}); askd.ErrorCode(err) != askd.EFORBIDDEN {
		t.Errorf("human token: %v, want forbidden", err)
	}
}

// putChannel PUTs body as session's channel with the agent token and returns
// the status and the reply.
func putChannel(t *testing.T, srv *testserver.Server, session, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, srv.URL+"/api/sessions/"+session+"/channel", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+srv.AgentToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(reply)
}

// storedChannel reads session's channel from the store (nil when none is
// set), to check that a refused request changed nothing.
func storedChannel(t *testing.T, srv *testserver.Server, session string) *askd.Channel {
	t.Helper()
	var ch *askd.Channel
	err := srv.Store.View(t.Context(), func(tx askd.Tx) (err error) {
		ch, err = tx.Channels.Channel(t.Context(), srv.AgentName, session)
		return err
	})
	if askd.ErrorCode(err) == askd.ENOTFOUND {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return ch
}
