package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

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
	_, err = t.tx.ExecContext(ctx, `
		INSERT INTO answer_links (hash, ask_id, revision, label, answer, human, used_at, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		l.Hash, l.AskID, l.Revision, l.Label, string(answer), l.Human, nullMicros(l.UsedAt), micros(l.CreatedAt), micros(l.ExpiresAt))
	return translate(err, "create answer link", says{
		missing: fmt.Sprintf("no ask %d, or no token named %q", l.AskID, l.Human),
		taken:   "an answer link with the same hash exists",
	})
}

// AnswerLink returns the answer link with the hash; ENOTFOUND when there is
// none.
func (t *tx) AnswerLink(ctx context.Context, hash string) (*askd.AnswerLink, error) {
	l := &askd.AnswerLink{Hash: hash}
	var (
		answer           string
		used             sql.NullInt64
		created, expires int64
	)
	err := t.tx.QueryRowContext(ctx, `
		SELECT ask_id, revision, label, answer, human, used_at, created_at, expires_at
		FROM answer_links WHERE hash = ?`, hash).
		Scan(&l.AskID, &l.Revision, &l.Label, &answer, &l.Human, &used, &created, &expires)
	if err != nil {
		return nil, translate(err, "read answer link", says{notFound: "answer link not found"})
	}
	if err := json.Unmarshal([]byte(answer), &l.Answer); err != nil {
		return nil, fmt.Errorf("read answer link: answer: %w", err)
	}
	l.UsedAt, l.CreatedAt, l.ExpiresAt = fromNullMicros(used), fromMicros(created), fromMicros(expires)
	return l, nil
}

// UseAnswerLink marks the link used at at; ECONFLICT when it was used
// already, ENOTFOUND when there is none. Write transactions are exclusive,
// so one user wins.
func (t *tx) UseAnswerLink(ctx context.Context, hash string, at time.Time) error {
	if err := t.mustWrite("use answer link"); err != nil {
		return err
	}
	var used sql.NullInt64
	err := t.tx.QueryRowContext(ctx, "SELECT used_at FROM answer_links WHERE hash = ?", hash).Scan(&used)
	if err != nil {
		return translate(err, "use answer link", says{notFound: "answer link not found"})
	}
	if used.Valid {
		return askd.Errorf(askd.ECONFLICT, "this answer link was used already")
	}
	if _, err := t.tx.ExecContext(ctx, "UPDATE answer_links SET used_at = ? WHERE hash = ?", micros(at), hash); err != nil {
		return fmt.Errorf("use answer link: %w", err)
	}
	return nil
}

// DeleteExpiredAnswerLinks removes the links that expired before before; it
// returns how many went.
func (t *tx) DeleteExpiredAnswerLinks(ctx context.Context, before time.Time) (int, error) {
	if err := t.mustWrite("delete expired answer links"); err != nil {
		return 0, err
	}
	res, err := t.tx.ExecContext(ctx, "DELETE FROM answer_links WHERE expires_at < ?", micros(before))
	if err != nil {
		return 0, fmt.Errorf("delete expired answer links: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete expired answer links: %w", err)
	}
	return int(n), nil
}
