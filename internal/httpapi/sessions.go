package httpapi

import (
	"net/http"

	"github.com/askd-dev/askd"
)

// channelBody is PUT /api/sessions/{name}/channel's body and reply: the
// channel, with the session it is set for in the reply.
type channelBody struct {
	Session string `json:"session,omitempty"`
	askd.Channel
}

// setChannel sets how a session's agent is told of settled asks (SPEC §5):
// {"type":"hook"}, {"type":"webhook","url":...,"secret":...} or
// {"type":"command","name":"<operator template>"} (argv is refused: programs
// come only from the operator). Agent tokens only (launchers). The reply
// is the channel as stored, its secret hidden.
func (s *Server) setChannel(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	var ch askd.Channel
	if err := decode(w, r, &ch); err != nil {
		return err
	}
	name := r.PathValue("name")
	if err := s.app.SetChannel(r.Context(), c, name, &ch); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, channelBody{Session: name, Channel: ch.Redacted()})
	return nil
}
