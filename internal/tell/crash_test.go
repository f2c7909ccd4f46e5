package tell_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/postgres"
	"github.com/askd-dev/askd/internal/sqlite"
	"github.com/askd-dev/askd/internal/testserver"
)

// TestCrashBetweenSettleAndSend runs the real askd binary: an answer commits,
// the webhook's first attempt is in flight (the receiver never answers it),
// askd is killed with SIGKILL, and started again on the same database. The
// delivery is then sent exactly once more, and the ask told once.
func TestCrashBetweenSettleAndSend(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the askd binary")
	}
	bin := testserver.Binary(t)
	t.Run("sqlite", func(t *testing.T) { crashTest(t, bin, filepath.Join(t.TempDir(), "askd.db")) })
	t.Run("postgres", func(t *testing.T) { crashTest(t, bin, pgtest.URL(t)) })
}

// askdProcess is a running askd serve.
type askdProcess struct {
	cmd          *exec.Cmd
	url          string
	human, agent string // tokens, printed on the first start only
	logFile      string
}

func startAskd(t *testing.T, bin, db string) *askdProcess {
	t.Helper()
	p := &askdProcess{logFile: filepath.Join(t.TempDir(), "askd.log")}
	logs, err := os.Create(p.logFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })
	p.cmd = exec.Command(bin, "serve", "--db", db, "--addr", "127.0.0.1:0", "--tell-timeout", "2s", "--log-level", "debug",
		"--webhook-allow", "127.0.0.1") // the test's receiver
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ASKD_") {
			env = append(env, kv)
		}
	}
	p.cmd.Env = env
	p.cmd.Stderr = logs
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
	}()
	timeout := time.After(30 * time.Second)
	for p.url == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				p.dumpLog(t)
				t.Fatal("askd exited before it listened")
			}
			if _, rest, ok := strings.Cut(line, "listening on "); ok {
				p.url, _, _ = strings.Cut(rest, " ")
			}
		case <-timeout:
			p.dumpLog(t)
			t.Fatal("askd did not say where it listens")
		}
	}
	// Tokens follow the listening line on a first start; give them a moment.
	deadline := time.After(2 * time.Second)
	for p.agent == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				return p
			}
			if _, tok, ok := strings.Cut(line, "human token (answers in the inbox): "); ok {
				p.human = strings.TrimSpace(tok)
			}
			if _, tok, ok := strings.Cut(line, "agent token (asks):"); ok {
				p.agent = strings.TrimSpace(tok)
			}
		case <-deadline:
			return p
		}
	}
	return p
}

func (p *askdProcess) dumpLog(t *testing.T) {
	data, _ := os.ReadFile(p.logFile)
	t.Logf("askd log:\n%s", data)
}

func crashTest(t *testing.T, bin, db string) {
	var (
		mu        sync.Mutex
		keys      []string
		first     = make(chan struct{})
		release   = make(chan struct{})
		successes atomic.Int32
	)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		n := len(keys)
		mu.Unlock()
		if n == 1 {
			close(first)
			select { // never answer the first attempt: askd dies meanwhile
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		successes.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer rcv.Close()
	defer close(release)

	p1 := startAskd(t, bin, db)
	if p1.agent == "" || p1.human == "" {
		p1.dumpLog(t)
		t.Fatal("the first start printed no tokens")
	}
	ctx := t.Context()
	agent := client.New(p1.url, p1.agent)
	agent.Session = "crashy"
	if _, err := agent.SetChannel(ctx, "crashy", askd.Channel{Type: askd.ChannelWebhook, URL: rcv.URL, Secret: "k"}); err != nil {
		t.Fatal(err)
	}
	a, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindDecision, Title: "Survive a crash?",
		Options: []askd.Option{{Label: "yes"}, {Label: "no"}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.New(p1.url, p1.human).Answer(ctx, a.ID, &askd.Answer{Answer: "yes"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-first:
	case <-time.After(60 * time.Second):
		p1.dumpLog(t)
		t.Fatal("the first attempt never came")
	}
	// SIGKILL: the answer is committed, the send has not completed.
	if err := p1.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p1.cmd.Wait()

	p2 := startAskd(t, bin, db)
	t.Cleanup(func() {
		if t.Failed() {
			p2.dumpLog(t)
		}
	})
	testserver.Eventually(t, "the delivery sent after the restart", func() bool { return successes.Load() > 0 })
	human := client.New(p2.url, p1.human)
	var told int
	var settled *askd.Ask
	testserver.Eventually(t, "the ask told", func() bool {
		d, err := human.Show(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		settled, told = &d.Ask, 0
		for _, e := range d.History {
			if e.Action == askd.ActionTold {
				told++
			}
		}
		return told > 0
	})
	// Sent and told are one commit, and a sent delivery is never claimed
	// again; each claim counts an attempt. Two attempts, the cut-off one and
	// the one after the restart, mean no other request is in flight or to come.
	if d := storedDelivery(t, db, askd.TellKey(settled)); d.Status != askd.DeliverySent || d.Attempts != 2 {
		t.Errorf("delivery %s after %d attempts, want sent after 2", d.Status, d.Attempts)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 2 || successes.Load() != 1 {
		t.Errorf("%d requests (%d answered), want the cut-off one and exactly one after the restart", len(keys), successes.Load())
	}
	if keys[0] != keys[len(keys)-1] || !strings.HasPrefix(keys[0], fmt.Sprintf("ask:%d@", a.ID)) {
		t.Errorf("Idempotency-Keys %q, want the same ask:%d@... each time", keys, a.ID)
	}
	if told != 1 {
		t.Errorf("%d told events, want 1", told)
	}
}

// storedDelivery reads the delivery with key from database db (a SQLite
// file or a PostgreSQL URL) beside the askd process serving it.
func storedDelivery(t *testing.T, db, key string) *askd.Delivery {
	t.Helper()
	var st askd.Store
	var err error
	if strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://") {
		st, err = postgres.Open(t.Context(), db)
	} else {
		st, err = sqlite.Open(t.Context(), db)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var d *askd.Delivery
	if err := st.View(t.Context(), func(tx askd.Tx) (err error) {
		d, err = tx.Deliveries.Delivery(t.Context(), key)
		return err
	}); err != nil {
		t.Fatalf("delivery %s: %v", key, err)
	}
	return d
}

// TestClaimsAcrossProcesses runs workers of two services, each on its own
// connection pool to one PostgreSQL database, as two askd processes would:
// every delivery reaches the receiver exactly once.
func TestClaimsAcrossProcesses(t *testing.T) {
	url := pgtest.URL(t)
	var (
		mu   sync.Mutex
		seen = map[string]int{}
	)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("Idempotency-Key")]++
		mu.Unlock()
		// Kept sleep: not a wait but the receiver's own latency; a real one
		// takes a moment, so the two processes' claims overlap.
		time.Sleep(time.Millisecond)
	}))
	defer rcv.Close()

	var svcs []*app.Service
	var stores []askd.Store
	for range 2 {
		st, err := postgres.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		svc := app.New(st, app.Config{WebhookAllow: loopback})
		ctx, cancel := context.WithCancel(context.Background())
		go svc.Run(ctx)
		t.Cleanup(cancel)
		runWorker(t, svc, nil)
		svcs, stores = append(svcs, svc), append(stores, st)
	}
	ctx := t.Context()
	const n = 40
	human := askd.Caller{Name: "alice", Role: askd.RoleHuman, Access: askd.AccessAdmin}
	for i := range n {
		sess := fmt.Sprintf("s%d", i)
		c := askd.Caller{Name: "agent-1", Role: askd.RoleAgent, Session: sess}
		if err := svcs[0].SetChannel(ctx, c, sess, &askd.Channel{Type: askd.ChannelWebhook, URL: rcv.URL, Secret: "k"}); err != nil {
			t.Fatal(err)
		}
		a, err := svcs[0].Create(ctx, c, &askd.AskInput{Kind: askd.KindAction, Title: "Go?"}, app.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Answers land on either process; both workers race for every delivery.
		if _, err := svcs[i%2].Answer(ctx, human, a.ID, &askd.Answer{Answer: "go"}); err != nil {
			t.Fatal(err)
		}
	}
	testserver.Eventually(t, "every delivery", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == n
	})
	// A duplicate would be a second claim of a delivery: each claim counts
	// an attempt, and a sent delivery is never claimed again. Once every
	// delivery is sent, one attempt each means none is in flight or to come.
	mu.Lock()
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	mu.Unlock()
	for _, k := range keys {
		var d *askd.Delivery
		testserver.Eventually(t, k+" recorded as sent", func() bool {
			err := stores[0].View(ctx, func(tx askd.Tx) (err error) {
				d, err = tx.Deliveries.Delivery(ctx, k)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return d.Status != askd.DeliveryPending
		})
		if d.Status != askd.DeliverySent || d.Attempts != 1 {
			t.Errorf("%s: %s after %d attempts, want sent after one", k, d.Status, d.Attempts)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for k, c := range seen {
		if c != 1 {
			t.Errorf("%s received %d times, want once", k, c)
		}
	}
}
