package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/askd-dev/askd"
)

// signInError maps the constraint violations of inserting a sign-in code or
// a browser session: a missing human token (the foreign key), a hash stored
// twice (the primary key).
func signInError(err error, what, human string) error {
	switch {
	case foreignKeyViolation(err):
		return askd.Errorf(askd.ENOTFOUND, "no token named %q", human)
	case uniqueViolation(err):
		return askd.Errorf(askd.ECONFLICT, "a %s with the same hash exists", what)
	}
	return translate(err, "create "+what)
}

// CreateSignInCode stores c; ENOTFOUND when its human token does not exist.
func (t *tx) CreateSignInCode(ctx context.Context, c *askd.SignInCode) error {
	if err := t.mustWrite("create sign-in code"); err != nil {
		return err
	}
	_, err := t.tx.Exec(t.ctx(ctx),
		"INSERT INTO signin_codes (hash, human, created_at, expires_at) VALUES ($1, $2, $3, $4)",
		c.Hash, c.Human, c.CreatedAt, c.ExpiresAt)
	if err != nil {
		return signInError(err, "sign-in code", c.Human)
	}
	return nil
}

// TakeSignInCode deletes the code with the hash and returns it; ENOTFOUND
// when there is none. A concurrent taker waits on the row's lock and then
// finds it gone.
func (t *tx) TakeSignInCode(ctx context.Context, hash string) (*askd.SignInCode, error) {
	if err := t.mustWrite("take sign-in code"); err != nil {
		return nil, err
	}
	c := &askd.SignInCode{Hash: hash}
	err := t.tx.QueryRow(t.ctx(ctx),
		"DELETE FROM signin_codes WHERE hash = $1 RETURNING human, created_at, expires_at", hash).
		Scan(&c.Human, &c.CreatedAt, &c.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, askd.Errorf(askd.ENOTFOUND, "sign-in code not found")
	}
	if err != nil {
		return nil, translate(err, "take sign-in code")
	}
	c.CreatedAt, c.ExpiresAt = c.CreatedAt.UTC(), c.ExpiresAt.UTC()
	return c, nil
}

// CreateBrowserSession stores b; ENOTFOUND when its human token does not
// exist.
func (t *tx) CreateBrowserSession(ctx context.Context, b *askd.BrowserSession) error {
	if err := t.mustWrite("create browser session"); err != nil {
		return err
	}
	_, err := t.tx.Exec(t.ctx(ctx), `
		INSERT INTO browser_sessions (hash, human, created_at, last_seen_at, expires_at, via)
		VALUES ($1, $2, $3, $4, $5, $6)`,
		b.Hash, b.Human, b.CreatedAt, b.LastSeenAt, b.ExpiresAt, b.Via)
	if err != nil {
		return signInError(err, "browser session", b.Human)
	}
	return nil
}

// BrowserSession returns the browser session with the hash; ENOTFOUND when
// there is none.
func (t *tx) BrowserSession(ctx context.Context, hash string) (*askd.BrowserSession, error) {
	b := &askd.BrowserSession{Hash: hash}
	err := t.tx.QueryRow(t.ctx(ctx),
		"SELECT human, created_at, last_seen_at, expires_at, via FROM browser_sessions WHERE hash = $1", hash).
		Scan(&b.Human, &b.CreatedAt, &b.LastSeenAt, &b.ExpiresAt, &b.Via)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, askd.Errorf(askd.ENOTFOUND, "browser session not found")
	}
	if err != nil {
		return nil, translate(err, "read browser session")
	}
	b.CreatedAt, b.LastSeenAt, b.ExpiresAt = b.CreatedAt.UTC(), b.LastSeenAt.UTC(), b.ExpiresAt.UTC()
	return b, nil
}

// BrowserSessionsOf returns human's browser sessions, least recently seen
// first (browser_sessions_human; hashes are hex, so any collation orders
// them as SQLite does).
func (t *tx) BrowserSessionsOf(ctx context.Context, human string) ([]*askd.BrowserSession, error) {
	rows, err := t.tx.Query(t.ctx(ctx), `
		SELECT hash, created_at, last_seen_at, expires_at, via FROM browser_sessions
		WHERE human = $1 ORDER BY last_seen_at, hash`, human)
	if err != nil {
		return nil, translate(err, fmt.Sprintf("list browser sessions of %q", human))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*askd.BrowserSession, error) {
		b := &askd.BrowserSession{Human: human}
		if err := row.Scan(&b.Hash, &b.CreatedAt, &b.LastSeenAt, &b.ExpiresAt, &b.Via); err != nil {
			return nil, err
		}
		b.CreatedAt, b.LastSeenAt, b.ExpiresAt = b.CreatedAt.UTC(), b.LastSeenAt.UTC(), b.ExpiresAt.UTC()
		return b, nil
	})
	if err != nil {
		return nil, translate(err, fmt.Sprintf("list browser sessions of %q", human))
	}
	return out, nil
}

// TouchBrowserSession sets the browser session's LastSeenAt and ExpiresAt;
// ENOTFOUND when there is none.
func (t *tx) TouchBrowserSession(ctx context.Context, hash string, seen, expires time.Time) error {
	if err := t.mustWrite("touch browser session"); err != nil {
		return err
	}
	tag, err := t.tx.Exec(t.ctx(ctx),
		"UPDATE browser_sessions SET last_seen_at = $1, expires_at = $2 WHERE hash = $3", seen, expires, hash)
	return oneBrowserSession(tag, err, "touch browser session")
}

// EndBrowserSession deletes the browser session with the hash; ENOTFOUND
// when there is none.
func (t *tx) EndBrowserSession(ctx context.Context, hash string) error {
	if err := t.mustWrite("end browser session"); err != nil {
		return err
	}
	tag, err := t.tx.Exec(t.ctx(ctx), "DELETE FROM browser_sessions WHERE hash = $1", hash)
	return oneBrowserSession(tag, err, "end browser session")
}

// DeleteExpiredSignIns removes sign-in codes, browser sessions and provider
// sign-ins that expired before before; it returns how many went.
func (t *tx) DeleteExpiredSignIns(ctx context.Context, before time.Time) (int, error) {
	if err := t.mustWrite("delete expired sign-ins"); err != nil {
		return 0, err
	}
	total := 0
	for _, table := range []string{"signin_codes", "browser_sessions", "provider_signins"} {
		tag, err := t.tx.Exec(t.ctx(ctx), "DELETE FROM "+table+" WHERE expires_at < $1", before)
		if err != nil {
			return 0, translate(err, "delete expired "+table)
		}
		total += int(tag.RowsAffected())
	}
	return total, nil
}

// oneBrowserSession is nil when a statement touching one browser session
// did, ENOTFOUND when it touched none.
func oneBrowserSession(tag pgconn.CommandTag, err error, what string) error {
	if err != nil {
		return translate(err, what)
	}
	if tag.RowsAffected() == 0 {
		return askd.Errorf(askd.ENOTFOUND, "browser session not found")
	}
	return nil
}
