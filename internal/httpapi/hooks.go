package httpapi

import "net/http"

// claudeHook answers Claude Code's http hooks (SPEC §4).
func (s *Server) claudeHook(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{})
}
