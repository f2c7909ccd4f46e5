package app

import (
	"context"
	"time"

	"github.com/askd-dev/askd"
)

type actorKey struct{}

// WithActor returns ctx naming who changes configuration through it, for
// the audit trail: the CLI working on the database says "cli:" and its
// operating-system user.
func WithActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

// actorOf is who changes configuration through ctx: the actor WithActor
// named, else the authenticated caller, else askd itself (bootstrap).
func actorOf(ctx context.Context) string {
	if a, ok := ctx.Value(actorKey{}).(string); ok && a != "" {
		return a
	}
	if c, ok := CallerFrom(ctx); ok && c.Name != "" {
		return c.Name
	}
	return "askd"
}

// RecordConfig appends a change of configuration to the audit chain in tx:
// action is one of askd's Config actions (policies use askd.ConfigPolicy
// and a suffix), fields what changed, the actor who ctx says.
func RecordConfig(ctx context.Context, tx askd.Tx, action string, fields map[string]any) error {
	return tx.Audit.AddConfigEvent(ctx, &askd.Event{Action: action, Actor: actorOf(ctx), At: time.Now(), Note: askd.ConfigNote(fields)})
}

// RevokeToken revokes token name; ENOTFOUND when there is none.
func RevokeToken(ctx context.Context, store askd.Store, name string) error {
	return store.Update(ctx, func(tx askd.Tx) error {
		if err := tx.Tokens.RevokeToken(ctx, name); err != nil {
			return err
		}
		return RecordConfig(ctx, tx, askd.ConfigTokenRevoked, map[string]any{"name": name})
	})
}

// AuditPage is one page of the audit trail (admins only): the history rows
// with from <= at < until (zero times leave an end open), oldest first, each
// with its hash; the next page starts after the last row's id.
func (s *Service) AuditPage(ctx context.Context, c askd.Caller, from, until time.Time, p PageRequest) (*Page[askd.AuditRow], error) {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return nil, err
	}
	if err := checkLimit(p.Limit); err != nil {
		return nil, err
	}
	var after int64
	if p.Cursor != "" {
		if err := decodeCursor(p.Cursor, cursorAudit, &after); err != nil {
			return nil, err
		}
	}
	var page Page[askd.AuditRow]
	err := s.store.View(ctx, func(tx askd.Tx) error {
		n, err := tx.Audit.CountAudit(ctx, from, until)
		if err != nil {
			return err
		}
		page.Total = n
		rows, err := tx.Audit.AuditRows(ctx, after, from, until, p.Limit+1)
		if err != nil {
			return err
		}
		fill(&page, rows, p.Limit, func(r askd.AuditRow) string { return encodeCursor(cursorAudit, r.ID) })
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &page, nil
}
