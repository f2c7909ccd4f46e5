package httpapi

import (
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
// bearer token, the inbox cookie, the sign-in form or link) counts against
// the address it came from, IPv4 addresses one by one and IPv6 ones by /64.
// An address may fail failBurst times at once, then once per failEvery
// (10 a minute). Past that, its requests are refused with 429 and
// Retry-After without their token being checked, so guessing learns nothing
// and costs no database read. Tokens this server has already verified (in
// use, see app.KnownToken) are still checked and served as usual, so an
// agent or inbox in use at the same address is not slowed by someone else's
// failures there. Behind a reverse proxy every client has the proxy's
// address; askd does not trust X-Forwarded-For.
const (
	failBurst = 10
	failEvery = 6 * time.Second
	// maxAddrs bounds the addresses remembered; past it, new addresses
	// share one more record (they are throttled together).
	maxAddrs = 10000
)

// throttle remembers failed authentications per client address, as a
// generic cell rate: each failure pushes the address's due time failEvery
// further; an address failBurst failures ahead is refused.
type throttle struct {
	now   func() time.Time
	mu    sync.Mutex
	due   map[string]time.Time
	swept time.Time    // the last sweep
	n     atomic.Int32 // len(due), so that requests look only when some address failed
}

func newThrottle(now func() time.Time) *throttle {
	return &throttle{now: now, due: map[string]time.Time{}}
}

// refused reports whether addr is over its limit and for how long it stays so.
func (t *throttle) refused(addr string) (time.Duration, bool) {
	if t.n.Load() == 0 {
		return 0, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.over(addr, t.now())
}

// failed counts a failed authentication from addr.
func (t *throttle) failed(addr string) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	due, ok := t.due[addr]
	if !ok && len(t.due) >= maxAddrs {
		if now.Sub(t.swept) >= failEvery { // not on every failure: a sweep reads them all
			t.swept = now
			t.sweep(now)
		}
		if len(t.due) >= maxAddrs {
			addr = "" // the shared record
			due = t.due[addr]
		}
	}
	if due.Before(now) {
		due = now
	}
	t.due[addr] = due.Add(failEvery)
	t.n.Store(int32(len(t.due)))
}

// over: an address whose due time is more than failBurst-1 steps ahead has
// used its burst; it may try again when it is no more.
func (t *throttle) over(addr string, now time.Time) (time.Duration, bool) {
	due, ok := t.due[addr]
	if !ok {
		if len(t.due) >= maxAddrs {
			due = t.due[""] // not remembered: the shared record
		}
	}
	ahead := due.Sub(now) - (failBurst-1)*failEvery
	if ahead <= 0 {
		return 0, false
	}
	return ahead, true
}

// sweep forgets addresses whose failures have all been forgiven.
func (t *throttle) sweep(now time.Time) {
	for a, due := range t.due {
		if !due.After(now) {
			delete(t.due, a)
		}
	}
	t.n.Store(int32(len(t.due)))
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
