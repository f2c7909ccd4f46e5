package httpapi

import (
	"net/http"

	"github.com/askd-dev/askd"
)

// claimAsk is POST /api/asks/{id}/claim (body {} or none): "I'm on it"
// (SPEC §10). The reply is the ask; 409 with it when someone else holds
// the claim or it is settled.
func (s *Server) claimAsk(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	id, err := askID(r)
	if err != nil {
		return err
	}
	var body struct{}
	if err := decodeOptional(w, r, &body); err != nil {
		return err
	}
	a, err := s.app.Claim(r.Context(), c, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// releaseAsk is DELETE /api/asks/{id}/claim: the claim is let go.
func (s *Server) releaseAsk(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	id, err := askID(r)
	if err != nil {
		return err
	}
	a, err := s.app.Release(r.Context(), c, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}
