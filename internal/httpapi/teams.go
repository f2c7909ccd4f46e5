package httpapi

import (
	"net/http"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// Teams (SPEC §10), for admins: the app checks the role, as it checks every
// change (app/teams.go; askd team makes the same calls). A team's
// escalate_after is a duration such as "10m" in and out; "" or absent is
// none.

// teamBody is POST /api/teams's body.
type teamBody struct {
	Name          string   `json:"name"`
	Members       []string `json:"members"`
	EscalateAfter string   `json:"escalate_after"`
	EscalateTo    string   `json:"escalate_to"`
}

// escalationBody is PATCH /api/teams/{name}'s body: the team's whole
// escalation (both absent: none).
type escalationBody struct {
	EscalateAfter string `json:"escalate_after"`
	EscalateTo    string `json:"escalate_to"`
}

func (s *Server) listTeams(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	teams, err := s.app.Teams(r.Context(), c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"teams": nonNil(teams)})
	return nil
}

func (s *Server) createTeam(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	var body teamBody
	if err := decode(w, r, &body); err != nil {
		return err
	}
	after, err := escalateAfter(body.EscalateAfter)
	if err != nil {
		return err
	}
	t, err := s.app.CreateTeam(r.Context(), c, app.TeamInput{Name: body.Name, Members: body.Members, EscalateAfter: after, EscalateTo: body.EscalateTo})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, t)
	return nil
}

// changeTeam is PATCH /api/teams/{name}: it sets the team's escalation.
func (s *Server) changeTeam(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	var body escalationBody
	if err := decode(w, r, &body); err != nil {
		return err
	}
	after, err := escalateAfter(body.EscalateAfter)
	if err != nil {
		return err
	}
	t, err := s.app.SetEscalation(r.Context(), c, r.PathValue("name"), after, body.EscalateTo)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

func (s *Server) deleteTeam(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	name := r.PathValue("name")
	if err := s.app.DeleteTeam(r.Context(), c, name); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"deleted": name})
	return nil
}

func (s *Server) addMembers(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	var body struct {
		People []string `json:"people"`
	}
	if err := decode(w, r, &body); err != nil {
		return err
	}
	t, err := s.app.AddMembers(r.Context(), c, r.PathValue("name"), body.People)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

func (s *Server) removeMember(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	t, err := s.app.RemoveMembers(r.Context(), c, r.PathValue("name"), r.PathValue("person"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// escalateAfter reads a team's escalate_after: a duration such as "10m";
// "" is none. Its bounds are the app's.
func escalateAfter(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, askd.Errorf(askd.EINVALID, "escalate_after: %q is not a duration such as 10m or 1h", v)
	}
	return d, nil
}

// myNotify is GET /api/me/notify: where the person hears of the asks routed
// to them, {"ntfy"?, "webhook"?, "webhook_secret"?: "******"}; a secret is
// never shown.
func (s *Server) myNotify(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	n, err := s.app.MyNotify(r.Context(), c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, n.Redacted())
	return nil
}

// setMyNotify is PUT /api/me/notify: the whole setting, replaced; {} is
// none. The reply is the setting as stored, its secret hidden.
func (s *Server) setMyNotify(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	var n askd.PersonNotify
	if err := decode(w, r, &n); err != nil {
		return err
	}
	out, err := s.app.SetMyNotify(r.Context(), c, n)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out.Redacted())
	return nil
}
