package app

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/askd-dev/askd"
)

// Sizes of a page of a paged list: the inbox's pending asks, its sessions,
// the history. A page is a bounded read however large the inbox grows.
const (
	DefaultPageSize = 50
	MaxPageSize     = 200
)

// Bounds of a history search's text.
const (
	MaxSearchChars = 500
	MaxSearchWords = 16
)

// PageRequest is which page of a list to return.
type PageRequest struct {
	Cursor string // "": the first page; else the Next of the page before
	Limit  int    // 1 to MaxPageSize
}

// Page is one page of a list: its items, how many items the whole list
// holds now, and the cursor of the next page ("" when this is the last).
// A page starts after the last item of the page before, so items that
// arrive or go between pages move no other: none is skipped or repeated.
type Page[T any] struct {
	Items []T
	Total int
	Next  string
}

// checkLimit refuses a page size out of bounds (EMISMATCH, as a cursor
// that is not one: the parameters of a page that cannot be given).
func checkLimit(limit int) error {
	if limit < 1 || limit > MaxPageSize {
		return askd.Errorf(askd.EMISMATCH, "limit: %d, must be from 1 to %d per page", limit, MaxPageSize)
	}
	return nil
}

// fill makes p from items, read with one more than limit to see whether a
// next page exists, whose cursor key gives.
func fill[T any](p *Page[T], items []T, limit int, key func(T) string) {
	if len(items) > limit {
		items = items[:limit]
		p.Next = key(items[limit-1])
	}
	if items == nil {
		items = []T{}
	}
	p.Items = items
}

// PendingPage returns one page of the inbox's pending asks matching q, in
// urgency order (askd.UrgencyKey: asks with a deadline first, soonest first,
// then the others newest first), and how many pending asks match q in all
// (humans only); with mine, only c's (List). q.After and q.Limit come from p. Snoozed asks are in their
// place, as List has them: the inbox shows them apart. A cursor that is not
// one of this list's is EMISMATCH.
func (s *Service) PendingPage(ctx context.Context, c askd.Caller, q askd.PendingQuery, p PageRequest, mine bool) (*Page[*askd.Ask], error) {
	if err := human(c); err != nil {
		return nil, err
	}
	if err := checkLimit(p.Limit); err != nil {
		return nil, err
	}
	after, err := pendingAfter(p.Cursor)
	if err != nil {
		return nil, err
	}
	q.After, q.Limit = after, p.Limit+1
	s.expireBeforeListing(ctx)
	var page Page[*askd.Ask]
	err = s.store.View(ctx, func(tx askd.Tx) error {
		if mine {
			var err error
			if q.Routes, err = routes(ctx, tx, c); err != nil {
				return err
			}
		}
		asks, err := tx.Asks.PendingAsks(ctx, q)
		if err != nil {
			return err
		}
		fill(&page, asks, p.Limit, func(a *askd.Ask) string { return pendingCursor(askd.UrgencyKeyOf(a)) })
		page.Total, err = tx.Asks.CountAsks(ctx, askd.AskFilter{Status: askd.StatusPending, Agent: q.Agent, Session: q.Session, Kind: q.Kind, Routes: q.Routes})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &page, nil
}

// SessionsPage returns one page of the sessions that have asks, by agent
// then name as Sessions lists them, with their pending counts, and how many
// sessions have asks (humans only); with mine, of c's asks (Sessions).
func (s *Service) SessionsPage(ctx context.Context, c askd.Caller, p PageRequest, mine bool) (*Page[*askd.SessionInfo], error) {
	if err := human(c); err != nil {
		return nil, err
	}
	if err := checkLimit(p.Limit); err != nil {
		return nil, err
	}
	after, err := sessionsAfter(p.Cursor)
	if err != nil {
		return nil, err
	}
	var page Page[*askd.SessionInfo]
	err = s.store.View(ctx, func(tx askd.Tx) error {
		q := askd.SessionQuery{After: after, Limit: p.Limit + 1}
		if mine {
			var err error
			if q.Routes, err = routes(ctx, tx, c); err != nil {
				return err
			}
		}
		ss, err := tx.Sessions.Sessions(ctx, q)
		if err != nil {
			return err
		}
		fill(&page, ss, p.Limit, func(si *askd.SessionInfo) string {
			return sessionsCursor(askd.SessionKey{Agent: si.Agent, Name: si.Name})
		})
		page.Total, err = tx.Sessions.CountSessionsWithAsks(ctx, q.Routes)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &page, nil
}

// HistoryFilter is what the history is searched for. Zero fields match
// everything.
type HistoryFilter struct {
	// Text holds the words every ask found has (askd.SearchQuery.Words: in
	// its text or its answer; the last word also as the start of one).
	Text    string
	Agent   string
	Session string
	Kind    askd.Kind
	Outcome askd.Outcome
	By      string // who settled the ask
}

// check refuses a filter that can match nothing for being malformed,
// naming the query parameter.
func (f HistoryFilter) check() error {
	if n := utf8.RuneCountInString(f.Text); n > MaxSearchChars {
		return askd.Errorf(askd.EINVALID, "q: %d characters, at most %d", n, MaxSearchChars)
	}
	if n := len(askd.SearchWords(f.Text)); n > MaxSearchWords {
		return askd.Errorf(askd.EINVALID, "q: %d words, at most %d", n, MaxSearchWords)
	}
	if f.Kind != "" && !f.Kind.Valid() {
		return askd.Errorf(askd.EINVALID, "kind: %q is not a kind of ask", f.Kind)
	}
	if f.Outcome != "" && !f.Outcome.Valid() {
		names := make([]string, len(askd.Outcomes))
		for i, o := range askd.Outcomes {
			names[i] = string(o)
		}
		return askd.Errorf(askd.EINVALID, "outcome: %q is not one of %s", f.Outcome, strings.Join(names, ", "))
	}
	return nil
}

// SearchHistory returns one page of the settled asks matching f, most
// recently settled first, and how many match in all (humans only). Bad
// filters are EINVALID; a bad page (limit, cursor) EMISMATCH.
func (s *Service) SearchHistory(ctx context.Context, c askd.Caller, f HistoryFilter, p PageRequest) (*Page[*askd.Ask], error) {
	if err := human(c); err != nil {
		return nil, err
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	if err := checkLimit(p.Limit); err != nil {
		return nil, err
	}
	after, err := historyAfter(p.Cursor)
	if err != nil {
		return nil, err
	}
	q := askd.SearchQuery{Words: askd.SearchWords(f.Text), Agent: f.Agent, Session: f.Session, Kind: f.Kind,
		Outcome: f.Outcome, SettledBy: f.By}
	var page Page[*askd.Ask]
	err = s.store.View(ctx, func(tx askd.Tx) error {
		n, err := tx.Asks.CountSearch(ctx, q)
		if err != nil {
			return err
		}
		page.Total = n
		q.After, q.Limit = after, p.Limit+1
		asks, err := tx.Asks.SearchAsks(ctx, q)
		if err != nil {
			return err
		}
		fill(&page, asks, p.Limit, func(a *askd.Ask) string { return historyCursor(askd.SettledKeyOf(a)) })
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &page, nil
}
