package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/askd-dev/askd"
)

// signInError is translate for inserting a sign-in code or a browser
// session: a missing human token (the foreign key), a hash stored twice (the
// primary key).
func signInError(err error, what, human string) error {
	return translate(err, "create "+what, says{
		missing: fmt.Sprintf("no token named %q", human),
		taken:   fmt.Sprintf("a %s with the same hash exists", what),
	})
}

// CreateSignInCode stores c; ENOTFOUND when its human token does not exist.
func (t *tx) CreateSignInCode(ctx context.Context, c *askd.SignInCode) error {
	if err := t.mustWrite("create sign-in code"); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx,
		"INSERT INTO signin_codes (hash, human, created_at, expires_at) VALUES (?, ?, ?, ?)",
		c.Hash, c.Human, micros(c.CreatedAt), micros(c.ExpiresAt))
	if err != nil {
		return signInError(err, "sign-in code", c.Human)
	}
	return nil
}

// TakeSignInCode deletes the code with the hash and returns it; ENOTFOUND
// when there is none. Write transactions are exclusive, so one taker wins.
func (t *tx) TakeSignInCode(ctx context.Context, hash string) (*askd.SignInCode, error) {
	if err := t.mustWrite("take sign-in code"); err != nil {
		return nil, err
	}
	c := &askd.SignInCode{Hash: hash}
	var created, expires int64
	err := t.tx.QueryRowContext(ctx,
		"DELETE FROM signin_codes WHERE hash = ? RETURNING human, created_at, expires_at", hash).
		Scan(&c.Human, &created, &expires)
	if err != nil {
		return nil, translate(err, "take sign-in code", says{notFound: "sign-in code not found"})
	}
	c.CreatedAt, c.ExpiresAt = fromMicros(created), fromMicros(expires)
	return c, nil
}

// CreateBrowserSession stores b; ENOTFOUND when its human token does not
// exist.
func (t *tx) CreateBrowserSession(ctx context.Context, b *askd.BrowserSession) error {
	if err := t.mustWrite("create browser session"); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, `
		INSERT INTO browser_sessions (hash, human, created_at, last_seen_at, expires_at, via)
		VALUES (?, ?, ?, ?, ?, ?)`,
		b.Hash, b.Human, micros(b.CreatedAt), micros(b.LastSeenAt), micros(b.ExpiresAt), b.Via)
	if err != nil {
		return signInError(err, "browser session", b.Human)
	}
	return nil
}

// BrowserSession returns the browser session with the hash; ENOTFOUND when
// there is none.
func (t *tx) BrowserSession(ctx context.Context, hash string) (*askd.BrowserSession, error) {
	b := &askd.BrowserSession{Hash: hash}
	var created, seen, expires int64
	err := t.tx.QueryRowContext(ctx,
		"SELECT human, created_at, last_seen_at, expires_at, via FROM browser_sessions WHERE hash = ?", hash).
		Scan(&b.Human, &created, &seen, &expires, &b.Via)
	if err != nil {
		return nil, translate(err, "read browser session", says{notFound: "browser session not found"})
	}
	b.CreatedAt, b.LastSeenAt, b.ExpiresAt = fromMicros(created), fromMicros(seen), fromMicros(expires)
	return b, nil
}

// BrowserSessionsOf returns human's browser sessions, least recently seen
// first (browser_sessions_human).
func (t *tx) BrowserSessionsOf(ctx context.Context, human string) ([]*askd.BrowserSession, error) {
	rows, err := t.tx.QueryContext(ctx, `
		SELECT hash, created_at, last_seen_at, expires_at, via FROM browser_sessions
		WHERE human = ? ORDER BY last_seen_at, hash`, human)
	if err != nil {
		return nil, fmt.Errorf("list browser sessions of %q: %w", human, err)
	}
	defer rows.Close()
	var out []*askd.BrowserSession
	for rows.Next() {
		b := &askd.BrowserSession{Human: human}
		var created, seen, expires int64
		if err := rows.Scan(&b.Hash, &created, &seen, &expires, &b.Via); err != nil {
			return nil, fmt.Errorf("list browser sessions of %q: %w", human, err)
		}
		b.CreatedAt, b.LastSeenAt, b.ExpiresAt = fromMicros(created), fromMicros(seen), fromMicros(expires)
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list browser sessions of %q: %w", human, err)
	}
	return out, nil
}

// TouchBrowserSession sets the browser session's LastSeenAt and ExpiresAt;
// ENOTFOUND when there is none.
func (t *tx) TouchBrowserSession(ctx context.Context, hash string, seen, expires time.Time) error {
	if err := t.mustWrite("touch browser session"); err != nil {
		return err
	}
	res, err := t.tx.ExecContext(ctx,
		"UPDATE browser_sessions SET last_seen_at = ?, expires_at = ? WHERE hash = ?",
		micros(seen), micros(expires), hash)
	return oneBrowserSession(res, err, "touch browser session")
}

// EndBrowserSession deletes the browser session with the hash; ENOTFOUND
// when there is none.
func (t *tx) EndBrowserSession(ctx context.Context, hash string) error {
	if err := t.mustWrite("end browser session"); err != nil {
		return err
	}
	res, err := t.tx.ExecContext(ctx, "DELETE FROM browser_sessions WHERE hash = ?", hash)
	return oneBrowserSession(res, err, "end browser session")
}

// DeleteExpiredSignIns removes sign-in codes, browser sessions and provider
// sign-ins that expired before before; it returns how many went.
func (t *tx) DeleteExpiredSignIns(ctx context.Context, before time.Time) (int, error) {
	if err := t.mustWrite("delete expired sign-ins"); err != nil {
		return 0, err
	}
	total := 0
	for _, table := range []string{"signin_codes", "browser_sessions", "provider_signins"} {
		res, err := t.tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE expires_at < ?", micros(before))
		if err != nil {
			return 0, fmt.Errorf("delete expired %s: %w", table, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("delete expired %s: %w", table, err)
		}
		total += int(n)
	}
	return total, nil
}

// oneBrowserSession is nil when a statement touching one browser session did, ENOTFOUND
// when it touched none.
func oneBrowserSession(res sql.Result, err error, what string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return askd.Errorf(askd.ENOTFOUND, "browser session not found")
	}
	return nil
}
