package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
)

// CreateAnswerLink stores l; ENOTFOUND when its ask or human token does not
// exist, ECONFLICT when its hash is stored already.
func (t *tx) CreateAnswerLink(ctx context.Context, l *askd.AnswerLink) error {
	if err := t.mustWrite("create answer link"); err != nil {
		return err
	}
	answer, err := json.Marshal(&l.Answer)
	if err != nil {
		return fmt.Errorf("create answer link: %w", err)
	}
	_, err = t.tx.Exec(t.ctx(ctx), `
		INSERT INTO answer_links (hash, ask_id, revision, label, answer, human, used_at, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		l.Hash, l.AskID, l.Revision, l.Label, string(answer), l.Human, l.UsedAt, l.CreatedAt, l.ExpiresAt)
	switch {
	case foreignKeyViolation(err):
		return askd.Errorf(askd.ENOTFOUND, "no ask %d, or no token named %q", l.AskID, l.Human)
	case uniqueViolation(err):
		return askd.Errorf(askd.ECONFLICT, "an answer link with the same hash exists")
	}
	return translate(err, "create answer link")
}

// AnswerLink returns the answer link with the hash; ENOTFOUND when there is
// none.
func (t *tx) AnswerLink(ctx context.Context, hash string) (*askd.AnswerLink, error) {
	l := &askd.AnswerLink{Hash: hash}
	var answer []byte
	err := t.tx.QueryRow(t.ctx(ctx), `
		SELECT ask_id, revision, label, answer, human, used_at, created_at, expires_at
		FROM answer_links WHERE hash = $1`, hash).
		Scan(&l.AskID, &l.Revision, &l.Label, &answer, &l.Human, &l.UsedAt, &l.CreatedAt, &l.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, askd.Errorf(askd.ENOTFOUND, "answer link not found")
	}
	if err != nil {
		return nil, translate(err, "read answer link")
	}
	if err := json.Unmarshal(answer, &l.Answer); err != nil {
		return nil, fmt.Errorf("read answer link: answer: %w", err)
	}
	if l.UsedAt != nil {
		u := l.UsedAt.UTC()
		l.UsedAt = &u
	}
	l.CreatedAt, l.ExpiresAt = l.CreatedAt.UTC(), l.ExpiresAt.UTC()
	return l, nil
}

// UseAnswerLink marks the link used at at; ECONFLICT when it was used
// already, ENOTFOUND when there is none. A concurrent user waits on the
// row's lock and then finds it used.
func (t *tx) UseAnswerLink(ctx context.Context, hash string, at time.Time) error {
	if err := t.mustWrite("use answer link"); err != nil {
		return err
	}
	tag, err := t.tx.Exec(t.ctx(ctx), "UPDATE answer_links SET used_at = $2 WHERE hash = $1 AND used_at IS NULL", hash, at)
	if err != nil {
		return translate(err, "use answer link")
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var one int
	err = t.tx.QueryRow(t.ctx(ctx), "SELECT 1 FROM answer_links WHERE hash = $1", hash).Scan(&one)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return askd.Errorf(askd.ENOTFOUND, "answer link not found")
	case err != nil:
		return translate(err, "use answer link")
	}
	return askd.Errorf(askd.ECONFLICT, "this answer link was used already")
}

// DeleteExpiredAnswerLinks removes the links that expired before before; it
// returns how many went.
func (t *tx) DeleteExpiredAnswerLinks(ctx context.Context, before time.Time) (int, error) {
	if err := t.mustWrite("delete expired answer links"); err != nil {
		return 0, err
	}
	tag, err := t.tx.Exec(t.ctx(ctx), "DELETE FROM answer_links WHERE expires_at < $1", before)
	if err != nil {
		return 0, translate(err, "delete expired answer links")
	}
	return int(tag.RowsAffected()), nil
}
