package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpSession connects one MCP client for hld session sess over streamable
// HTTP, on the agents' side.
func (b *bench) mcpSession(ctx context.Context, sess string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "hld-bench", Version: "0"}, nil)
	return c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             b.api + "/mcp",
		HTTPClient:           &http.Client{Transport: sessionHeader{base: b.agentHTTP.Transport, session: sess}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, nil)
}

// approvals hands each new approval's id, seen on one event stream of every
// session, to whoever waits for its tool name (every call of the load
// scenarios has a tool name of its own).
type approvals struct {
	mu      sync.Mutex
	waiting map[string]chan string
	seen    atomic.Int64
}

func (b *bench) followApprovals(ctx context.Context) *approvals {
	a := &approvals{waiting: map[string]chan string{}}
	events := b.events(ctx, "")
	go func() {
		for ev := range events {
			a.seen.Add(1)
			a.mu.Lock()
			ch, ok := a.waiting[ev.toolName]
			if !ok { // seen before anyone waits: kept for them
				ch = make(chan string, 1)
				a.waiting[ev.toolName] = ch
			}
			a.mu.Unlock()
			ch <- ev.approvalID
		}
	}()
	return a
}

// of returns the channel that gets toolName's approval id.
func (a *approvals) of(toolName string) chan string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ch, ok := a.waiting[toolName]
	if !ok {
		ch = make(chan string, 1)
		a.waiting[toolName] = ch
	}
	return ch
}

func (a *approvals) forget(toolName string) {
	a.mu.Lock()
	delete(a.waiting, toolName)
	a.mu.Unlock()
}

func approvalParams(toolName string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "request_approval", Arguments: map[string]any{
		"tool_name":   toolName,
		"input":       map[string]any{"command": toolName},
		"tool_use_id": "toolu_" + toolName,
	}}
}

// throughput runs create + decide cycles with concurrent agents, each its
// own draft session and MCP client: request_approval (hld's only way to make
// an approval, a call that blocks), the id from the event stream, the
// decision over REST, the call's return. askd-bench's cycle is the same but
// for the agent's call: askd's ask tool returns at once.
func (b *bench) throughput(ctx context.Context, tw io.Writer) error {
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	ap := b.followApprovals(sctx)
	time.Sleep(200 * time.Millisecond) // let the stream subscribe
	for _, agents := range b.cfg.agents {
		run := time.Now().UnixNano()
		clients := make([]*mcp.ClientSession, agents)
		for g := range clients {
			sess, err := b.createDraftSession(ctx)
			if err != nil {
				return fmt.Errorf("create draft session: %w", err)
			}
			if clients[g], err = b.mcpSession(ctx, sess); err != nil {
				return fmt.Errorf("mcp connect: %w", err)
			}
			defer clients[g].Close()
		}
		cpu0 := b.cpuTicks()
		var cycles, errs, lost atomic.Int64
		var firstErr atomic.Value
		var wg sync.WaitGroup
		start := time.Now()
		end := start.Add(b.cfg.duration)
		// A lost cycle's time is left out of its agent's time: the rate is
		// hld's as if it had no race (per agent: cycles over the time not
		// spent on lost cycles), which is hld at its best.
		rates := make([]float64, agents)
		for g, cs := range clients {
			wg.Go(func() {
				var n int64
				var stalled time.Duration
				defer func() {
					if busy := time.Since(start) - stalled; busy > 0 {
						rates[g] = float64(n) / busy.Seconds()
					}
				}()
				for i := 0; time.Now().Before(end) && ctx.Err() == nil; i++ {
					tool := fmt.Sprintf("tp_%d_%d_%d", run, g, i)
					t := time.Now()
					if err := b.cycle(ctx, ap, cs, tool); errors.Is(err, errLost) {
						lost.Add(1)
						stalled += time.Since(t)
						continue
					} else if err != nil {
						errs.Add(1)
						firstErr.CompareAndSwap(nil, err.Error())
						continue
					}
					cycles.Add(1)
					n++
				}
			})
		}
		wg.Wait()
		el := time.Since(start)
		cpu1 := b.cpuTicks()
		rate := 0.0
		for _, r := range rates {
			rate += r
		}
		fmt.Fprintf(tw, "create+decide cycles (MCP), %d agents\t%.0f/s\t%d cycles in %s, %d errors, %d decisions that never reached their call (given up after %s, their time left out)\n",
			agents, rate, cycles.Load(), el.Round(time.Millisecond), errs.Load(), lost.Load(), lostAfter)
		if n := cycles.Load(); n > 0 && cpu0 >= 0 && cpu1 >= 0 {
			fmt.Fprintf(tw, "  CPU per cycle, %d agents\thld %.2f ms\t\n", agents, float64(cpu1-cpu0)*10/float64(n))
		}
		if e := firstErr.Load(); e != nil {
			fmt.Fprintf(tw, "  first error\t%v\t\n", e)
		}
	}
	return nil
}

// cycle is one blocked request_approval, decided as soon as it is seen.
func (b *bench) cycle(ctx context.Context, ap *approvals, cs *mcp.ClientSession, tool string) error {
	defer ap.forget(tool)
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(cctx, approvalParams(tool))
		if err == nil && !allowed(res) {
			err = fmt.Errorf("request_approval did not return the approval: %s", dump(res))
		}
		done <- err
	}()
	select {
	case id := <-ap.of(tool):
		if err := b.decide(ctx, id); err != nil {
			cancel()
			<-done
			return err
		}
	case err := <-done:
		return fmt.Errorf("request_approval returned before its decision: %v", err)
	case <-cctx.Done():
		<-done
		return errors.New("no new_approval event within 30s")
	}
	// hld announces an approval before its MCP handler listens for the
	// decision; a decision in that gap is stored but never reaches the call.
	// Such a call is given up after lostAfter and counted apart.
	select {
	case err := <-done:
		return err
	case <-time.After(lostAfter):
		cancel()
		<-done
		return errLost
	}
}

// lostAfter is how long a decided call may take to return before it counts
// as lost to hld's race (its p99 on this machine is a few milliseconds).
const lostAfter = 100 * time.Millisecond

var errLost = errors.New("decided, but the call did not return")

// waiterLoad holds cfg.waiters request_approval calls blocked at once (20 a
// session, as askd-bench's waiters), reads hld's RSS, then decides them all,
// 32 at a time, and times until every call has returned.
func (b *bench) waiterLoad(ctx context.Context, tw io.Writer) error {
	n := b.cfg.waiters
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	ap := b.followApprovals(sctx)
	time.Sleep(200 * time.Millisecond) // let the stream subscribe
	base := b.rss()
	run := time.Now().UnixNano()
	const perSession = 20
	var calls sync.WaitGroup
	var ok, failed atomic.Int64
	var firstErr atomic.Value
	cctx, cancelCalls := context.WithCancel(ctx)
	defer cancelCalls()
	seen0 := ap.seen.Load()
	tools := make([]string, 0, n)
	start := time.Now()
	for s := 0; s*perSession < n; s++ {
		sess, err := b.createDraftSession(ctx)
		if err != nil {
			return fmt.Errorf("create draft session %d: %w", s, err)
		}
		cs, err := b.mcpSession(ctx, sess)
		if err != nil {
			return fmt.Errorf("mcp connect %d: %w", s, err)
		}
		defer cs.Close()
		for k := 0; k < perSession && s*perSession+k < n; k++ {
			tool := fmt.Sprintf("wait_%d_%d", run, s*perSession+k)
			tools = append(tools, tool)
			calls.Go(func() {
				res, err := cs.CallTool(cctx, approvalParams(tool))
				if err == nil && allowed(res) {
					ok.Add(1)
					return
				}
				failed.Add(1)
				if err != nil {
					firstErr.CompareAndSwap(nil, err.Error())
				} else {
					firstErr.CompareAndSwap(nil, dump(res))
				}
			})
		}
	}
	// Every call is blocked once its approval has been announced.
	for ap.seen.Load()-seen0 < int64(n) {
		if failed.Load() > 0 {
			return fmt.Errorf("%d calls failed while starting: %v", failed.Load(), firstErr.Load())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("only %d of %d announced: %w", ap.seen.Load()-seen0, n, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	ramp := time.Since(start)
	loaded := b.rss()
	cpu0 := b.cpuTicks()
	t0 := time.Now()
	ids := make(chan string, 1024)
	var deciders sync.WaitGroup
	var decideErrs atomic.Int64
	for range 32 {
		deciders.Go(func() {
			for id := range ids {
				if err := b.decide(ctx, id); err != nil {
					decideErrs.Add(1)
				}
			}
		})
	}
	for _, tool := range tools {
		ids <- <-ap.of(tool)
	}
	close(ids)
	deciders.Wait()
	// A decided call that has not returned a minute later never will: it is
	// given up and counted lost.
	returned := make(chan struct{})
	go func() { calls.Wait(); close(returned) }()
	select {
	case <-returned:
	case <-time.After(time.Minute):
		cancelCalls()
		<-returned
	}
	drain := time.Since(t0)
	cpu1 := b.cpuTicks()
	fmt.Fprintf(tw, "blocked request_approval calls\t%d waiting, %d decided, %d lost\tramp %s, all decided and returned in %s, %d decide errors\n",
		n, ok.Load(), int64(n)-ok.Load(), ramp.Round(time.Millisecond), drain.Round(time.Millisecond), decideErrs.Load())
	if cpu0 >= 0 && cpu1 >= 0 {
		fmt.Fprintf(tw, "  CPU per released call\thld %.2f ms\t\n", float64(cpu1-cpu0)*10/float64(n))
	}
	if base > 0 && loaded > 0 {
		fmt.Fprintf(tw, "hld process RSS\t%.0f MB loaded (%.0f MB idle)\t%.1f KB per waiter\n", float64(loaded)/1e6, float64(base)/1e6, float64(loaded-base)/float64(n)/1024)
	}
	if e := firstErr.Load(); e != nil {
		fmt.Fprintf(tw, "first failure\t%v\t\n", e)
	}
	return nil
}

// rss is hld's resident memory in bytes from /proc (0 without --pid).
func (b *bench) rss() int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", b.cfg.pid))
	if b.cfg.pid == 0 || err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// cpuTicks is hld's user + system CPU in clock ticks (1/100 s on Linux),
// -1 without --pid.
func (b *bench) cpuTicks() int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", b.cfg.pid))
	if b.cfg.pid == 0 || err != nil {
		return -1
	}
	// The fields after the command's closing parenthesis; utime and stime
	// are the 14th and 15th of the whole line.
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return u + k
}
