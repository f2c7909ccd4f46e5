package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/askd-dev/askd"
)

// healthz answers as long as the process runs.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 when the service can work (app.Service.Ready: the
// database answers and takes writes; with the server's own check, the change
// listener too), 503 with the cause otherwise: "error" says it in words,
// "code" is its askd code (full, read_only, corrupt, busy, unavailable).
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	var err error
	if s.opts.Ready != nil {
		err = s.opts.Ready(r.WithContext(ctx))
	} else {
		err = s.app.Ready(ctx)
	}
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "error": err.Error(), "code": askd.ErrorCode(err)})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}
