package httpapi

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

func TestThrottleIsBounded(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	th := newThrottle(func() time.Time { return now })
	for i := range maxAddrs + 500 {
		th.failed(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
	}
	if n := len(th.due); n > maxAddrs+1 {
		t.Fatalf("%d records, at most %d and the shared one", n, maxAddrs)
	}
	// The 500 addresses past the bound share one record: together they
	// have used its burst.
	if _, over := th.refused("192.0.2.1"); !over {
		t.Fatal("an address past the bound is not throttled with the shared record")
	}
	if _, over := th.refused("10.0.0.1"); over {
		t.Fatal("an address with one failure is throttled")
	}
	// Once their failures are forgiven, addresses are swept for new ones.
	now = now.Add(time.Hour)
	th.failed("192.0.2.1")
	if _, ok := th.due["192.0.2.1"]; !ok || len(th.due) != 1 {
		t.Fatalf("after an hour %d addresses remembered, want the new one alone", len(th.due))
	}
}

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
