package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
)

const tokenColumns = "name, role, access, owner, hash, created_at"

// CreateToken stores tok. ECONFLICT when its name is taken, or (a token
// generated twice) its hash is already stored.
func (t *tx) CreateToken(ctx context.Context, tok *askd.Token) error {
	if err := t.mustWrite("create token"); err != nil {
		return err
	}
	_, err := t.tx.Exec(t.ctx(ctx),
		"INSERT INTO tokens ("+tokenColumns+") VALUES ($1, $2, $3, $4, $5, $6)",
		tok.Name, string(tok.Role), string(tok.Access), tok.Owner, tok.Hash, tok.CreatedAt)
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
	row := t.tx.QueryRow(t.ctx(ctx), "SELECT "+tokenColumns+" FROM tokens WHERE hash = $1", hash)
	tok, err := scanToken(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, askd.Errorf(askd.ENOTFOUND, "token not found")
	}
	if err != nil {
		return nil, translate(err, "read token")
	}
	return tok, nil
}

// TokenByName returns the token named name; ENOTFOUND when there is none.
func (t *tx) TokenByName(ctx context.Context, name string) (*askd.Token, error) {
	row := t.tx.QueryRow(t.ctx(ctx), "SELECT "+tokenColumns+" FROM tokens WHERE name = $1", name)
	tok, err := scanToken(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, askd.Errorf(askd.ENOTFOUND, "token %q not found", name)
	}
	if err != nil {
		return nil, translate(err, fmt.Sprintf("read token %q", name))
	}
	return tok, nil
}

// Tokens returns every token, by name.
func (t *tx) Tokens(ctx context.Context) ([]*askd.Token, error) {
	// COLLATE "C": by bytes, as SQLite orders, whatever the database's locale.
	rows, err := t.tx.Query(t.ctx(ctx), "SELECT "+tokenColumns+` FROM tokens ORDER BY name COLLATE "C"`)
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

// SetAccess sets the access of the human token named name; ENOTFOUND when
// there is no human token of that name.
func (t *tx) SetAccess(ctx context.Context, name string, a askd.Access) error {
	if err := t.mustWrite("set access"); err != nil {
		return err
	}
	tag, err := t.tx.Exec(t.ctx(ctx), "UPDATE tokens SET access = $1 WHERE name = $2 AND role = 'human'", string(a), name)
	if err != nil {
		return translate(err, fmt.Sprintf("set the access of token %q", name))
	}
	if tag.RowsAffected() == 0 {
		return askd.Errorf(askd.ENOTFOUND, "no human token named %q", name)
	}
	return nil
}

// SetOwner sets the owner of the agent token named name; ENOTFOUND when
// there is no agent token of that name.
func (t *tx) SetOwner(ctx context.Context, name, owner string) error {
	if err := t.mustWrite("set owner"); err != nil {
		return err
	}
	tag, err := t.tx.Exec(t.ctx(ctx), "UPDATE tokens SET owner = $1 WHERE name = $2 AND role = 'agent'", owner, name)
	if err != nil {
		return translate(err, fmt.Sprintf("set the owner of token %q", name))
	}
	if tag.RowsAffected() == 0 {
		return askd.Errorf(askd.ENOTFOUND, "no agent token named %q", name)
	}
	return nil
}

// scanToken reads one row of tokenColumns.
func scanToken(row pgx.Row) (*askd.Token, error) {
	var (
		tok          askd.Token
		role, access string
	)
	if err := row.Scan(&tok.Name, &role, &access, &tok.Owner, &tok.Hash, &tok.CreatedAt); err != nil {
		return nil, err
	}
	tok.Role, tok.Access = askd.Role(role), askd.Access(access)
	tok.CreatedAt = tok.CreatedAt.UTC()
	return &tok, nil
}

// SetTokenHash replaces the hash of the token named name; ENOTFOUND when
// there is none, ECONFLICT when another token has the hash.
func (t *tx) SetTokenHash(ctx context.Context, name, hash string) error {
	if err := t.mustWrite("set token hash"); err != nil {
		return err
	}
	tag, err := t.tx.Exec(t.ctx(ctx), "UPDATE tokens SET hash = $1 WHERE name = $2", hash, name)
	if uniqueViolation(err) {
		return askd.Errorf(askd.ECONFLICT, "a token with the same hash exists")
	}
	if err != nil {
		return translate(err, fmt.Sprintf("set the hash of token %q", name))
	}
	if tag.RowsAffected() == 0 {
		return askd.Errorf(askd.ENOTFOUND, "token %q not found", name)
	}
	return nil
}
