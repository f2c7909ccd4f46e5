package parked

import (
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/askd-dev/askd/internal/response"
)

// Stream is a parked call's response: server-sent events, written straight
// to the connection taken over, or (where it could not be) through the
// handler's ResponseWriter. Its methods may be called from any goroutine.
type Stream struct {
	lot  *Lot
	call Call

	mu     sync.Mutex
	header bool // the header was written (or its write tried)
	sent   bool // the status line reached the client
	ended  bool

	// On the connection taken over:
	conn    net.Conn
	unwatch func()              // ends the watch for the client leaving (hangup.go)
	line    response.AccessLine // the request's access line, or nil

	// Through the handler's ResponseWriter:
	w    http.ResponseWriter
	done chan struct{} // closed by Close: the handler returns
}

// statusLine and streamHeader start a parked call's response on its
// connection: the connection is the call's alone, and closes after the
// result.
const (
	statusLine   = "HTTP/1.1 200 OK\r\n"
	streamHeader = statusLine +
		"Content-Type: text/event-stream\r\n" +
		"Cache-Control: no-cache, no-store\r\n" +
		"X-Accel-Buffering: no\r\n" +
		"Connection: close\r\n\r\n"
)

// writeTimeout bounds each write to a parked call's client.
const writeTimeout = 10 * time.Second

// start sends the stream's header and lets the call run.
func (s *Stream) start() {
	if err := s.Send(nil); err != nil {
		s.call.Gone()
	}
	s.call.Start(s)
}

// Send writes msg, one line of JSON, as a server-sent event (nil: only the
// header, if not yet written). An error means the client went away.
func (s *Stream) Send(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return s.sendWriter(msg)
	}
	buf := make([]byte, 0, len(streamHeader)+len(msg)+32)
	header := !s.header
	if header {
		s.header = true
		buf = append(buf, streamHeader...)
	}
	if msg != nil {
		buf = appendEvent(buf, msg)
	}
	if len(buf) == 0 {
		return nil
	}
	_ = s.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	n, err := s.conn.Write(buf)
	if header && n >= len(statusLine) {
		s.sent = true
	}
	return err
}

func (s *Stream) sendWriter(msg []byte) error {
	if s.ended {
		return http.ErrHandlerTimeout
	}
	if !s.header {
		s.header = true
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache, no-store")
		h.Set("X-Accel-Buffering", "no")
		s.w.WriteHeader(http.StatusOK)
	}
	if msg != nil {
		if _, err := s.w.Write(appendEvent(nil, msg)); err != nil {
			return err
		}
	}
	return http.NewResponseController(s.w).Flush()
}

// Close ends the response (and closes the connection taken over), writes
// the request's access line, and takes the call out of its lot. Only the
// first Close counts.
func (s *Stream) Close() {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	status := 0 // what the access line says was sent
	if s.sent {
		status = http.StatusOK
	}
	s.mu.Unlock()
	if s.conn == nil {
		close(s.done)
	} else {
		s.unwatch()
		s.conn.Close()
		if s.line != nil {
			s.line.End(status)
		}
	}
	s.lot.remove(s.call)
}

// appendEvent appends msg (one line of JSON) as a server-sent event.
func appendEvent(buf, msg []byte) []byte {
	buf = append(buf, "event: message\ndata: "...)
	buf = append(buf, msg...)
	return append(buf, "\n\n"...)
}
