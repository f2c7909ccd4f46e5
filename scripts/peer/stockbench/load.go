package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// throughput runs create + answer cycles with concurrent agents, each its
// own session and MCP client, the same cycle on both servers: the waiting
// request_approval call, its id off the person's stream, the answer, the
// call's return (hld has no other way to make an approval).
func (b *bench) throughput(ctx context.Context, tw io.Writer) error {
	for _, agents := range b.cfg.agents {
		run := nowNano()
		clients := make([]*mcp.ClientSession, agents)
		for g := range clients {
			sess, err := b.side.newSession(ctx, b.person)
			if err != nil {
				return err
			}
			if clients[g], err = b.connect(ctx, sess); err != nil {
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
		// as if the server had no such race (hld has one; askd none).
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
					key := fmt.Sprintf("tp_%d_%d_%d", run, g, i)
					t := time.Now()
					if err := b.cycle(ctx, cs, key); errors.Is(err, errLost) {
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
		fmt.Fprintf(tw, "create+answer cycles (request_approval), %d agents\t%.0f/s\t%d cycles in %s, %d errors, %d answers that never reached their call (given up after %s, their time left out)\n",
			agents, rate, cycles.Load(), el.Round(time.Millisecond), errs.Load(), lost.Load(), lostAfter)
		if n := cycles.Load(); n > 0 && cpu0 >= 0 && cpu1 >= 0 {
			fmt.Fprintf(tw, "  server CPU per cycle, %d agents\t%.2f ms\t\n", agents, float64(cpu1-cpu0)*10/float64(n))
		}
		if e := firstErr.Load(); e != nil {
			fmt.Fprintf(tw, "  first error\t%v\t\n", e)
		}
	}
	return nil
}

// cycle is one waiting request_approval, answered as soon as it is seen.
func (b *bench) cycle(ctx context.Context, cs *mcp.ClientSession, key string) error {
	const tool = "request_approval"
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(cctx, b.side.call(tool, key))
		if err == nil && !b.side.returned(tool, key, res) {
			err = fmt.Errorf("%s did not return the answer", key)
		}
		done <- err
	}()
	id, err := b.asks.id(cctx, key, 30*time.Second)
	if err != nil {
		cancel()
		<-done
		return err
	}
	if err := b.answer(ctx, tool, key, id); err != nil {
		cancel()
		<-done
		return err
	}
	// hld announces an approval before its MCP handler listens for the
	// decision; a decision in that gap is stored but never reaches the call.
	select {
	case err := <-done:
		return err
	case <-time.After(lostAfter):
		cancel()
		<-done
		return errLost
	}
}

// lostAfter is how long an answered call may take to return before it
// counts as lost (a p99 here is a few milliseconds).
const lostAfter = 100 * time.Millisecond

var errLost = errors.New("answered, but the call did not return")

// waiterLoad holds --waiters waiting calls at once (20 a session: askd's
// default pending limit per session), reads the server's RSS, then answers
// them all, --releasers at a time, and times until every call has returned.
// askd's calls are ask_user_question (no grace ends them during a long
// ramp); hld's request_approval, its only waiting tool.
func (b *bench) waiterLoad(ctx context.Context, tw io.Writer) error {
	n := b.cfg.waiters
	tool := b.side.tools()[len(b.side.tools())-1]
	base := b.rss()
	run := nowNano()
	const perSession = 20
	var calls sync.WaitGroup
	var ok, failed, lastOK atomic.Int64
	var firstErr atomic.Value
	cctx, cancelCalls := context.WithCancel(ctx)
	defer cancelCalls()
	ids := make([]chan string, 0, n)
	keys := make([]string, 0, n)
	seen0 := b.asks.seen.Load()
	start := time.Now()
	for s := 0; s*perSession < n; s++ {
		sess, err := b.side.newSession(ctx, b.person)
		if err != nil {
			return err
		}
		cs, err := b.connect(ctx, sess)
		if err != nil {
			return fmt.Errorf("mcp connect %d: %w", s, err)
		}
		defer cs.Close()
		for k := 0; k < perSession && s*perSession+k < n; k++ {
			key := fmt.Sprintf("wait_%d_%d", run, s*perSession+k)
			keys = append(keys, key)
			ids = append(ids, b.asks.of(key))
			calls.Go(func() {
				res, err := cs.CallTool(cctx, b.side.call(tool, key))
				if err == nil && b.side.returned(tool, key, res) {
					ok.Add(1)
					lastOK.Store(time.Now().UnixNano())
					return
				}
				failed.Add(1)
				if err != nil {
					firstErr.CompareAndSwap(nil, err.Error())
				} else {
					firstErr.CompareAndSwap(nil, key+": not the answer")
				}
			})
		}
	}
	for b.asks.seen.Load()-seen0 < int64(n) {
		if failed.Load() > 0 {
			return fmt.Errorf("%d calls failed while starting: %v", failed.Load(), firstErr.Load())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("only %d of %d announced: %w", b.asks.seen.Load()-seen0, n, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	ramp := time.Since(start)
	loaded := b.rss()
	cpu0 := b.cpuTicks()
	t0 := time.Now()
	todo := make(chan int, 1024)
	var releasers sync.WaitGroup
	var answerErrs atomic.Int64
	for range b.cfg.releasers {
		releasers.Go(func() {
			for i := range todo {
				if err := b.answer(ctx, tool, keys[i], <-ids[i]); err != nil {
					answerErrs.Add(1)
				}
			}
		})
	}
	for i := range keys {
		todo <- i
	}
	close(todo)
	releasers.Wait()
	// An answered call that has not returned a minute later never will.
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
	for _, k := range keys {
		b.asks.forget(k)
	}
	// A lost call (hld's race) is given up after a minute: the release's
	// time is also given to the last call that returned.
	last := time.Duration(lastOK.Load() - t0.UnixNano())
	fmt.Fprintf(tw, "waiting %s calls\t%d waiting, %d answered, %d lost\tramp %s, all answered (%d at a time) and returned in %s (the last answered call returned at %s), %d answer errors\n",
		tool, n, ok.Load(), int64(n)-ok.Load(), ramp.Round(time.Millisecond), b.cfg.releasers, drain.Round(time.Millisecond), last.Round(time.Millisecond), answerErrs.Load())
	if cpu0 >= 0 && cpu1 >= 0 {
		fmt.Fprintf(tw, "  server CPU per released call\t%.2f ms\t\n", float64(cpu1-cpu0)*10/float64(n))
	}
	if base > 0 && loaded > 0 {
		fmt.Fprintf(tw, "server RSS\t%.0f MB loaded (%.0f MB idle)\t%.1f KB per waiter\n", float64(loaded)/1e6, float64(base)/1e6, float64(loaded-base)/float64(n)/1024)
	}
	if e := firstErr.Load(); e != nil {
		fmt.Fprintf(tw, "first failure\t%v\t\n", e)
	}
	return nil
}

// rss is the server's resident memory in bytes from /proc (0 without --pid).
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

// cpuTicks is the server's user + system CPU in clock ticks (1/100 s on
// Linux), -1 without --pid.
func (b *bench) cpuTicks() int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", b.cfg.pid))
	if b.cfg.pid == 0 || err != nil {
		return -1
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return u + k
}
