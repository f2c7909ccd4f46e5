package httpapi

import (
	"net/http"

	"github.com/askd-dev/askd"
)

// Web Push (app/push.go): the VAPID public key, and the push subscription
// of the caller's browser session. Subscriptions are made only with the
// inbox cookie: one belongs to a browser session and goes when it ends.

// pushKey is GET /api/push/key: {"public_key": "<base64url>"}, what the
// page subscribes with; 404 when Web Push is off.
func (s *Server) pushKey(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	key, err := s.app.PushKey(r.Context(), c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"public_key": key})
	return nil
}

// subscribePush is POST /api/push/subscriptions, body {"endpoint": ...,
// "keys": {"p256dh": ..., "auth": ...}}: this browser session's
// subscription, stored (201) or replaced.
func (s *Server) subscribePush(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	var p askd.PushSubscription
	if err := decode(w, r, &p); err != nil {
		return err
	}
	if err := s.app.SubscribePush(r.Context(), c, &p); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]string{"endpoint": p.Endpoint})
	return nil
}

// unsubscribePush is DELETE /api/push/subscriptions, body {"endpoint":
// ...}: 204, or 404 when this browser session has no such subscription.
func (s *Server) unsubscribePush(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	var body struct {
		Endpoint string `json:"endpoint"`
	}
	if err := decode(w, r, &body); err != nil {
		return err
	}
	if err := s.app.UnsubscribePush(r.Context(), c, body.Endpoint); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
