package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// events streams the event log as Server-Sent Events: each event has its id
// and a type (ask.created, ask.updated, ask.settled, ask.told) and carries the
// ask as it was. Last-Event-ID (header, or ?last_event_id=) resumes from the
// stored history without gaps; without it the stream starts with new events.
// ?agent=, ?session= and ?mine=true narrow it. A comment line is sent every
// heartbeat so proxies and clients see life.
func (s *Server) events(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	cursor := int64(-1)
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = r.URL.Query().Get("last_event_id")
	}
	if last != "" {
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n < 0 {
			return askd.Errorf(askd.EINVALID, "Last-Event-ID: %q is not an event id", last)
		}
		cursor = n
	}
	// ?agent= and ?session= scope the stream as they scope GET /api/asks: a
	// session is the agent token's (SPEC §1), so both name one.
	agent, session := r.URL.Query().Get("agent"), r.URL.Query().Get("session")
	// ?mine=true: only events of asks routed to the caller, a team of
	// theirs, or nobody (SPEC §10).
	var mine *app.Mine
	if m, err := mineParam(r.URL.Query().Get("mine")); err != nil {
		return err
	} else if m {
		if mine, err = s.app.Mine(r.Context(), c); err != nil {
			return err
		}
	}
	stream, err := s.app.Subscribe(r.Context(), cursor)
	if err != nil {
		return err
	}
	defer stream.Close()
	revoked, release := s.app.Hold(c) // the stream ends when c's token is revoked
	defer release()
	s.app.Metrics.SSEClients.Inc()
	defer s.app.Metrics.SSEClients.Dec()

	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream lives as long as the client wants
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: 1000\n: connected at event %d\n\n", stream.Cursor())
	if err := rc.Flush(); err != nil {
		return nil
	}
	beat := 15 * time.Second
	if s.opts.Heartbeat > 0 {
		beat = s.opts.Heartbeat
	}
	ticker := time.NewTicker(beat)
	defer ticker.Stop()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-s.app.Closing():
			// Shutting down: end the stream so the server's Shutdown does not
			// wait on it; the client reconnects with Last-Event-ID.
			return nil
		case <-revoked:
			// The client reconnects (EventSource does) and is refused.
			_ = rc.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = fmt.Fprint(w, ": token revoked\n\n")
			_ = rc.Flush()
			return nil
		case <-ticker.C:
			// Writes to a stalled client block only this goroutine.
			_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil {
				return nil
			}
			if rc.Flush() != nil {
				return nil
			}
			_ = rc.SetWriteDeadline(time.Time{})
		case <-stream.Ready:
			evs, err := stream.Next(r.Context())
			if err != nil {
				return nil
			}
			_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
			for _, e := range evs {
				if session != "" && e.Session != session || agent != "" && (e.Ask == nil || e.Ask.Agent != agent) ||
					mine != nil && !mine.Has(r.Context(), e.Ask) {
					continue
				}
				if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.ID, askd.EventType(e.Action), e.JSON); err != nil {
					return nil
				}
			}
			if rc.Flush() != nil {
				return nil
			}
			_ = rc.SetWriteDeadline(time.Time{})
		}
	}
}
