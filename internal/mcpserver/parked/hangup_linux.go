//go:build linux

package parked

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"syscall"
)

// hangups hears, on one goroutine, that the clients of parked calls went
// away (see hangup.go): each connection is in one epoll set, once, for
// input or its peer's hang-up (EPOLLONESHOT: the call ends at the first).
// The set holds the connection's descriptor apart from Go's own poller, and
// nothing reads it. stop takes it out before the connection closes, so a
// descriptor number used again is never mistaken for the call's.
type hangups struct {
	start sync.Once
	epfd  int // -1 when epoll is not to be had: each call watches alone

	mu     sync.Mutex
	broken bool // the set's goroutine stopped: each call watches alone
	next   uint64
	calls  map[uint64]hangup
}

// hangup is one watched connection.
type hangup struct {
	conn net.Conn
	gone func()
}

// hangupEvents: readable (bytes, or the end of the stream), the peer's
// hang-up, and once only. Errors and hang-ups are always reported.
const hangupEvents = syscall.EPOLLIN | syscall.EPOLLRDHUP | syscall.EPOLLONESHOT

// watch calls gone, once and from the set's goroutine, when conn has
// something to read or its peer hung up; stop, called before conn closes,
// ends the watch (gone may still have been called).
func (h *hangups) watch(conn net.Conn, gone func()) (stop func()) {
	h.start.Do(h.open)
	sc, ok := descriptor(conn)
	if h.epfd < 0 || !ok {
		return watchAlone(conn, gone)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return watchAlone(conn, gone)
	}
	h.mu.Lock()
	if h.broken {
		h.mu.Unlock()
		return watchAlone(conn, gone)
	}
	h.next++
	id := h.next
	h.calls[id] = hangup{conn, gone}
	h.mu.Unlock()
	var cerr error
	err = rc.Control(func(fd uintptr) {
		ev := syscall.EpollEvent{Events: hangupEvents, Fd: int32(id), Pad: int32(id >> 32)}
		cerr = syscall.EpollCtl(h.epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev)
	})
	if err = errors.Join(err, cerr); err != nil {
		h.forget(id)
		return watchAlone(conn, gone)
	}
	return func() {
		h.forget(id)
		_ = rc.Control(func(fd uintptr) {
			_ = syscall.EpollCtl(h.epfd, syscall.EPOLL_CTL_DEL, int(fd), nil)
		})
	}
}

// descriptor is the connection under conn's wrappers (each with NetConn)
// that has a file descriptor. A TLS connection (whose NetConn is its TCP
// connection) is not watched this way: its bytes are not the client's.
func descriptor(conn net.Conn) (syscall.Conn, bool) {
	for {
		if _, tls := conn.(interface{ ConnectionState() tls.ConnectionState }); tls {
			return nil, false
		}
		if sc, ok := conn.(syscall.Conn); ok {
			return sc, true
		}
		w, ok := conn.(interface{ NetConn() net.Conn })
		if !ok {
			return nil, false
		}
		conn = w.NetConn()
	}
}

// forget takes id's watch out, returning its gone if it was there.
func (h *hangups) forget(id uint64) func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.calls[id]
	delete(h.calls, id)
	return c.gone
}

// open makes the epoll set and starts its goroutine, for the life of the
// process (clientsLeaving).
func (h *hangups) open() {
	h.calls = map[uint64]hangup{}
	var err error
	if h.epfd, err = syscall.EpollCreate1(syscall.EPOLL_CLOEXEC); err != nil {
		h.epfd = -1
		return
	}
	go h.run()
}

func (h *hangups) run() {
	evs := make([]syscall.EpollEvent, 256)
	for {
		n, err := syscall.EpollWait(h.epfd, evs, -1)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			// Not expected of a valid set: from now on every call watches
			// alone, those in the set too.
			h.mu.Lock()
			h.broken = true
			calls := h.calls
			h.calls = map[uint64]hangup{}
			h.mu.Unlock()
			for _, c := range calls {
				watchAlone(c.conn, c.gone)
			}
			return
		}
		for _, ev := range evs[:n] {
			if fn := h.forget(uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32); fn != nil {
				fn()
			}
		}
	}
}
