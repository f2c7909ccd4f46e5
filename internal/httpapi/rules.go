package httpapi

import (
	"net/http"
	"strconv"

	"github.com/askd-dev/askd"
)

// Rules (app/rules.go): people only. An agent token gets 403 on every path
// before its body is read: an agent never makes, changes or sees rules.

func (s *Server) listRules(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	q := r.URL.Query()
	rules, err := s.app.Rules(r.Context(), c, q.Get("agent"), q.Get("session"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"rules": nonNil(rules)})
	return nil
}

func (s *Server) createRule(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	var in askd.RuleInput
	if err := decode(w, r, &in); err != nil {
		return err
	}
	rule, err := s.app.CreateRule(r.Context(), c, &in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, rule)
	return nil
}

func (s *Server) changeRule(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	id, err := ruleID(r)
	if err != nil {
		return err
	}
	var life askd.RuleLife
	if err := decode(w, r, &life); err != nil {
		return err
	}
	rule, err := s.app.ChangeRule(r.Context(), c, id, life)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rule)
	return nil
}

func (s *Server) revokeRule(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	id, err := ruleID(r)
	if err != nil {
		return err
	}
	rule, err := s.app.RevokeRule(r.Context(), c, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rule)
	return nil
}

func ruleID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, askd.Errorf(askd.EINVALID, "id: %q is not a rule id (a positive integer)", r.PathValue("id"))
	}
	return id, nil
}
