package sqlite

import (
	"context"
	"fmt"

	"github.com/askd-dev/askd"
)

// CreateToken stores tok. ECONFLICT when its name is taken, or (a token
// generated twice) its hash is already stored.
func (t *tx) CreateToken(ctx context.Context, tok *askd.Token) error {
	if err := t.mustWrite("create token"); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx,
		"INSERT INTO tokens (name, role, hash, created_at) VALUES (?, ?, ?, ?)",
		tok.Name, string(tok.Role), tok.Hash, micros(tok.CreatedAt))
	return translate(err, fmt.Sprintf("create token %q", tok.Name), says{
		taken: fmt.Sprintf("token name %q is taken", tok.Name),
		dupe:  "a token with the same hash exists", // the one unique column besides the name
	})
}

// TokenByHash returns the token whose hash is hash; ENOTFOUND when none is.
func (t *tx) TokenByHash(ctx context.Context, hash string) (*askd.Token, error) {
	row := t.tx.QueryRowContext(ctx, "SELECT name, role, hash, created_at FROM tokens WHERE hash = ?", hash)
	tok, err := scanToken(row)
	if err != nil {
		return nil, translate(err, "read token", says{notFound: "token not found"})
	}
	return tok, nil
}

// Tokens returns every token, by name.
func (t *tx) Tokens(ctx context.Context) ([]*askd.Token, error) {
	rows, err := t.tx.QueryContext(ctx, "SELECT name, role, hash, created_at FROM tokens ORDER BY name")
	return collect(rows, err, "list tokens", scanToken)
}

// RevokeToken deletes the token named name; ENOTFOUND when there is none.
func (t *tx) RevokeToken(ctx context.Context, name string) error {
	if err := t.mustWrite("revoke token"); err != nil {
		return err
	}
	res, err := t.tx.ExecContext(ctx, "DELETE FROM tokens WHERE name = ?", name)
	if err != nil {
		return fmt.Errorf("revoke token %q: %w", name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("revoke token %q: %w", name, err)
	}
	if n == 0 {
		return askd.Errorf(askd.ENOTFOUND, "token %q not found", name)
	}
	return nil
}

// scanToken reads one row of name, role, hash, created_at.
func scanToken(row scanner) (*askd.Token, error) {
	var (
		tok       askd.Token
		role      string
		createdAt int64
	)
	if err := row.Scan(&tok.Name, &role, &tok.Hash, &createdAt); err != nil {
		return nil, err
	}
	tok.Role = askd.Role(role)
	tok.CreatedAt = fromMicros(createdAt)
	return &tok, nil
}
