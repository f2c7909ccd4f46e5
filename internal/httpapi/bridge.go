package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/askd-dev/askd"
)

// The channel bridge's routes (askd mcp --channel; app/bridge.go and
// app/relay.go hold the rules). Each acts on the session named in the path,
// which is the caller token's (SPEC §1): another token naming it names a
// session of its own.

// bridgeCaller is c asking in the session the path names.
func bridgeCaller(r *http.Request, c askd.Caller) (askd.Caller, error) {
	name := r.PathValue("name")
	if err := askd.ValidName("session", name); err != nil {
		return c, err
	}
	c.Session = name
	return c, nil
}

// channelDeliveries attaches a channel bridge to the session and streams its
// told texts as Server-Sent Events, each leased to this stream: "event:
// tell", id the delivery's key, data an askd.ChannelTell. The bridge
// reports each told (POST .../channel/told) once it has written it to
// Claude Code. A comment line is sent every heartbeat; the stream ends when
// the client goes, the server stops or the token is revoked.
func (s *Server) channelDeliveries(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	c, err := bridgeCaller(r, c)
	if err != nil {
		return err
	}
	att, err := s.app.Attach(r.Context(), c)
	if err != nil {
		return err
	}
	defer att.Close(context.WithoutCancel(r.Context()))

	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream lives as long as the bridge
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: 1000\n: attached to session %s\n\n", c.Session)
	if rc.Flush() != nil {
		return nil
	}
	beat := 15 * time.Second
	if s.opts.Heartbeat > 0 {
		beat = s.opts.Heartbeat
	}
	for {
		tells, err := att.Next(r.Context(), time.Now().Add(beat))
		if err != nil {
			if !errors.Is(err, r.Context().Err()) {
				_ = rc.SetWriteDeadline(time.Now().Add(time.Second))
				fmt.Fprintf(w, ": %s\n\n", askd.ErrorMessage(err))
				_ = rc.Flush()
			}
			return nil
		}
		// Writes to a stalled bridge block only this goroutine; its leases
		// run out and the texts go to another bridge or the Stop hook.
		_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if len(tells) == 0 {
			_, err = fmt.Fprint(w, ": heartbeat\n\n")
		}
		for _, t := range tells {
			data, _ := json.Marshal(t)
			if _, err = fmt.Fprintf(w, "id: %s\nevent: tell\ndata: %s\n\n", t.Key, data); err != nil {
				break
			}
		}
		if err != nil || rc.Flush() != nil {
			return nil
		}
		_ = rc.SetWriteDeadline(time.Time{})
	}
}

// toldBody is POST .../channel/told's body.
type toldBody struct {
	Key string `json:"key"`
}

// channelTold records that the bridge gave a told text to Claude Code; the
// reply is the ask as it now is.
func (s *Server) channelTold(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	c, err := bridgeCaller(r, c)
	if err != nil {
		return err
	}
	var in toldBody
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.Key == "" {
		return askd.Errorf(askd.EINVALID, "key: required, the told text's key (the event's id)")
	}
	a, err := s.app.ChannelTold(r.Context(), c, in.Key)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// relayPermission makes the inbox card of a permission prompt Claude Code
// relayed to the bridge (body: askd.PermissionRelay), or finds it again;
// the reply is the ask, perhaps answered already by a rule. The bridge
// waits for its decision with GET /api/asks/{id}?wait=.
func (s *Server) relayPermission(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	c, err := bridgeCaller(r, c)
	if err != nil {
		return err
	}
	var in askd.PermissionRelay
	if err := decode(w, r, &in); err != nil {
		return err
	}
	a, err := s.app.RelayPermission(r.Context(), c, &in)
	if err != nil {
		return err
	}
	noteAsk(r.Context(), a.ID)
	writeJSON(w, http.StatusOK, a)
	return nil
}

// closeBody is DELETE .../channel/permissions/{request_id}'s body.
type closeBody struct {
	Reason string `json:"reason"`
}

// closeRelay closes the card of a relayed prompt answered without the inbox:
// body {"reason": "terminal"} (answered in the terminal) or {"reason":
// "ended"} (the Claude Code session ended). The reply is the ask.
func (s *Server) closeRelay(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	c, err := bridgeCaller(r, c)
	if err != nil {
		return err
	}
	var in closeBody
	if err := decode(w, r, &in); err != nil {
		return err
	}
	a, err := s.app.CloseRelay(r.Context(), c, r.PathValue("request_id"), in.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}
