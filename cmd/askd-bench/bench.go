package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runScenarios measures the scenarios bc names, one after another, and
// prints their figures as a table on out.
func runScenarios(ctx context.Context, bc benchConfig, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, bc.timeout)
	defer cancel()
	// The person's side and the agents' side have clients of their own, as
	// on a real machine: a parked call's connection closes after its result,
	// and a shared pool would make the next answer dial a new connection.
	b := &bench{cfg: bc, out: out,
		http:      &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2048}},
		agentHTTP: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2048}}}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FIGURE\tRESULT\tDETAIL")
	for _, sc := range strings.Split(bc.scenarios, ",") {
		var err error
		switch strings.TrimSpace(sc) {
		case "latency":
			err = b.latency(ctx, tw)
		case "waiters":
			err = b.waiterLoad(ctx, tw)
		case "throughput":
			err = b.throughput(ctx, tw, false)
		case "throughput-rest":
			err = b.throughput(ctx, tw, true)
		case "sse":
			err = b.sseFanout(ctx, tw)
		case "history":
			err = b.historySearch(ctx, tw)
		case "inbox":
			err = b.inboxLoad(ctx, tw)
		case "purge":
			err = b.purgeLatency(ctx, tw)
		default:
			err = usageError(fmt.Sprintf("--scenarios: unknown %q", sc))
		}
		if err != nil {
			tw.Flush()
			return fmt.Errorf("%s: %w", sc, err)
		}
		tw.Flush()
	}
	return tw.Flush()
}

type bench struct {
	cfg       benchConfig
	out       io.Writer
	http      *http.Client // the person's side (the inbox's requests)
	agentHTTP *http.Client // the agents' side (MCP and their REST calls)
}

// mcpSession connects one MCP client for session over streamable HTTP.
func (b *bench) mcpSession(ctx context.Context, session string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "askd-bench", Version: version}, nil)
	tr := &mcp.StreamableClientTransport{
		Endpoint:             b.cfg.agentURL + "/mcp",
		HTTPClient:           &http.Client{Transport: client.Transport{Base: b.agentHTTP.Transport, Token: b.cfg.agentToken, Session: session}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}
	return c.Connect(ctx, tr, nil)
}

func questionArgs(text string) map[string]any {
	return map[string]any{"questions": []any{map[string]any{
		"question": text, "header": "Bench", "multiSelect": false,
		"options": []any{map[string]any{"label": "a"}, map[string]any{"label": "b"}},
	}}}
}

// answered reports whether an ask_user_question result carries answer "a".
func answered(res *mcp.CallToolResult, text string) bool {
	var out struct {
		Answers map[string]any `json:"answers"`
	}
	return structured(res, &out) && out.Answers[text] == "a"
}

// structured decodes a successful tool result's structured content into out.
func structured(res *mcp.CallToolResult, out any) bool {
	if res == nil || res.IsError {
		return false
	}
	raw, err := json.Marshal(res.StructuredContent)
	return err == nil && json.Unmarshal(raw, out) == nil
}

func (b *bench) human() *client.Client {
	c := client.New(b.cfg.inboxURL, b.cfg.humanToken)
	c.HTTP = b.http
	return c
}

// agent is an agent-side client for session.
func (b *bench) agent(session string) *client.Client {
	c := client.New(b.cfg.agentURL, b.cfg.agentToken)
	c.HTTP, c.Session = b.agentHTTP, session
	return c
}

func (b *bench) answer(ctx context.Context, id int64, text string) error {
	_, err := b.human().Answer(ctx, id, &askd.Answer{Answers: map[string]askd.Choice{text: {Values: []string{"a"}}}})
	return err
}

// latency times, one at a time, a person's answer to the blocked call
// returning it: ask_user_question and request_approval in turn, each answer
// after --pause of idle time (a person never answers within microseconds,
// and an idle machine wakes slower than a busy one).
func (b *bench) latency(ctx context.Context, tw io.Writer) error {
	sess := fmt.Sprintf("bench-latency-%d", time.Now().UnixNano())
	cs, err := b.mcpSession(ctx, sess)
	if err != nil {
		return err
	}
	defer cs.Close()
	events, err := b.human().Events(ctx, -1)
	if err != nil {
		return err
	}
	type series struct {
		name       string
		call, post []time.Duration
	}
	question := &series{name: "ask_user_question"}
	approval := &series{name: "request_approval"}
	for i := 0; i < 2*b.cfg.latencyN; i++ {
		text := fmt.Sprintf("latency %d?", i)
		s, params, ans, check := question, &mcp.CallToolParams{Name: "ask_user_question", Arguments: questionArgs(text)},
			&askd.Answer{Answers: map[string]askd.Choice{text: {Values: []string{"a"}}}}, func(r *mcp.CallToolResult) bool { return answered(r, text) }
		if i%2 == 1 {
			s, params, ans, check = approval, &mcp.CallToolParams{Name: "request_approval", Arguments: map[string]any{"title": text, "grace_seconds": 120}},
				&askd.Answer{Decision: askd.DecisionApproved}, approved
		}
		done := make(chan time.Time, 1)
		var res *mcp.CallToolResult
		var cerr error
		go func() {
			res, cerr = cs.CallTool(ctx, params)
			done <- time.Now()
		}()
		id, err := waitCreated(ctx, events, sess)
		if err != nil {
			return err
		}
		if b.cfg.pause > 0 {
			time.Sleep(b.cfg.pause)
		}
		t0 := time.Now()
		if _, err := b.human().Answer(ctx, id, ans); err != nil {
			return err
		}
		s.post = append(s.post, time.Since(t0))
		t1 := <-done
		if cerr != nil || !check(res) {
			return fmt.Errorf("%s call %d did not return the answer: %v", s.name, i, cerr)
		}
		s.call = append(s.call, t1.Sub(t0))
	}
	for _, s := range []*series{question, approval} {
		fmt.Fprintf(tw, "answer -> %s returns\t%s\tn=%d, pause %s; the answer request alone: %s\n", s.name, percentiles(s.call), len(s.call), b.cfg.pause, percentiles(s.post))
	}
	// The floor: a request that does nothing (GET /healthz), after the same
	// pause, on the same client and server.
	bare := make([]time.Duration, 0, b.cfg.latencyN)
	for range b.cfg.latencyN {
		if b.cfg.pause > 0 {
			time.Sleep(b.cfg.pause)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.cfg.inboxURL+"/healthz", nil)
		t0 := time.Now()
		resp, err := b.http.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		bare = append(bare, time.Since(t0))
	}
	fmt.Fprintf(tw, "a bare request (GET /healthz)\t%s\tn=%d, pause %s: the floor of any request here\n", percentiles(bare), len(bare), b.cfg.pause)
	return nil
}

// approved reports whether a request_approval result is the decision
// approved (its status field).
func approved(res *mcp.CallToolResult) bool {
	var out struct {
		Status string `json:"status"`
	}
	return structured(res, &out) && out.Status == askd.DecisionApproved
}

func waitCreated(ctx context.Context, events <-chan client.Event, session string) (int64, error) {
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return 0, errors.New("event stream closed")
			}
			if ev.Type == "ask.created" && ev.Event.Session == session {
				return ev.Event.AskID, nil
			}
		case <-time.After(30 * time.Second):
			return 0, errors.New("no ask.created within 30 s")
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// waiterLoad holds N ask_user_question calls blocked at once, reads the agent
// process's memory, then answers them all and counts what came back.
func (b *bench) waiterLoad(ctx context.Context, tw io.Writer) error {
	n := b.cfg.waiters
	base, err := b.rss(ctx, b.cfg.agentURL)
	if err != nil {
		return err
	}
	run := time.Now().UnixNano()
	const perSession = 20 // askd's default pending limit per session
	sessions := (n + perSession - 1) / perSession
	var calls sync.WaitGroup
	var ok, failed atomic.Int64
	var firstErr atomic.Value
	start := time.Now()
	for s := 0; s < sessions; s++ {
		sess := fmt.Sprintf("bench-wait-%d-%d", run, s)
		cs, err := b.mcpSession(ctx, sess)
		if err != nil {
			return fmt.Errorf("connect session %d: %w", s, err)
		}
		defer cs.Close()
		for k := 0; k < perSession && s*perSession+k < n; k++ {
			text := fmt.Sprintf("waiter %d?", s*perSession+k)
			calls.Add(1)
			go func() {
				defer calls.Done()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_user_question", Arguments: questionArgs(text)})
				if err == nil && answered(res, text) {
					ok.Add(1)
					return
				}
				failed.Add(1)
				if err != nil {
					firstErr.CompareAndSwap(nil, err.Error())
				} else if res != nil {
					raw, _ := json.Marshal(res)
					firstErr.CompareAndSwap(nil, string(raw))
				}
			}()
		}
	}
	// Wait until every call is blocked on a pending ask.
	prefix := fmt.Sprintf("bench-wait-%d-", run)
	for {
		pending, err := b.pendingIn(ctx, prefix)
		if err != nil {
			return err
		}
		if pending >= n {
			break
		}
		if failed.Load() > 0 {
			return fmt.Errorf("%d calls failed while starting: %v", failed.Load(), firstErr.Load())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("only %d of %d waiting: %w", pending, n, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	ramp := time.Since(start)
	loaded, err := b.rss(ctx, b.cfg.agentURL)
	if err != nil {
		return err
	}
	// Right after the ramp, the process still holds the memory the burst of
	// requests took; the runtime gives it back after its next collection.
	settled := int64(0)
	if b.cfg.settle > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(b.cfg.settle):
		}
		if settled, err = b.rss(ctx, b.cfg.agentURL); err != nil {
			return err
		}
	}
	// The asks to answer are listed first, outside the timing, as the peer
	// harness (scripts/peer) knows its approvals' ids before it decides.
	var todo [][2]any
	var before int64
	for len(todo) < n {
		asks, err := b.human().List(ctx, client.ListOptions{Status: askd.StatusPending, Limit: 1000, Before: before})
		if err != nil {
			return err
		}
		if len(asks) == 0 {
			break
		}
		for _, a := range asks {
			before = a.ID
			if strings.HasPrefix(a.Session, prefix) {
				todo = append(todo, [2]any{a.ID, a.Questions[0].Question})
			}
		}
	}
	// Answer them all, 32 at a time.
	cpu0, err := b.cpu(ctx)
	if err != nil {
		return err
	}
	t0 := time.Now()
	ids := make(chan [2]any, 1024)
	var answerers sync.WaitGroup
	var answerErrs atomic.Int64
	for w := 0; w < 32; w++ {
		answerers.Add(1)
		go func() {
			defer answerers.Done()
			for it := range ids {
				if err := b.answer(ctx, it[0].(int64), it[1].(string)); err != nil {
					answerErrs.Add(1)
				}
			}
		}()
	}
	for _, it := range todo {
		ids <- it
	}
	close(ids)
	answerers.Wait()
	calls.Wait()
	drain := time.Since(t0)
	cpu1, err := b.cpu(ctx)
	if err != nil {
		return err
	}
	per := float64(loaded-base) / float64(n)
	fmt.Fprintf(tw, "blocked ask_user_question calls\t%d waiting, %d answered, %d lost\tramp %s, all answered and returned in %s, %d answer errors\n",
		n, ok.Load(), int64(n)-ok.Load(), ramp.Round(time.Millisecond), drain.Round(time.Millisecond), answerErrs.Load())
	fmt.Fprintf(tw, "  CPU per released call\t%s\t\n", cpuPerCycle(cpu0, cpu1, int64(n)))
	fmt.Fprintf(tw, "agent process RSS\t%.0f MB loaded (%.0f MB idle)\t%.1f KB per waiter\n", float64(loaded)/1e6, float64(base)/1e6, per/1024)
	if settled > 0 {
		fmt.Fprintf(tw, "agent process RSS, settled\t%.0f MB, %s after the ramp\t%.1f KB per waiter\n",
			float64(settled)/1e6, b.cfg.settle, float64(settled-base)/float64(n)/1024)
	}
	if failed.Load() > 0 {
		fmt.Fprintf(tw, "first failure\t%v\t\n", firstErr.Load())
	}
	return nil
}

// pendingIn counts pending asks in sessions whose name starts with prefix.
func (b *bench) pendingIn(ctx context.Context, prefix string) (int, error) {
	ss, err := b.human().Sessions(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range ss {
		if strings.HasPrefix(s.Name, prefix) {
			n += s.Pending
		}
	}
	return n, nil
}

// rss reads process_resident_memory_bytes from a server's /metrics.
func (b *bench) rss(ctx context.Context, base string) (int64, error) {
	v, err := b.metric(ctx, base, "process_resident_memory_bytes")
	return int64(v), err
}

// metric reads one unlabelled value from a server's /metrics.
func (b *bench) metric(ctx context.Context, base, name string) (float64, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	resp, err := b.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("no %s in %s/metrics", name, base)
}

// throughput runs create + answer cycles with concurrent agents: the create
// over MCP (the ask tool) or, with rest, POST /api/asks.
func (b *bench) throughput(ctx context.Context, tw io.Writer, rest bool) error {
	via := "MCP"
	if rest {
		via = "REST " + string(b.cfg.restKind)
	}
	for _, agents := range b.cfg.agents {
		run := time.Now().UnixNano()
		cpu0, err := b.cpu(ctx)
		if err != nil {
			return err
		}
		var cycles, errs atomic.Int64
		var wg sync.WaitGroup
		stop := time.Now().Add(b.cfg.duration)
		start := time.Now()
		for g := 0; g < agents; g++ {
			session := fmt.Sprintf("bench-tp-%d-%d", run, g)
			create := func(i int) (int64, error) {
				a, err := b.agent(session).Create(ctx, restInput(b.cfg.restKind, i), 0)
				if err != nil {
					return 0, err
				}
				return a.ID, nil
			}
			answer := restAnswer(b.cfg.restKind)
			if !rest {
				cs, err := b.mcpSession(ctx, session)
				if err != nil {
					return err
				}
				defer cs.Close()
				create = func(i int) (int64, error) {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"kind": "ready", "title": fmt.Sprintf("cycle %d", i)}})
					if err != nil {
						return 0, err
					}
					if res.IsError {
						return 0, errors.New("ask failed")
					}
					var out struct{ ID int64 }
					if !structured(res, &out) {
						return 0, errors.New("ask: no id in its result")
					}
					return out.ID, nil
				}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; time.Now().Before(stop) && ctx.Err() == nil; i++ {
					id, err := create(i)
					if err != nil {
						errs.Add(1)
						continue
					}
					if _, err := b.human().Answer(ctx, id, answer()); err != nil {
						errs.Add(1)
						continue
					}
					cycles.Add(1)
				}
			}()
		}
		wg.Wait()
		el := time.Since(start)
		cpu1, err := b.cpu(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "create+answer cycles (%s), %d agents\t%.0f/s\t%d cycles in %s, %d errors\n", via, agents, float64(cycles.Load())/el.Seconds(), cycles.Load(), el.Round(time.Millisecond), errs.Load())
		if n := cycles.Load(); n > 0 {
			fmt.Fprintf(tw, "  CPU per cycle, %d agents\t%s\t\n", agents, cpuPerCycle(cpu0, cpu1, n))
		}
	}
	return nil
}

// benchForm is the form throughput-rest --rest-kind form creates: seven
// fields of every kind, as an MCP server's form might ask.
const benchForm = `{"type":"object","properties":{` +
	`"name":{"type":"string","title":"Name","minLength":2,"maxLength":80},` +
	`"email":{"type":"string","format":"email"},` +
	`"when":{"type":"string","format":"date"},` +
	`"count":{"type":"integer","minimum":1,"maximum":100,"default":3},` +
	`"confirm":{"type":"boolean","default":false},` +
	`"env":{"type":"string","oneOf":[{"const":"dev","title":"Development"},{"const":"prod","title":"Production"}]},` +
	`"tags":{"type":"array","items":{"enum":["a","b","c"]},"minItems":1,"maxItems":2}` +
	`},"required":["name","count"]}`

// restInput is the ask throughput-rest creates for cycle i.
func restInput(kind askd.Kind, i int) *askd.AskInput {
	title := fmt.Sprintf("cycle %d", i)
	switch kind {
	case askd.KindApproval:
		return &askd.AskInput{Kind: kind, Title: title, Payload: json.RawMessage(`{"command":"make deploy"}`)}
	case askd.KindForm:
		return &askd.AskInput{Kind: kind, Title: title, Source: "bench", Schema: json.RawMessage(benchForm)}
	}
	return &askd.AskInput{Kind: kind, Title: title}
}

// restAnswer returns the answers throughput-rest gives asks of kind, a new
// one each time (the client may change it).
func restAnswer(kind askd.Kind) func() *askd.Answer {
	switch kind {
	case askd.KindApproval:
		return func() *askd.Answer { return &askd.Answer{Decision: askd.DecisionApproved} }
	case askd.KindForm:
		return func() *askd.Answer {
			return &askd.Answer{Content: map[string]any{"name": "Ada", "email": "ada@example.com", "when": "2026-12-02",
				"count": 7.0, "confirm": true, "env": "prod", "tags": []any{"a", "c"}}}
		}
	}
	return func() *askd.Answer { return &askd.Answer{Answer: "ok"} }
}

// cpuSample is CPU seconds used so far, by process: the askd servers (from
// their /metrics), the processes named by --cpu-of (from /proc, summed by
// name) and this load tool itself.
type cpuSample []struct {
	name    string
	seconds float64
}

func (b *bench) cpu(ctx context.Context) (cpuSample, error) {
	var s cpuSample
	add := func(name string, sec float64) {
		s = append(s, struct {
			name    string
			seconds float64
		}{name, sec})
	}
	servers := [][2]string{{"askd", b.cfg.agentURL}}
	if b.cfg.inboxURL != b.cfg.agentURL {
		servers = [][2]string{{"askd agent", b.cfg.agentURL}, {"askd inbox", b.cfg.inboxURL}}
	}
	for _, srv := range servers {
		sec, err := b.metric(ctx, srv[1], "process_cpu_seconds_total")
		if err != nil {
			return nil, err
		}
		add(srv[0], sec)
	}
	for _, name := range b.cfg.cpuOf {
		sec, err := procCPU(name)
		if err != nil {
			return nil, err
		}
		add(name, sec)
	}
	add("load tool", selfCPU())
	return s, nil
}

// cpuPerCycle formats each process's CPU between two samples per cycle, and
// their sum.
func cpuPerCycle(a, b cpuSample, cycles int64) string {
	var parts []string
	total := 0.0
	for i := range b {
		ms := (b[i].seconds - a[i].seconds) * 1000 / float64(cycles)
		total += ms
		parts = append(parts, fmt.Sprintf("%s %.2f", b[i].name, ms))
	}
	return fmt.Sprintf("%s ms (all %.2f ms)", strings.Join(parts, ", "), total)
}

// sseFanout connects N inbox streams plus one that never reads, creates asks,
// and times each stream's receipt of the ask.created event.
func (b *bench) sseFanout(ctx context.Context, tw io.Writer) error {
	n := b.cfg.sseStreams
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type recv struct {
		stream int
		at     time.Time
	}
	got := make(chan recv, n*8)
	var connected sync.WaitGroup
	open := func(i int, read bool) error {
		req, _ := http.NewRequestWithContext(sctx, http.MethodGet, b.cfg.inboxURL+"/api/events", nil)
		req.Header.Set("Authorization", "Bearer "+b.cfg.humanToken)
		resp, err := b.http.Do(req)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return fmt.Errorf("events: %s", resp.Status)
		}
		connected.Done()
		if !read {
			<-sctx.Done() // a stalled reader: connected, never reading
			resp.Body.Close()
			return nil
		}
		go func() {
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			created := false // the event's data follows its name
			for sc.Scan() {
				line := sc.Text()
				switch {
				case strings.HasPrefix(line, "event: "):
					created = line == "event: ask.created"
				case created && strings.HasPrefix(line, "data: ") && strings.Contains(line, `"bench-fanout-`):
					got <- recv{stream: i, at: time.Now()}
				}
			}
		}()
		return nil
	}
	connected.Add(n + 1)
	go open(-1, false)
	for i := 0; i < n; i++ {
		go func(i int) {
			if err := open(i, true); err != nil {
				connected.Done()
			}
		}(i)
	}
	connected.Wait()
	time.Sleep(500 * time.Millisecond)
	agent := client.New(b.cfg.agentURL, b.cfg.agentToken)
	agent.HTTP = b.agentHTTP
	run := time.Now().UnixNano()
	cycled, stopCycling := b.cycle(ctx, b.cfg.sseCycling, run)
	defer stopCycling()
	var lat []time.Duration
	rounds := b.cfg.sseRounds
	for r := 0; r < rounds; r++ {
		agent.Session = fmt.Sprintf("bench-fanout-%d-%d", run, r) // a new session: a new ask, not a replacement
		t0 := time.Now()
		if _, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: fmt.Sprintf("fan-out %d", r)}, 0); err != nil {
			return err
		}
		seen := 0
		timeout := time.After(10 * time.Second)
	collect:
		for seen < n {
			select {
			case rv := <-got:
				lat = append(lat, rv.at.Sub(t0))
				seen++
			case <-timeout:
				break collect
			}
		}
		if seen < n {
			return fmt.Errorf("round %d: only %d of %d streams saw the event within 10 s", r, seen, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	cycles := stopCycling()
	fmt.Fprintf(tw, "SSE fan-out to %d streams (+1 stalled)\t%s\t%d rounds, create -> each stream's receipt; %d agents cycling meanwhile: %d cycles, %d errors\n",
		n, percentiles(lat), rounds, b.cfg.sseCycling, cycles.Load(), cycled.Load())
	return nil
}

// cycle starts agents agents making and answering asks over REST, one
// after another each, until stop is called; stop waits for them and
// returns the cycles done. errs counts the failed ones.
func (b *bench) cycle(ctx context.Context, agents int, run int64) (errs *atomic.Int64, stop func() *atomic.Int64) {
	errs = new(atomic.Int64)
	var cycles atomic.Int64
	cctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for g := range agents {
		wg.Go(func() {
			a := b.agent(fmt.Sprintf("bench-cycle-%d-%d", run, g))
			for i := 0; cctx.Err() == nil; i++ {
				ask, err := a.Create(cctx, &askd.AskInput{Kind: askd.KindReady, Title: fmt.Sprintf("cycle %d", i)}, 0)
				if err == nil {
					_, err = b.human().Answer(cctx, ask.ID, &askd.Answer{Answer: "ok"})
				}
				switch {
				case err == nil:
					cycles.Add(1)
				case cctx.Err() == nil:
					errs.Add(1)
				}
			}
		})
	}
	var once sync.Once
	return errs, func() *atomic.Int64 {
		once.Do(func() { cancel(); wg.Wait() })
		return &cycles
	}
}

// percentiles formats p50 / p99 / max in milliseconds.
func percentiles(d []time.Duration) string {
	if len(d) == 0 {
		return "no samples"
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	q := func(p float64) time.Duration { return d[int(p*float64(len(d)-1))] }
	ms := func(x time.Duration) string { return strconv.FormatFloat(float64(x.Microseconds())/1000, 'f', 2, 64) }
	return fmt.Sprintf("p50 %s / p90 %s / p99 %s / max %s ms", ms(q(0.5)), ms(q(0.9)), ms(q(0.99)), ms(d[len(d)-1]))
}
