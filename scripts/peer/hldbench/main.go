// hldbench times HumanLayer's hld daemon as askd-bench times askd. latency:
// one at a time, a person's decision on a blocked request_approval call
// returning that decision, with one go-sdk MCP client over streamable HTTP for
// the agent, a separate keep-alive HTTP client for the person, an idle pause
// before each timed decision, then a floor of bare requests after the same
// pause. throughput and waiters (load.go): create+decide cycles with 1..n
// agents, and 10,000 blocked calls released.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type config struct {
	url       string
	scenarios string
	n         int
	pause     time.Duration
	timeout   time.Duration
	noGzip    bool
	agents    []int
	duration  time.Duration
	waiters   int
	pid       int
}

func main() {
	var cfg config
	flag.StringVar(&cfg.url, "url", "http://127.0.0.1:7777", "hld's HTTP server (loopback only)")
	flag.IntVar(&cfg.n, "n", 300, "decisions timed")
	flag.DurationVar(&cfg.pause, "pause", 20*time.Millisecond, "idle time before each timed decision, as a person's (0: decide at once)")
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Minute, "give up the whole run after this long")
	flag.BoolVar(&cfg.noGzip, "no-gzip", false, "send no Accept-Encoding: gzip (Go's default and a browser's send it, and hld then gzips every response but its event stream)")
	flag.StringVar(&cfg.scenarios, "scenarios", "latency", "which figures to measure: latency, throughput, waiters (as askd-bench's)")
	agents := flag.String("agents", "1,8,64", "concurrent agents in the throughput scenario")
	flag.DurationVar(&cfg.duration, "duration", 5*time.Second, "how long each throughput run lasts")
	flag.IntVar(&cfg.waiters, "waiters", 10000, "concurrent blocked request_approval calls in the waiters scenario")
	flag.IntVar(&cfg.pid, "pid", 0, "hld's process id, for its RSS in the waiters scenario (run-hld.sh passes it)")
	flag.Parse()
	for _, a := range strings.Split(*agents, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(a))
		if err != nil || n < 1 || n > 1024 {
			fmt.Fprintf(os.Stderr, "hldbench: --agents: %q is not a count from 1 to 1024\n", a)
			os.Exit(2)
		}
		cfg.agents = append(cfg.agents, n)
	}
	if err := loopbackOnly(cfg.url); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "hldbench:", err)
		os.Exit(1)
	}
}

func loopbackOnly(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("hldbench: %q is not a URL", raw)
	}
	if h := u.Hostname(); h == "localhost" {
		return nil
	} else if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("hldbench: %s is not a loopback address", raw)
}

// sessionHeader adds hld's X-Session-ID to every MCP request, as the MCP
// config hld writes for an HTTP MCP server does (session/manager.go).
type sessionHeader struct {
	base    http.RoundTripper
	session string
}

func (t sessionHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Session-ID", t.session)
	return t.base.RoundTrip(r)
}

type bench struct {
	cfg       config
	api       string
	http      *http.Client // the person's side (the UI's requests)
	agentHTTP *http.Client // the agent's side (MCP)
}

func run(ctx context.Context, cfg config) error {
	// As in askd-bench: the person's side and the agent's side have clients
	// of their own.
	b := &bench{cfg: cfg, api: strings.TrimRight(cfg.url, "/") + "/api/v1",
		http:      &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2048, DisableCompression: cfg.noGzip}},
		agentHTTP: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2048, DisableCompression: cfg.noGzip}}}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FIGURE\tRESULT\tDETAIL")
	for _, sc := range strings.Split(cfg.scenarios, ",") {
		var err error
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

// latency times one decision at a time, after an idle pause, from the
// decision's request to the blocked request_approval call returning.
func (b *bench) latency(ctx context.Context, tw io.Writer) error {
	cfg := b.cfg

	// A session for the approvals to belong to: a draft session made through
	// hld's REST API (POST /sessions, draft: true), which stores the session
	// without launching Claude Code.
	sess, err := b.createDraftSession(ctx)
	if err != nil {
		return fmt.Errorf("create draft session: %w", err)
	}

	c := mcp.NewClient(&mcp.Implementation{Name: "hld-bench", Version: "0"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             b.api + "/mcp",
		HTTPClient:           &http.Client{Transport: sessionHeader{base: b.agentHTTP.Transport, session: sess}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, nil)
	if err != nil {
		return fmt.Errorf("mcp connect: %w", err)
	}
	defer cs.Close()

	sctx, stopEvents := context.WithCancel(ctx)
	defer stopEvents()
	events := b.events(sctx, sess)
	time.Sleep(200 * time.Millisecond) // let the stream subscribe before round -1

	var call, post []time.Duration
	// Round -1 is untimed: hld's event stream sends its response headers only
	// with its first event, so the stream is known to be subscribed only once
	// an event has come through it.
	for i := -1; i < cfg.n; i++ {
		toolUseID := fmt.Sprintf("toolu_bench_%d_%d", time.Now().UnixNano(), i)
		toolName := fmt.Sprintf("bench_latency_%d", i)
		params := &mcp.CallToolParams{Name: "request_approval", Arguments: map[string]any{
			"tool_name":   toolName,
			"input":       map[string]any{"command": fmt.Sprintf("latency %d", i)},
			"tool_use_id": toolUseID,
		}}
		done := make(chan time.Time, 1)
		var res *mcp.CallToolResult
		var cerr error
		cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
		go func() {
			res, cerr = cs.CallTool(cctx, params)
			done <- time.Now()
		}()
		wait := 30 * time.Second
		if i < 0 {
			wait = 3 * time.Second
		}
		id, err := waitCreated(ctx, events, toolName, wait)
		if err != nil && i < 0 {
			// The stream may have subscribed after this approval was
			// published: find it in the REST listing instead (untimed round).
			fmt.Fprintln(os.Stderr, "hldbench: the first approval did not come on the event stream; found it through GET /approvals (untimed round)")
			id, err = b.pendingByTool(ctx, sess, toolName)
		}
		if err != nil {
			ccancel()
			return fmt.Errorf("round %d: %w", i, err)
		}
		if cfg.pause > 0 {
			time.Sleep(cfg.pause)
		}
		t0 := time.Now()
		if err := b.decide(ctx, id); err != nil {
			ccancel()
			return fmt.Errorf("round %d: decide %s: %w", i, id, err)
		}
		d := time.Since(t0)
		t1 := <-done
		ccancel()
		if cerr != nil || !allowed(res) {
			return fmt.Errorf("request_approval call %d did not return the approval: %v %s", i, cerr, dump(res))
		}
		if i >= 0 {
			post = append(post, d)
			call = append(call, t1.Sub(t0))
		}
	}
	fmt.Fprintf(tw, "answer -> request_approval returns\t%s\tn=%d, pause %s; the answer request alone: %s\n", percentiles(call), len(call), cfg.pause, percentiles(post))
	stopEvents()

	// The floor: hld's cheapest request (GET /config/status: a few
	// environment look-ups, no database, no process; /health runs
	// `claude --version` on every call), after the same pause, on the
	// person's client.
	bare := make([]time.Duration, 0, cfg.n)
	for range cfg.n {
		if cfg.pause > 0 {
			time.Sleep(cfg.pause)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.api+"/config/status", nil)
		t0 := time.Now()
		resp, err := b.http.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		bare = append(bare, time.Since(t0))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("config/status: %s", resp.Status)
		}
	}
	fmt.Fprintf(tw, "a bare request (GET /api/v1/config/status)\t%s\tn=%d, pause %s: the floor of any request here\n", percentiles(bare), len(bare), cfg.pause)
	return nil
}

func (b *bench) createDraftSession(ctx context.Context) (string, error) {
	wd, _ := os.Getwd()
	body, _ := json.Marshal(map[string]any{"query": "hld latency bench", "title": "bench", "draft": true, "working_dir": wd})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, b.api+"/sessions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("%s: %s", resp.Status, raw)
	}
	var out struct {
		Data struct {
			SessionID string `json:"session_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Data.SessionID == "" {
		return "", fmt.Errorf("no session_id in %s", raw)
	}
	return out.Data.SessionID, nil
}

// pendingByTool finds a pending approval in session by its tool name through
// GET /approvals?sessionId= (used only in the untimed first round).
func (b *bench) pendingByTool(ctx context.Context, session, toolName string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.api+"/approvals?sessionId="+url.QueryEscape(session), nil)
	resp, err := b.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		Data []struct {
			ID       string `json:"id"`
			ToolName string `json:"tool_name"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", err
	}
	for _, a := range out.Data {
		if a.ToolName == toolName {
			return a.ID, nil
		}
	}
	return "", fmt.Errorf("approval for %s neither on the event stream nor in GET /approvals", toolName)
}

type created struct {
	approvalID, toolName string
}

// events follows hld's event stream (GET /stream/events, as its UI does),
// filtered to new approvals in session, and sends each one on.
func (b *bench) events(ctx context.Context, session string) <-chan created {
	ch := make(chan created, 64)
	go func() {
		defer close(ch)
		q := url.Values{"eventTypes": {"new_approval"}}
		if session != "" {
			q.Set("sessionId", session)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.api+"/stream/events?"+q.Encode(), nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := b.http.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev struct {
				Type string         `json:"type"`
				Data map[string]any `json:"data"`
			}
			if json.Unmarshal([]byte(data), &ev) != nil || ev.Type != "new_approval" {
				continue
			}
			id, _ := ev.Data["approval_id"].(string)
			tn, _ := ev.Data["tool_name"].(string)
			select {
			case ch <- created{id, tn}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

func waitCreated(ctx context.Context, events <-chan created, toolName string, wait time.Duration) (string, error) {
	timeout := time.After(wait)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return "", errors.New("event stream closed")
			}
			if ev.toolName == toolName {
				return ev.approvalID, nil
			}
		case <-timeout:
			return "", fmt.Errorf("no new_approval event within %s", wait)
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// decide approves approval id as hld's UI does: POST /approvals/{id}/decide.
func (b *bench) decide(ctx context.Context, id string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, b.api+"/approvals/"+url.PathEscape(id)+"/decide",
		strings.NewReader(`{"decision":"approve"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var out struct {
		Data struct {
			Success bool `json:"success"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil || !out.Data.Success {
		return fmt.Errorf("%s: %s", resp.Status, raw)
	}
	return nil
}

// allowed reports whether a request_approval result is hld's approval:
// a text content holding {"behavior":"allow",...}.
func allowed(res *mcp.CallToolResult) bool {
	if res == nil || res.IsError || len(res.Content) == 0 {
		return false
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return false
	}
	var out struct {
		Behavior string `json:"behavior"`
	}
	return json.Unmarshal([]byte(tc.Text), &out) == nil && out.Behavior == "allow"
}

func dump(res *mcp.CallToolResult) string {
	raw, _ := json.Marshal(res)
	return string(raw)
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
