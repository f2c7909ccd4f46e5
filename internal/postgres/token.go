package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
)

// CreateToken stores tok. ECONFLICT when its name is taken, or (a token
// generated twice) its hash is already stored.
func (t *tx) CreateToken(ctx context.Context, tok *askd.Token) error {
	if err := t.mustWrite("create token"); err != nil {
		return err
	}
	_, err := t.tx.Exec(t.ctx(ctx),
		"INSERT INTO tokens (name, role, hash, created_at) VALUES ($1, $2, $3, $4)",
		tok.Name, string(tok.Role), tok.Hash, tok.CreatedAt)
	if uniqueViolation(err) {
		switch violatedConstraint(err) {
		case "tokens_pkey":
			return askd.Errorf(askd.ECONFLICT, "token name %q is taken", tok.Name)
		case "tokens_hash_key":
			return askd.Errorf(askd.ECONFLICT, "a token with the same hash exists")
		}
	}
	if err != nil {
		return translate(err, fmt.Sprintf("create token %q", tok.Name))
	}
	return nil
}

// TokenByHash returns the token whose hash is hash; ENOTFOUND when none is.
func (t *tx) TokenByHash(ctx context.Context, hash string) (*askd.Token, error) {
	row := t.tx.QueryRow(t.ctx(ctx), "SELECT name, role, hash, created_at FROM tokens WHERE hash = $1", hash)
	tok, err := scanToken(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, askd.Errorf(askd.ENOTFOUND, "token not found")
	}
	if err != nil {
		return nil, translate(err, "read token")
	}
	return tok, nil
}

// Tokens returns every token, by name.
func (t *tx) Tokens(ctx context.Context) ([]*askd.Token, error) {
	// COLLATE "C": by bytes, as SQLite orders, whatever the database's locale.
	rows, err := t.tx.Query(t.ctx(ctx), `SELECT name, role, hash, created_at FROM tokens ORDER BY name COLLATE "C"`)
	if err != nil {
		return nil, translate(err, "list tokens")
	}
	tokens, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*askd.Token, error) { return scanToken(row) })
	if err != nil {
		return nil, translate(err, "list tokens")
	}
	if tokens == nil {
		tokens = []*askd.Token{}
	}
	return tokens, nil
}

// RevokeToken deletes the token named name; ENOTFOUND when there is none.
func (t *tx) RevokeToken(ctx context.Context, name string) error {
	if err := t.mustWrite("revoke token"); err != nil {
		return err
	}
	tag, err := t.tx.Exec(t.ctx(ctx), "DELETE FROM tokens WHERE name = $1", name)
	if err != nil {
		return translate(err, fmt.Sprintf("revoke token %q", name))
	}
	if tag.RowsAffected() == 0 {
		return askd.Errorf(askd.ENOTFOUND, "token %q not found", name)
	}
	return nil
}

// scanToken reads one row of name, role, hash, created_at.
func scanToken(row pgx.Row) (*askd.Token, error) {
	var (
		tok  askd.Token
		role string
	)
	if err := row.Scan(&tok.Name, &role, &tok.Hash, &tok.CreatedAt); err != nil {
		return nil, err
	}
	tok.Role = askd.Role(role)
	tok.CreatedAt = tok.CreatedAt.UTC()
	return &tok, nil
}
