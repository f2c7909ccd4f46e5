package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The scenarios for a database with history in it (askd-bench seed):
// searches of the history, the inbox's first load, and the answer's
// latency while a --retain purge runs.

// get times one GET of path on the inbox side as the person, the body read
// whole, and returns its bytes as transferred (gzip when the server
// compresses it, as a browser asks).
func (b *bench) get(ctx context.Context, path string) (time.Duration, int, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.cfg.inboxURL+path, nil)
	req.Header.Set("Authorization", "Bearer "+b.cfg.humanToken)
	// Asked for by hand, the transport leaves the body compressed: its
	// length is what crossed the wire.
	req.Header.Set("Accept-Encoding", "gzip")
	t0 := time.Now()
	resp, err := b.http.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	el := time.Since(t0)
	if err != nil {
		return 0, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return el, int(n), nil
}

// historySearch times GET /api/history (a page of 50, and the count of
// every match, as the history page asks) for words, a session and a person
// the seed wrote, --history-n of each, one after another. A common word is
// one of seedWords; a rare one is the number in one ask's title (the
// prefix of no other, for asks 100,000 and on).
func (b *bench) historySearch(ctx context.Context, tw io.Writer) error {
	n := b.cfg.historyN
	series := []struct {
		name  string
		query func(i int) string
	}{
		{"a common word (1 ask in 13)", func(i int) string { return "q=" + seedWords[i%len(seedWords)] }},
		{"a rare word (an ask's number)", func(i int) string { return fmt.Sprintf("q=%d", 100000+(i*7919)%(b.cfg.sessions*20-100000)) }},
		{"a session", func(i int) string { return fmt.Sprintf("session=seed-s-%d", (i*7919)%b.cfg.sessions) }},
		{"a person", func(i int) string { return fmt.Sprintf("by=person-%d", i%20+1) }},
		{"a word and a person", func(i int) string {
			return fmt.Sprintf("q=%s&by=person-%d", seedWords[i%len(seedWords)], i%20+1)
		}},
	}
	for _, s := range series {
		var times []time.Duration
		total := 0
		for i := range n {
			el, bytes, err := b.get(ctx, "/api/history?limit=50&"+s.query(i))
			if err != nil {
				return err
			}
			times = append(times, el)
			total += bytes
		}
		fmt.Fprintf(tw, "history search, %s\t%s\tn=%d, %.1f KB a page\n", s.name, percentiles(times), n, float64(total)/float64(n)/1024)
	}
	return nil
}

// inboxLoad fetches, --inbox-n times, what the inbox page asks the server
// for on its first load besides its own files (the first pages of pending
// asks, sessions and Recent, the counts, and who the person is), as the
// page does: the pending asks first, the rest at once beside them. It
// reports the bytes transferred and the time to the first page of pending
// asks (what the first cards are built from) and to the last response.
func (b *bench) inboxLoad(ctx context.Context, tw io.Writer) error {
	first := []string{"/api/me", "/api/asks?status=pending&limit=50", "/api/sessions?limit=50", "/api/history?limit=20",
		"/api/asks?status=pending&limit=1&cursor=&mine=true"}
	var cards, all []time.Duration
	bytes := 0
	for range b.cfg.inboxN {
		t0 := time.Now()
		var wg sync.WaitGroup
		var mu sync.Mutex
		var firstErr error
		for i, path := range first {
			wg.Go(func() {
				_, n, err := b.get(ctx, path)
				mu.Lock()
				defer mu.Unlock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				bytes += n
				if i == 1 {
					cards = append(cards, time.Since(t0))
				}
			})
		}
		wg.Wait()
		if firstErr != nil {
			return firstErr
		}
		all = append(all, time.Since(t0))
	}
	fmt.Fprintf(tw, "inbox first load: the first page of pending asks\t%s\tn=%d, %.1f KB of JSON a load (gzip), besides the page's own files\n",
		percentiles(cards), b.cfg.inboxN, float64(bytes)/float64(b.cfg.inboxN)/1024)
	fmt.Fprintf(tw, "inbox first load: every response\t%s\t\n", percentiles(all))
	return nil
}

// purgeLatency times answers, one after another, each --pause after its
// ask was made, as the latency scenario does, while askd serve --retain
// purges the seeded asks (it starts a second after the server) and after:
// during is from the first answer to the last fall of the settled asks'
// count (GET /api/history's total, read every --purge-watch), idle the
// --latency-n answers after the count has stood still for a few reads. It
// counts the asks answered during the run that are gone: none should be.
func (b *bench) purgeLatency(ctx context.Context, tw io.Writer) error {
	sess := fmt.Sprintf("bench-purge-%d", time.Now().UnixNano())
	cs, err := b.mcpSession(ctx, sess)
	if err != nil {
		return err
	}
	defer cs.Close()
	events, err := b.human().Events(ctx, -1)
	if err != nil {
		return err
	}
	start, err := b.historyTotal(ctx)
	if err != nil {
		return err
	}
	var settled atomic.Int64
	settled.Store(int64(start))
	pollCtx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	go func() {
		for pollCtx.Err() == nil {
			if n, err := b.historyTotal(pollCtx); err == nil {
				settled.Store(int64(n))
			}
			select {
			case <-pollCtx.Done():
			case <-time.After(b.cfg.purgeWatch):
			}
		}
	}()
	type sample struct {
		at   time.Time
		took time.Duration
	}
	var samples []sample
	var ids []int64
	deadline := time.Now().Add(b.cfg.purgeMax)
	first, lastFall, last := time.Now(), time.Time{}, int64(start)
	quiet := 5*b.cfg.purgeWatch + time.Second
	idle := 0
	for i := 0; idle < b.cfg.latencyN; i++ {
		if time.Now().After(deadline) {
			return fmt.Errorf("the purge was not over within --purge-max %s", b.cfg.purgeMax)
		}
		text := fmt.Sprintf("purge %d?", i)
		done := make(chan time.Time, 1)
		var res *mcp.CallToolResult
		var cerr error
		go func() {
			res, cerr = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_user_question", Arguments: questionArgs(text)})
			done <- time.Now()
		}()
		id, err := waitCreated(ctx, events, sess)
		if err != nil {
			return err
		}
		time.Sleep(b.cfg.pause)
		t0 := time.Now()
		if err := b.answer(ctx, id, text); err != nil {
			return err
		}
		t1 := <-done
		if cerr != nil || !answered(res, text) {
			return fmt.Errorf("call %d did not return the answer: %v", i, cerr)
		}
		ids = append(ids, id)
		samples = append(samples, sample{at: t0, took: t1.Sub(t0)})
		if now := settled.Load(); now < last {
			lastFall, last = time.Now(), now
		}
		if !lastFall.IsZero() && time.Since(lastFall) > quiet {
			idle++
		}
	}
	stopPoll()
	var during, after []time.Duration
	for _, s := range samples {
		switch {
		case s.at.Before(lastFall):
			during = append(during, s.took)
		case s.at.After(lastFall.Add(quiet)):
			after = append(after, s.took)
		}
	}
	lost := 0
	for _, id := range ids {
		if _, err := b.human().Show(ctx, id); err != nil {
			lost++
		}
	}
	fmt.Fprintf(tw, "answer -> ask_user_question returns, during the purge\t%s\tn=%d, pause %s; settled asks %d -> %d in %s\n",
		percentiles(during), len(during), b.cfg.pause, start, last, lastFall.Sub(first).Round(time.Second))
	fmt.Fprintf(tw, "answer -> ask_user_question returns, after it (idle)\t%s\tn=%d; %d of the %d asks answered in the run lost\n",
		percentiles(after), len(after), lost, len(ids))
	return nil
}

// historyTotal is the count of settled asks (GET /api/history's
// Askd-Total).
func (b *bench) historyTotal(ctx context.Context) (int, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.cfg.inboxURL+"/api/history?limit=1", nil)
	req.Header.Set("Authorization", "Bearer "+b.cfg.humanToken)
	resp, err := b.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	var n int
	_, err = fmt.Sscan(resp.Header.Get("Askd-Total"), &n)
	return n, err
}
