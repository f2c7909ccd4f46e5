package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// Headers of a page of a list.
const (
	// HeaderTotal is how many items the whole list holds, on every page.
	HeaderTotal = "Askd-Total"
	// HeaderNextCursor is the cursor= of the next page; absent on the last.
	HeaderNextCursor = "Askd-Next-Cursor"
)

// pendingPage is GET /api/asks?cursor=: one page of pending asks in urgency
// order; the first with cursor= empty. f holds the request's filters.
func (s *Server) pendingPage(w http.ResponseWriter, r *http.Request, c askd.Caller, f askd.AskFilter, mine bool) error {
	q := r.URL.Query()
	switch {
	case f.Status != "" && f.Status != askd.StatusPending:
		return askd.Errorf(askd.EMISMATCH, "cursor: pages hold pending asks (status=pending); settled ones page through /api/history")
	case q.Has("before"):
		return askd.Errorf(askd.EMISMATCH, "before: not with cursor, which says where the page starts")
	}
	p, err := pageRequest(q)
	if err != nil {
		return err
	}
	page, err := s.app.PendingPage(r.Context(), c, askd.PendingQuery{Agent: f.Agent, Session: f.Session, Kind: f.Kind}, p, mine)
	if err != nil {
		return err
	}
	writePage(w, r, "asks", page)
	return nil
}

// listSessions is GET /api/sessions: every session with asks, or with
// limit= or cursor= one page of them; with mine=true, of the caller's asks.
func (s *Server) listSessions(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	q := r.URL.Query()
	mine, err := mineParam(q.Get("mine"))
	if err != nil {
		return err
	}
	if !q.Has("limit") && !q.Has("cursor") {
		ss, err := s.app.Sessions(r.Context(), c, mine)
		if err != nil {
			return err
		}
		writePage(w, r, "sessions", &app.Page[*askd.SessionInfo]{Items: ss, Total: len(ss)})
		return nil
	}
	p, err := pageRequest(q)
	if err != nil {
		return err
	}
	page, err := s.app.SessionsPage(r.Context(), c, p, mine)
	if err != nil {
		return err
	}
	writePage(w, r, "sessions", page)
	return nil
}

// searchHistory is GET /api/history: one page of settled asks, most
// recently settled first, found by q= and the filters.
func (s *Server) searchHistory(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	q := r.URL.Query()
	p, err := pageRequest(q)
	if err != nil {
		return err
	}
	f := app.HistoryFilter{Text: q.Get("q"), Agent: q.Get("agent"), Session: q.Get("session"),
		Kind: askd.Kind(q.Get("kind")), Outcome: askd.Outcome(q.Get("outcome")), By: q.Get("by")}
	page, err := s.app.SearchHistory(r.Context(), c, f, p)
	if err != nil {
		return err
	}
	writePage(w, r, "asks", page)
	return nil
}

// audit is GET /api/audit (admins): one page of the audit trail, oldest
// first, the rows at or after since= and before until= (RFC 3339).
func (s *Server) audit(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	q := r.URL.Query()
	p, err := pageRequest(q)
	if err != nil {
		return err
	}
	var bounds [2]time.Time
	for i, name := range []string{"since", "until"} {
		if v := q.Get(name); v != "" {
			if bounds[i], err = time.Parse(time.RFC3339Nano, v); err != nil {
				return askd.Errorf(askd.EMISMATCH, "%s: %q is not an RFC 3339 time", name, v)
			}
		}
	}
	page, err := s.app.AuditPage(r.Context(), c, bounds[0], bounds[1], p)
	if err != nil {
		return err
	}
	writePage(w, r, "rows", page)
	return nil
}

// pageRequest reads cursor= and limit= (app.DefaultPageSize when absent).
func pageRequest(q url.Values) (app.PageRequest, error) {
	p := app.PageRequest{Cursor: q.Get("cursor"), Limit: app.DefaultPageSize}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return p, askd.Errorf(askd.EMISMATCH, "limit: %q, must be a whole number from 1 to %d per page", v, app.MaxPageSize)
		}
		p.Limit = n
	}
	return p, nil
}

// writePage writes a page as {"<name>": [items]}, the shape of the lists
// before pages, compressed when the client takes gzip, with Askd-Total and,
// unless it is the last page, Askd-Next-Cursor.
func writePage[T any](w http.ResponseWriter, r *http.Request, name string, p *app.Page[T]) {
	h := w.Header()
	h.Set(HeaderTotal, strconv.Itoa(p.Total))
	if p.Next != "" {
		h.Set(HeaderNextCursor, p.Next)
	}
	writeJSONCompressed(w, r, http.StatusOK, map[string]any{name: nonNil(p.Items)})
}
