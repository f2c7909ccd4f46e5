package httpapi

import (
	"context"
	"net/http"
	"time"
)

// healthz answers as long as the process runs.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 when the database (and, on PostgreSQL, the change
// listener) is reachable, 503 with the reason otherwise.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	var err error
	if s.opts.Ready != nil {
		err = s.opts.Ready(r.WithContext(ctx))
	} else {
		err = s.app.Store().Ping(ctx)
	}
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}
