package httpapi

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// step is one event of a throttle test, in order: the clock moves (or is
// set), an address fails n times, or an address is checked. Addresses are
// RemoteAddr forms, keyed by clientAddr as the server does.
type step struct {
	move  time.Duration // the clock moves by this
	set   time.Time     // the clock is set to this, when not zero
	fail  string        // this address fails
	n     int           // that many times (1 when 0)
	flood int           // this many new addresses fail once each
	check string        // this address is checked
	over  bool          // and is refused
	after time.Duration // for this long (when over)
}

func TestThrottle(t *testing.T) {
	start := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	const a, b = "192.0.2.1:4000", "198.51.100.7:5000"
	tests := []struct {
		name     string
		start    time.Time
		burst    int           // failBurst when 0
		every    time.Duration // failEvery when 0
		maxAddrs int           // maxAddrs when 0
		steps    []step
	}{
		{"an address never seen, nothing failed", start, 0, 0, 0, []step{
			{check: a},
		}},
		{"an address never seen, another failed once", start, 0, 0, 0, []step{
			{fail: a},
			{check: b},
			{move: time.Hour, check: b},
		}},
		{"an address never seen, another over its limit", start, 0, 0, 0, []step{
			{fail: a, n: 50},
			{check: a, over: true, after: failEvery},
			{check: b},
		}},
		{"first failure", start, 0, 0, 0, []step{
			{fail: a},
			{check: a},
		}},
		{"burst exhausted", start, 0, 0, 0, []step{
			{fail: a, n: failBurst - 1},
			{check: a},
			{fail: a},
			{check: a, over: true, after: failEvery},
			{move: time.Second, check: a, over: true, after: failEvery - time.Second},
		}},
		{"refill", start, 0, 0, 0, []step{
			{fail: a, n: failBurst},
			{move: failEvery, check: a}, // one more is forgiven
			{fail: a},
			{check: a, over: true, after: failEvery},
			{move: 3 * failEvery, check: a},
			{fail: a, n: 3},
			{check: a, over: true, after: failEvery},
			{move: failBurst * failEvery, check: a}, // all forgiven: forgotten
			{fail: a, n: failBurst - 1},
			{check: a},
		}},
		{"failures past the burst add nothing", start, 0, 0, 0, []step{
			{fail: a, n: 100000},
			{check: a, over: true, after: failEvery},
			{move: failEvery, check: a},
		}},
		{"many addresses", start, 0, 0, 0, []step{
			{flood: 5000},
			{fail: a, n: failBurst},
			{fail: b, n: failBurst - 1},
			{check: a, over: true, after: failEvery},
			{check: b},
			{check: "203.0.113.9:1"},
			{check: "10.0.0.1:1"}, // one of the flood, one failure
		}},
		{"IPv6 by /64", start, 0, 0, 0, []step{
			{fail: "[2001:db8:1:2::1]:1", n: failBurst / 2},
			{fail: "[2001:db8:1:2:ffff:ffff:ffff:ffff]:2", n: failBurst / 2},
			{check: "[2001:db8:1:2::99]:3", over: true, after: failEvery},
			{check: "[2001:db8:1:3::1]:1"},
			{check: "[::ffff:192.0.2.1]:1"},
		}},
		{"IPv4 in IPv6 is the IPv4 address", start, 0, 0, 0, []step{
			{fail: "[::ffff:192.0.2.1]:1", n: failBurst},
			{check: a, over: true, after: failEvery},
		}},
		{"the cap: a flood takes the place of its own kind", start, 0, 0, 100, []step{
			{fail: a, n: failBurst},
			{fail: b, n: 3},
			{flood: 10000},
			{check: a, over: true, after: failEvery},
			{check: "203.0.113.9:1"},
			{check: "10.0.0.1:1"},
			{move: failEvery, check: a},
			{fail: a},
			{check: a, over: true, after: failEvery},
		}},
		{"the cap: a flood of bursts forgets the soonest forgiven", start, 0, 0, 2, []step{
			{fail: a, n: failBurst},
			{move: time.Second, fail: b, n: failBurst},
			{fail: "203.0.113.9:1", n: failBurst}, // the oldest due, a's, makes room
			{check: a},
			{check: b, over: true, after: failEvery},
			{check: "203.0.113.9:1", over: true, after: failEvery},
		}},
		{"clock set back", start, 0, 0, 0, []step{
			{fail: a, n: failBurst},
			{move: -24 * time.Hour, check: a, over: true, after: failEvery},
			{move: failEvery, check: a},
			{check: b},
		}},
		{"clock set forward", start, 0, 0, 0, []step{
			{fail: a, n: failBurst},
			{set: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), check: a},
			{check: b},
		}},
		{"the zero time", time.Time{}, 0, 0, 0, []step{
			{check: a},
			{fail: a, n: failBurst},
			{check: a, over: true, after: failEvery},
			{check: b},
		}},
		{"the end of time", time.Unix(1<<63-1-62135596800, 0), 0, 0, 0, []step{
			{check: a},
			{fail: a, n: failBurst},
			{check: b},
		}},
		{"burst 1", start, 1, 0, 0, []step{
			{fail: a},
			{check: a, over: true, after: failEvery},
			{check: b},
		}},
		{"the longest step", start, 1, 1<<63 - 1, 0, []step{
			{fail: a, n: 3},
			{check: a, over: true, after: 1<<63 - 1},
			{check: b},
		}},
		{"the longest step, a burst whose span saturates", start, failBurst, 1<<63 - 1, 0, []step{
			{fail: a, n: 3},
			{check: a}, // (burst-1)·every saturates to the longest Duration, as does the clamp
			{check: b},
		}},
		{"the largest burst", start, 1<<63 - 1, time.Hour, 0, []step{
			{fail: a, n: 1000},
			{check: a},
			{check: b},
		}},
		{"no burst", start, -1, 0, 0, []step{
			{fail: a, n: 3},
			{check: a},
			{check: b},
		}},
		{"no step", start, 0, -time.Hour, 0, []step{
			{fail: a, n: 30},
			{check: a},
			{check: b},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := tt.start
			th := newThrottle(func() time.Time { return now })
			if tt.burst != 0 {
				th.burst = tt.burst
			}
			if tt.every != 0 {
				th.every = tt.every
			}
			if tt.maxAddrs != 0 {
				th.maxAddrs = tt.maxAddrs
			}
			flooded := 0
			for i, s := range tt.steps {
				if !s.set.IsZero() {
					now = s.set
				}
				now = now.Add(s.move)
				if s.fail != "" {
					for range max(1, s.n) {
						th.failed(key(s.fail))
					}
				}
				for range s.flood {
					th.failed(fmt.Sprintf("10.%d.%d.%d", flooded>>16&255, flooded>>8&255, flooded&255+1))
					flooded++
				}
				if s.check != "" {
					after, over := th.refused(key(s.check))
					if over != s.over || after != s.after {
						t.Fatalf("step %d: %s refused %v for %v, want %v for %v", i, s.check, over, after, s.over, s.after)
					}
				}
				if n := len(th.byAddr); n > th.maxAddrs || n != len(th.byDue) || int(th.n.Load()) != n {
					t.Fatalf("step %d: %d records, %d in due order, %d counted; at most %d", i, n, len(th.byDue), th.n.Load(), th.maxAddrs)
				}
			}
		})
	}
}

// The default cap holds: a flood of distinct addresses keeps maxAddrs
// records, however many there are.
func TestThrottleIsBounded(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	th := newThrottle(func() time.Time { return now })
	for i := range maxAddrs + 500 {
		th.failed(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
	}
	if n := len(th.byAddr); n != maxAddrs {
		t.Fatalf("%d records, want %d", n, maxAddrs)
	}
	if _, over := th.refused("192.0.2.1"); over {
		t.Fatal("an address past the bound is throttled")
	}
	// Once their failures are forgiven, addresses are forgotten.
	now = now.Add(time.Hour)
	th.failed("192.0.2.1")
	if _, ok := th.byAddr["192.0.2.1"]; !ok || len(th.byAddr) != 1 {
		t.Fatalf("after an hour %d addresses remembered, want the new one alone", len(th.byAddr))
	}
}

func key(remote string) string { return clientAddr(&http.Request{RemoteAddr: remote}) }

func TestClientAddr(t *testing.T) {
	tests := []struct{ name, remote, want string }{
		{"IPv4", "192.0.2.7:5555", "192.0.2.7"},
		{"IPv4 in IPv6", "[::ffff:192.0.2.7]:5555", "192.0.2.7"},
		{"IPv6 by /64", "[2001:db8:1:2:3:4:5:6]:5555", "2001:db8:1:2::/64"},
		{"loopback", "127.0.0.1:1", "127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := clientAddr(&http.Request{RemoteAddr: tt.remote}); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}
