// stockbench times askd or HumanLayer's hld with clients that are neither
// server's own: the go-sdk MCP client over streamable HTTP, as shipped, for
// the agent's waiting call (one MCP session for a run), and for the person a
// plain net/http client that answers with a JSON body marshalled from a map
// and reads the response whole without decoding it, beside an event stream
// it keeps open to learn each new ask's id. Scenarios: latency (a person's
// answer, after an idle pause, to the waiting call's return), throughput
// (one or more agents' create + answer cycles) and waiters (many waiting
// calls, then all released). scripts/peer/run-askd.sh and run-hld.sh start
// the servers; docs/benchmarks.md has the figures.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type config struct {
	target, url, agentToken, humanToken string
	scenarios, tools                    string
	n, waiters, releasers, pid          int
	agents                              []int
	pause, duration, timeout            time.Duration
}

func main() {
	var cfg config
	flag.StringVar(&cfg.target, "target", "askd", "the server under test: askd or hld")
	flag.StringVar(&cfg.url, "url", "http://127.0.0.1:7777", "its HTTP address (loopback only)")
	flag.StringVar(&cfg.agentToken, "agent-token", "", "askd: an agent token")
	flag.StringVar(&cfg.humanToken, "human-token", "", "askd: a human token (askd token create --human)")
	flag.StringVar(&cfg.scenarios, "scenarios", "latency", "latency, throughput, waiters")
	flag.StringVar(&cfg.tools, "tools", "", "latency: the waiting tools timed, in turn (default: askd request_approval,ask_user_question; hld request_approval)")
	flag.IntVar(&cfg.n, "n", 300, "latency: answers timed per tool")
	flag.DurationVar(&cfg.pause, "pause", 20*time.Millisecond, "latency: idle time before each timed answer")
	agents := flag.String("agents", "1", "throughput: concurrent agents, a run for each count")
	flag.DurationVar(&cfg.duration, "duration", 5*time.Second, "throughput: how long each run lasts")
	flag.IntVar(&cfg.waiters, "waiters", 10000, "waiters: waiting calls held at once (20 a session)")
	flag.IntVar(&cfg.releasers, "releasers", 32, "waiters: answers sent at once while releasing them (as askd-bench and hldbench)")
	flag.IntVar(&cfg.pid, "pid", 0, "the server's process id, for its CPU per cycle and RSS")
	flag.DurationVar(&cfg.timeout, "timeout", 15*time.Minute, "give up the whole run after this long")
	flag.Parse()
	for _, a := range strings.Split(*agents, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(a))
		if err != nil || n < 1 || n > 1024 {
			fail(2, fmt.Errorf("--agents: %q is not a count from 1 to 1024", a))
		}
		cfg.agents = append(cfg.agents, n)
	}
	if err := loopbackOnly(cfg.url); err != nil {
		fail(2, err)
	}
	var s side
	switch cfg.target {
	case "askd":
		if cfg.agentToken == "" || cfg.humanToken == "" {
			fail(2, errors.New("--target askd needs --agent-token and --human-token"))
		}
		s = askdSide{base: trimBase(cfg.url), agentToken: cfg.agentToken, humanToken: cfg.humanToken}
	case "hld":
		s = hldSide{base: trimBase(cfg.url) + "/api/v1"}
	default:
		fail(2, fmt.Errorf("--target: %q is not askd or hld", cfg.target))
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	if err := run(ctx, cfg, s); err != nil {
		fail(1, err)
	}
}

func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, "stockbench:", err)
	os.Exit(code)
}

func loopbackOnly(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL", raw)
	}
	if h := u.Hostname(); h == "localhost" {
		return nil
	} else if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s is not a loopback address", raw)
}

type bench struct {
	cfg    config
	side   side
	person *http.Client // the person's plain HTTP client: answers, the event stream
	asks   *asks
}

// personClient is the person's HTTP client: no proxy, a 30 s keep-alive
// dialer, a deep idle pool, no transparent gzip.
func personClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 4096,
		DisableCompression:  true,
	}}
}

func run(ctx context.Context, cfg config, s side) error {
	b := &bench{cfg: cfg, side: s, person: personClient()}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	var err error
	if b.asks, err = b.follow(sctx); err != nil {
		return fmt.Errorf("event stream: %w", err)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "FIGURE (%s, stock clients)\tRESULT\tDETAIL\n", cfg.target)
	for _, sc := range strings.Split(cfg.scenarios, ",") {
		switch strings.TrimSpace(sc) {
		case "latency":
			err = b.latency(ctx, tw)
		case "throughput":
			err = b.throughput(ctx, tw)
		case "waiters":
			err = b.waiterLoad(ctx, tw)
		default:
			err = fmt.Errorf("unknown scenario %q", sc)
		}
		tw.Flush()
		if err != nil {
			return fmt.Errorf("%s: %w", sc, err)
		}
	}
	return nil
}

// connect opens one MCP session as the go-sdk client does by default, with
// the agent's configured headers on every request.
func (b *bench) connect(ctx context.Context, session string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "stockbench", Version: "0"}, nil)
	return c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   b.side.mcpEndpoint(),
		HTTPClient: &http.Client{Transport: headers{base: http.DefaultTransport, set: b.side.agentHeaders(session)}},
	}, nil)
}

// answer is the person's answer to ask id: a POST whose response is read
// whole and not decoded.
func (b *bench) answer(ctx context.Context, tool, key, id string) error {
	raw, status, err := post(ctx, b.person, b.side.answerURL(id), b.cfg.humanToken, b.side.answerBody(tool, key))
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("answer %s: %d %s", id, status, raw)
	}
	return nil
}

// asks hands each new ask's id, read off the person's one event stream, to
// whoever waits for its key.
type asks struct {
	mu      sync.Mutex
	waiting map[string]chan string
	seen    atomic.Int64
	closed  chan struct{}
}

// follow opens the person's event stream, unfiltered, and dispatches it
// until ctx ends. It returns once the stream's response has begun (askd's
// at once), or after a second: hld sends its response's headers only with
// the first event, and has subscribed long before.
func (b *bench) follow(ctx context.Context) (*asks, error) {
	a := &asks{waiting: map[string]chan string{}, closed: make(chan struct{})}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.side.eventsURL(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if b.cfg.humanToken != "" {
		req.Header.Set("Authorization", "Bearer "+b.cfg.humanToken)
	}
	begun := make(chan struct{})
	go func() {
		defer close(a.closed)
		resp, err := b.person.Do(req)
		close(begun)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			fmt.Fprintln(os.Stderr, "stockbench: event stream:", resp.Status)
			return
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		var event string
		var data []byte
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if key, id, ok := b.side.created(event, data); ok {
					a.seen.Add(1)
					a.of(key) <- id
				}
				event, data = "", nil
			case strings.HasPrefix(line, "event:"):
				event = strings.TrimSpace(line[6:])
			case strings.HasPrefix(line, "data:"):
				data = append(data, strings.TrimPrefix(line[5:], " ")...)
			}
		}
	}()
	select {
	case <-begun:
	case <-time.After(time.Second):
	}
	return a, nil
}

// of is the channel that gets key's id (made by whichever comes first, the
// event or its waiter).
func (a *asks) of(key string) chan string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ch, ok := a.waiting[key]
	if !ok {
		ch = make(chan string, 1)
		a.waiting[key] = ch
	}
	return ch
}

func (a *asks) forget(key string) {
	a.mu.Lock()
	delete(a.waiting, key)
	a.mu.Unlock()
}

// id waits for key's ask to show on the stream.
func (a *asks) id(ctx context.Context, key string, wait time.Duration) (string, error) {
	defer a.forget(key)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case id := <-a.of(key):
		return id, nil
	case <-a.closed:
		return "", errors.New("the event stream closed")
	case <-t.C:
		return "", fmt.Errorf("%s: not on the event stream within %s", key, wait)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// latency times, one at a time and after --pause idle, the person's answer
// from before its request to the waiting call's return, each tool in turn.
func (b *bench) latency(ctx context.Context, tw io.Writer) error {
	sess, err := b.side.newSession(ctx, b.person)
	if err != nil {
		return err
	}
	cs, err := b.connect(ctx, sess)
	if err != nil {
		return fmt.Errorf("mcp connect: %w", err)
	}
	defer cs.Close()
	tools := b.side.tools()
	if b.cfg.tools != "" {
		tools = strings.Split(b.cfg.tools, ",")
	}
	call := make([][]time.Duration, len(tools))
	alone := make([][]time.Duration, len(tools))
	run := nowNano()
	// Three untimed rounds first: hld's stream is known to be subscribed
	// only once an event has come through it.
	const warm = 3
	for i := -warm * len(tools); i < b.cfg.n*len(tools); i++ {
		k := (i + warm*len(tools)) % len(tools)
		tool := tools[k]
		key := fmt.Sprintf("lat_%d_%d", run, i+warm*len(tools))
		done := make(chan time.Time, 1)
		var res *mcp.CallToolResult
		var cerr error
		go func() {
			res, cerr = cs.CallTool(ctx, b.side.call(tool, key))
			done <- time.Now()
		}()
		id, err := b.asks.id(ctx, key, 30*time.Second)
		if err != nil {
			select {
			case <-done:
				return fmt.Errorf("%s call %s returned before its answer: %v", tool, key, cerr)
			default:
				return err
			}
		}
		time.Sleep(b.cfg.pause)
		t0 := time.Now()
		if err := b.answer(ctx, tool, key, id); err != nil {
			return err
		}
		d := time.Since(t0)
		t1 := <-done
		if cerr != nil || !b.side.returned(tool, key, res) {
			return fmt.Errorf("%s call %s did not return the answer: %v", tool, key, cerr)
		}
		if i >= 0 {
			call[k] = append(call[k], t1.Sub(t0))
			alone[k] = append(alone[k], d)
		}
	}
	for k, tool := range tools {
		fmt.Fprintf(tw, "answer -> %s returns\t%s\tn=%d, pause %s; the answer request alone: %s\n", tool, percentiles(call[k]), len(call[k]), b.cfg.pause, percentiles(alone[k]))
	}
	bare := make([]time.Duration, 0, b.cfg.n)
	for range b.cfg.n {
		time.Sleep(b.cfg.pause)
		t0 := time.Now()
		if err := b.get(ctx, b.side.bareURL()); err != nil {
			return err
		}
		bare = append(bare, time.Since(t0))
	}
	fmt.Fprintf(tw, "a bare request (GET %s)\t%s\tn=%d, pause %s: the floor of any request here\n", strings.TrimPrefix(b.side.bareURL(), trimBase(b.cfg.url)), percentiles(bare), len(bare), b.cfg.pause)
	return nil
}

// get is a GET on the person's client, its response read whole.
func (b *bench) get(ctx context.Context, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := b.person.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return nil
}

// percentiles formats p50 / p90 / p99 / max in milliseconds, as askd-bench.
func percentiles(d []time.Duration) string {
	if len(d) == 0 {
		return "no samples"
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	q := func(p float64) time.Duration { return d[int(p*float64(len(d)-1))] }
	ms := func(x time.Duration) string { return strconv.FormatFloat(float64(x.Microseconds())/1000, 'f', 2, 64) }
	return fmt.Sprintf("p50 %s / p90 %s / p99 %s / max %s ms", ms(q(0.5)), ms(q(0.9)), ms(q(0.99)), ms(d[len(d)-1]))
}

func nowNano() int64 { return time.Now().UnixNano() }
