package mcpserver

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// stream is where a parked call's messages go.
type stream interface {
	// send writes one message as a server-sent event.
	send(msg []byte) error
	// close ends the response.
	close()
}

// connStream writes server-sent events straight to a hijacked connection.
type connStream struct {
	mu      sync.Mutex
	conn    net.Conn
	unwatch func() // ends the watch for the client leaving (hangup.go)
	header  bool
}

// streamHeader starts a parked call's response: the connection is the
// call's alone, and closes after the result.
const streamHeader = "HTTP/1.1 200 OK\r\n" +
	"Content-Type: text/event-stream\r\n" +
	"Cache-Control: no-cache, no-store\r\n" +
	"X-Accel-Buffering: no\r\n" +
	"Connection: close\r\n\r\n"

// writeTimeout bounds each write to a parked call's client.
const writeTimeout = 10 * time.Second

func (s *connStream) send(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	buf := make([]byte, 0, len(streamHeader)+len(msg)+32)
	if !s.header {
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
	_, err := s.conn.Write(buf)
	return err
}

func (s *connStream) close() {
	s.unwatch()
	s.conn.Close()
}

// writerStream writes server-sent events through the ResponseWriter of a
// handler that waits for done.
type writerStream struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	header bool
	ended  bool
	done   chan struct{}
}

func (s *writerStream) send(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
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

func (s *writerStream) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.ended = true
		close(s.done)
	}
}

// appendEvent appends msg (one line of JSON) as a server-sent event.
func appendEvent(buf, msg []byte) []byte {
	buf = append(buf, "event: message\ndata: "...)
	buf = append(buf, msg...)
	return append(buf, "\n\n"...)
}
