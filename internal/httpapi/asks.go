package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// MaxWait bounds ?wait= on any request.
const MaxWait = time.Hour

func (s *Server) listAsks(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	if c.Role == askd.RoleAgent {
		// An agent sees what check_ask {} lists: its session's pending asks,
		// and the settled ones it had not been told of (told now).
		asks, err := s.app.CheckAll(r.Context(), c)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{"asks": nonNil(asks)})
		return nil
	}
	q := r.URL.Query()
	f := askd.AskFilter{Agent: q.Get("agent"), Session: q.Get("session"), Status: askd.Status(q.Get("status")), Kind: askd.Kind(q.Get("kind"))}
	switch f.Status {
	case "", askd.StatusPending, askd.StatusAnswered, askd.StatusCancelled:
	default:
		return askd.Errorf(askd.EINVALID, "status: %q is not pending, answered or cancelled", f.Status)
	}
	if f.Kind != "" && !f.Kind.Valid() {
		return askd.Errorf(askd.EINVALID, "kind: %q is not a kind of ask", f.Kind)
	}
	mine, err := mineParam(q.Get("mine"))
	if err != nil {
		return err
	}
	if q.Has("cursor") {
		return s.pendingPage(w, r, c, f, mine)
	}
	// No cursor: the list as it always was, for clients from before pages.
	if f.Limit, err = intParam(q.Get("limit"), "limit", 1000); err != nil {
		return err
	}
	before, err := intParam(q.Get("before"), "before", 1<<62)
	if err != nil {
		return err
	}
	f.Before = int64(before)
	asks, err := s.app.List(r.Context(), c, f, mine)
	if err != nil {
		return err
	}
	writeJSONCompressed(w, r, http.StatusOK, map[string]any{"asks": nonNil(asks)})
	return nil
}

func (s *Server) getAsk(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	id, err := askID(r)
	if err != nil {
		return err
	}
	wait, err := waitParam(r)
	if err != nil {
		return err
	}
	untold, err := keepUntoldParam(r)
	if err != nil {
		return err
	}
	var a *askd.Ask
	if wait > 0 {
		if a, err = s.app.AwaitOutcome(r.Context(), c, app.Wait{Ask: id, Mode: app.AwaitCheck, Until: time.Now().Add(wait), KeepUntold: untold}, nil); err != nil {
			return lookAgainOverHTTP(err)
		}
	}
	if c.Role == askd.RoleAgent {
		switch {
		case untold && a == nil:
			a, err = s.app.Get(r.Context(), c, id)
		case !untold:
			// An agent reading its settled ask has been told of it.
			a, err = s.app.Check(r.Context(), c, id)
		}
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, a)
		return nil
	}
	if a == nil {
		if a, err = s.app.Get(r.Context(), c, id); err != nil {
			return err
		}
	}
	hist, err := s.app.History(r.Context(), c, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, askWithHistory{a, nonNil(hist)})
	return nil
}

// askWithHistory is an ask's JSON with a "history" member added.
type askWithHistory struct {
	ask     *askd.Ask
	history []*askd.Event
}

func (h askWithHistory) MarshalJSON() ([]byte, error) {
	a, err := json.Marshal(h.ask)
	if err != nil {
		return nil, err
	}
	hist, err := json.Marshal(h.history)
	if err != nil {
		return nil, err
	}
	out := append(a[:len(a)-1:len(a)-1], `,"history":`...)
	out = append(out, hist...)
	return append(out, '}'), nil
}

func (s *Server) createAsk(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	wait, err := waitParam(r)
	if err != nil {
		return err
	}
	untold, err := keepUntoldParam(r)
	if err != nil {
		return err
	}
	var in askd.AskInput
	if err := decode(w, r, &in); err != nil {
		return err
	}
	a, err := s.app.Create(r.Context(), c, &in, app.CreateOptions{})
	if err != nil {
		return err
	}
	noteAsk(r.Context(), a.ID)
	// An approval's grace_seconds is its grace window, as over MCP; ?wait=
	// waits on any kind. Past it the ask is returned pending, and its outcome
	// is told later (Stop hook, check_ask, the session's channel) unless the
	// agent checks first; a client that goes away meanwhile cuts it off. An
	// ask settled already (the same question again, answered while the agent
	// was cut off) is this reply's outcome, told by it, unless keep_untold
	// leaves that to the agent (POST /api/asks/{id}/told).
	graced := a.Kind == askd.KindApproval && in.GraceSeconds != nil
	if graced && wait == 0 {
		wait = s.app.Grace(in.GraceSeconds)
	}
	if wait > 0 || graced || !a.Pending() {
		if a, err = s.app.AwaitOutcome(r.Context(), c, app.Wait{Ask: a.ID, Mode: app.AwaitGrace, Until: time.Now().Add(wait), KeepUntold: untold}, nil); err != nil {
			return lookAgainOverHTTP(err)
		}
	}
	writeJSON(w, http.StatusCreated, a)
	return nil
}

// markTold is POST /api/asks/{id}/told, body {} or none: the agent handed
// on the outcome it read with keep_untold. 200 with the ask told; 409 with
// the ask when it is pending, or was told already (this mark was not the
// one).
func (s *Server) markTold(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	id, err := askID(r)
	if err != nil {
		return err
	}
	if err := decodeOptional(w, r, &struct{}{}); err != nil {
		return err
	}
	a, err := s.app.MarkTold(r.Context(), c, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (s *Server) answerAsk(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	id, err := askID(r)
	if err != nil {
		return err
	}
	var ans askd.Answer
	if err := decode(w, r, &ans); err != nil {
		return err
	}
	a, err := s.app.Answer(r.Context(), c, id, &ans)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (s *Server) deleteAsk(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	id, err := askID(r)
	if err != nil {
		return err
	}
	var a *askd.Ask
	if c.Role == askd.RoleAgent {
		a, err = s.app.Withdraw(r.Context(), c, id)
	} else {
		var body struct {
			Response string `json:"response"`
		}
		if err := decodeOptional(w, r, &body); err != nil {
			return err
		}
		a, err = s.app.Dismiss(r.Context(), c, id, body.Response)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (s *Server) snoozeAsk(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	id, err := askID(r)
	if err != nil {
		return err
	}
	var body struct {
		Until *time.Time `json:"until"`
		For   string     `json:"for"`
	}
	if err := decode(w, r, &body); err != nil {
		return err
	}
	var until time.Time
	switch {
	case body.Until != nil && body.For != "":
		return askd.Errorf(askd.EINVALID, "for: give either until or for, not both")
	case body.Until != nil:
		until = *body.Until
	case body.For != "":
		d, err := time.ParseDuration(body.For)
		if err != nil || d <= 0 {
			return askd.Errorf(askd.EINVALID, "for: %q is not a positive duration such as 2h or 30m", body.For)
		}
		until = time.Now().Add(d)
	default:
		return askd.Errorf(askd.EINVALID, "until: required (RFC 3339), or for (a duration such as 2h)")
	}
	a, err := s.app.Snooze(r.Context(), c, id, until)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// claimAsk is POST /api/asks/{id}/claim, body {} or none: "I'm on it".
func (s *Server) claimAsk(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	id, err := askID(r)
	if err != nil {
		return err
	}
	if err := decodeOptional(w, r, &struct{}{}); err != nil {
		return err
	}
	a, err := s.app.Claim(r.Context(), c, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// releaseAsk is DELETE /api/asks/{id}/claim: the claim lets go.
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

// lookAgainOverHTTP words a wait's end at shutdown (app.ShutdownError) for a
// plain HTTP client, which finds its answer with GET, or askd check from a
// terminal; the status stays 503. Other errors are returned as they are.
func lookAgainOverHTTP(err error) error {
	var sd *app.ShutdownError
	if !errors.As(err, &sd) {
		return err
	}
	return askd.Errorf(askd.EUNAVAILABLE, "server shutting down: GET /api/asks/%d again once it is back (askd check %d) for the answer", sd.Ask, sd.Ask)
}

func askID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, askd.Errorf(askd.EINVALID, "id: %q is not an ask id (a positive integer)", r.PathValue("id"))
	}
	noteAsk(r.Context(), id)
	return id, nil
}

// waitParam reads ?wait= as a duration ("30s", "10m") or whole seconds.
func waitParam(r *http.Request) (time.Duration, error) {
	return ParseWait(r.URL.Query().Get("wait"))
}

// ParseWait reads a wait as a duration ("30s", "10m") or whole seconds, from
// 0 to MaxWait.
func ParseWait(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		n, nerr := strconv.Atoi(v)
		if nerr != nil {
			return 0, askd.Errorf(askd.EINVALID, "wait: %q is not a duration such as 30s or 10m", v)
		}
		if n < 0 || n > int(MaxWait/time.Second) { // checked before multiplying, which would wrap
			return 0, askd.Errorf(askd.EINVALID, "wait: %d s, must be 0 to %d", n, int(MaxWait/time.Second))
		}
		d = time.Duration(n) * time.Second
	}
	if d < 0 || d > MaxWait {
		return 0, askd.Errorf(askd.EINVALID, "wait: %s, must be 0 to %s", d, MaxWait)
	}
	return d, nil
}

func intParam(v, name string, max int) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		return 0, askd.Errorf(askd.EINVALID, "%s: %q, must be an integer from 1 to %d", name, v, max)
	}
	return n, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// mineParam reads mine= (SPEC §10: only the asks routed to the caller, a
// team of theirs, or nobody): true or false, "" for false.
func mineParam(v string) (bool, error) { return boolParam("mine", v) }

// keepUntoldParam reads keep_untold=: true, and an agent's read of its
// settled ask does not tell it; the agent marks it told once it has handed
// the outcome on (POST /api/asks/{id}/told). A person's read never tells.
func keepUntoldParam(r *http.Request) (bool, error) {
	return boolParam("keep_untold", r.URL.Query().Get("keep_untold"))
}

// boolParam reads query parameter name's value v: true or false (1 or 0),
// "" for false.
func boolParam(name, v string) (bool, error) {
	switch v {
	case "", "false", "0":
		return false, nil
	case "true", "1":
		return true, nil
	}
	return false, askd.Errorf(askd.EINVALID, "%s: %q is not true or false", name, v)
}
