package httpapi

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askd-dev/askd"
)

// Failed authentication is throttled per client address: a wrong token (a
// bearer token, the inbox cookie, the sign-in form or link, an answer link's
// code) counts against the address it came from, IPv4 addresses one by one
// and IPv6 ones by /64.
// An address may fail failBurst times at once, then once per failEvery
// (10 a minute). Past that, its requests are refused with 429 and
// Retry-After (never more than failEvery) without their token being checked,
// so guessing learns nothing and costs no database read. An address that has
// not failed, or whose failures are forgiven, is never refused. Tokens this
// server has already verified (in use, see app.KnownToken) are still checked
// and served as usual, so an agent or inbox in use at the same address is not
// slowed by someone else's failures there. Behind a reverse proxy every
// client has the proxy's address; askd does not trust X-Forwarded-For.
const (
	failBurst = 10
	failEvery = 6 * time.Second
	// maxAddrs bounds the addresses remembered. Past it, a new address's
	// first failure takes the place of the record nearest to being
	// forgiven, so a flood of addresses neither grows memory nor lends its
	// failures to anyone else.
	maxAddrs = 10000
)

// throttle remembers failed authentications per client address, as a
// generic cell rate: each failure moves the address's due time every
// further (from now at the latest); an address whose due time is more than
// burst-1 steps ahead is refused. Its arithmetic compares and adds times,
// which saturate, and never subtracts durations, which wrap.
type throttle struct {
	now      func() time.Time
	burst    int           // failures at once
	every    time.Duration // then one per every
	maxAddrs int           // records at most

	mu     sync.Mutex
	byAddr map[string]*failures
	byDue  dueOrder     // the same records, soonest forgiven first
	n      atomic.Int32 // len(byAddr), so that requests look only when some address failed
}

// failures is the record of one address.
type failures struct {
	addr string
	due  time.Time // when all its failures are forgiven; after now
	i    int       // its index in byDue
}

func newThrottle(now func() time.Time) *throttle {
	return &throttle{now: now, burst: failBurst, every: failEvery, maxAddrs: maxAddrs, byAddr: map[string]*failures{}}
}

// refused reports whether addr is over its limit and for how long it stays
// so. An address with no record is never refused.
func (t *throttle) refused(addr string) (time.Duration, bool) {
	if t.n.Load() == 0 {
		return 0, false
	}
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.forgive(now)
	f := t.byAddr[addr]
	if f == nil {
		return 0, false
	}
	t.clamp(f, now)
	// Over when due is past the burst's allowance: now + (burst-1)·every.
	allowed := now.Add(t.span(t.burst - 1))
	if !f.due.After(allowed) {
		return 0, false
	}
	return f.due.Sub(allowed), true
}

// failed counts a failed authentication from addr.
func (t *throttle) failed(addr string) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.forgive(now)
	f := t.byAddr[addr]
	if f == nil {
		if len(t.byDue) >= max(1, t.maxAddrs) {
			// The record nearest to being forgiven makes room: it is
			// the one that says least, and a flood of new addresses
			// (each one failure, so each soon forgiven) takes the place
			// of its own kind before that of an address that failed
			// often.
			t.drop(t.byDue[0])
		}
		f = &failures{addr: addr, due: now}
		t.byAddr[addr] = f
		heap.Push(&t.byDue, f)
	}
	if f.due.Before(now) {
		f.due = now
	}
	f.due = f.due.Add(t.every)
	t.clamp(f, now)
	heap.Fix(&t.byDue, f.i)
	t.n.Store(int32(len(t.byAddr)))
}

// clamp keeps f's due time within burst steps of now: failures past the
// burst (requests checked side by side, a known token since revoked) and a
// clock set back add nothing, so Retry-After is never more than every.
func (t *throttle) clamp(f *failures, now time.Time) {
	if limit := now.Add(t.span(t.burst)); f.due.After(limit) {
		f.due = limit
		heap.Fix(&t.byDue, f.i)
	}
}

// span is n steps of every, at most the longest Duration, 0 for n or every
// not above 0.
func (t *throttle) span(n int) time.Duration {
	if n <= 0 || t.every <= 0 {
		return 0
	}
	if t.every > math.MaxInt64/time.Duration(n) {
		return math.MaxInt64
	}
	return time.Duration(n) * t.every
}

// forgive forgets the addresses whose failures are all forgiven at now.
func (t *throttle) forgive(now time.Time) {
	for len(t.byDue) > 0 && !t.byDue[0].due.After(now) {
		t.drop(t.byDue[0])
	}
	t.n.Store(int32(len(t.byAddr)))
}

func (t *throttle) drop(f *failures) {
	heap.Remove(&t.byDue, f.i)
	delete(t.byAddr, f.addr)
}

// dueOrder is a heap of records by due time (container/heap).
type dueOrder []*failures

func (h dueOrder) Len() int           { return len(h) }
func (h dueOrder) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h dueOrder) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].i, h[j].i = i, j
}
func (h *dueOrder) Push(x any) {
	f := x.(*failures)
	f.i = len(*h)
	*h = append(*h, f)
}
func (h *dueOrder) Pop() any {
	old := *h
	f := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return f
}

// clientAddr is the throttle's key for r: the peer's IP address, or its /64
// for IPv6.
func clientAddr(r *http.Request) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	ip := ap.Addr().Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// throttled is the refusal of an address over its limit.
type throttled struct {
	err   *askd.Error // ELIMIT, naming the rule
	after time.Duration
}

func (e *throttled) Error() string { return e.err.Error() }
func (e *throttled) Unwrap() error { return e.err }

func errThrottled(after time.Duration) error {
	secs := retrySeconds(after)
	return &throttled{
		err: askd.Errorf(askd.ELIMIT, "too many failed authentications from this address: at most %d wrong tokens, then one every %v; try again in %d s",
			failBurst, failEvery, secs),
		after: after,
	}
}

// retrySeconds is d as Retry-After's whole seconds, at least 1.
func retrySeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// retryAfter sets Retry-After when err is a throttled refusal.
func retryAfter(w http.ResponseWriter, err error) {
	var e *throttled
	if errors.As(err, &e) {
		w.Header().Set("Retry-After", fmt.Sprint(retrySeconds(e.after)))
	}
}
