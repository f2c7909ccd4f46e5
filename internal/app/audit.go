package app

import (
	"context"
	"time"

	"github.com/askd-dev/askd"
)

// recordConfig appends a change of configuration that by made to the audit
// chain in tx: action is one of askd's Config actions (policies use
// askd.ConfigPolicy and a suffix), fields what changed; the row's actor is
// by's name.
func recordConfig(ctx context.Context, tx askd.Tx, by askd.Caller, action string, fields map[string]any) error {
	return tx.Audit.AddConfigEvent(ctx, &askd.Event{Action: action, Actor: by.Name, At: time.Now(), Note: askd.ConfigNote(fields)})
}

// AuditChain returns the whole audit trail (admins only), oldest first,
// for an export or a verification of the chain: every history row, as
// stored, with its hash.
func (s *Service) AuditChain(ctx context.Context, c askd.Caller) ([]askd.AuditRow, error) {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return nil, err
	}
	var rows []askd.AuditRow
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		rows, err = tx.Audit.AuditRows(ctx, 0, time.Time{}, time.Time{}, 0)
		return err
	})
	return rows, err
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
