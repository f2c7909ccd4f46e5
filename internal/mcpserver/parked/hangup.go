package parked

import (
	"net"
)

// # Hearing that a client went away
//
// A parked call learns that its client left (closed the stream, died, or
// sent anything, which it has no business to on this response) from its
// connection becoming readable. On Linux one goroutine hears it for every
// parked call, through one epoll set (hangup_linux.go); elsewhere, and for a
// connection that does not give up its descriptor, each call has a goroutine
// blocked reading its connection. That goroutine's stack was 4.3 KB of the
// 7.4 KB each of 10,000 waiting calls held.

// clientsLeaving watches the connections of every parked call of the
// process, whichever handler parked it.
var clientsLeaving hangups

// watchAlone calls gone once conn has something to read or is closed, from
// a goroutine of its own that reads one byte; the connection's close ends it.
func watchAlone(conn net.Conn, gone func()) (stop func()) {
	go func() {
		var b [1]byte
		_, _ = conn.Read(b[:])
		gone()
	}()
	return func() {}
}
