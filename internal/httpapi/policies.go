package httpapi

import (
	"net/http"
	"strconv"

	"github.com/askd-dev/askd"
)

// Policies (app/policies.go, SPEC §11): admins only; an agent token gets
// 403 before its body is read.

func (s *Server) listPolicies(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	ps, err := s.app.Policies(r.Context(), c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"policies": nonNil(ps)})
	return nil
}

func (s *Server) createPolicy(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	var in askd.PolicyInput
	if err := decode(w, r, &in); err != nil {
		return err
	}
	p, err := s.app.CreatePolicy(r.Context(), c, &in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, p)
	return nil
}

func (s *Server) revokePolicy(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return askd.Errorf(askd.EINVALID, "id: %q is not a policy id (a positive integer)", r.PathValue("id"))
	}
	if err := s.app.RevokePolicy(r.Context(), c, id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]int64{"revoked": id})
	return nil
}
