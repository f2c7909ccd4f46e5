package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/askd-dev/askd"
)

const tokenColumns = "name, role, access, owner, hash, created_at"

// CreateToken stores tok. ECONFLICT when its name is taken, or (a token
// generated twice) its hash is already stored.
func (t *tx) CreateToken(ctx context.Context, tok *askd.Token) error {
	if err := t.mustWrite("create token"); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx,
		"INSERT INTO tokens ("+tokenColumns+") VALUES (?, ?, ?, ?, ?, ?)",
		tok.Name, string(tok.Role), string(tok.Access), tok.Owner, tok.Hash, micros(tok.CreatedAt))
	return translate(err, fmt.Sprintf("create token %q", tok.Name), says{
		taken: fmt.Sprintf("token name %q is taken", tok.Name),
		dupe:  "a token with the same hash exists", // the one unique column besides the name
	})
}

// TokenByHash returns the token whose hash is hash; ENOTFOUND when none is.
func (t *tx) TokenByHash(ctx context.Context, hash string) (*askd.Token, error) {
	row := t.tx.QueryRowContext(ctx, "SELECT "+tokenColumns+" FROM tokens WHERE hash = ?", hash)
	tok, err := scanToken(row)
	if err != nil {
		return nil, translate(err, "read token", says{notFound: "token not found"})
	}
	return tok, nil
}

// TokenByName returns the token named name; ENOTFOUND when there is none.
func (t *tx) TokenByName(ctx context.Context, name string) (*askd.Token, error) {
	row := t.tx.QueryRowContext(ctx, "SELECT "+tokenColumns+" FROM tokens WHERE name = ?", name)
	tok, err := scanToken(row)
	if err != nil {
		return nil, translate(err, fmt.Sprintf("read token %q", name), says{notFound: fmt.Sprintf("token %q not found", name)})
	}
	return tok, nil
}

// Tokens returns every token, by name.
func (t *tx) Tokens(ctx context.Context) ([]*askd.Token, error) {
	rows, err := t.tx.QueryContext(ctx, "SELECT "+tokenColumns+" FROM tokens ORDER BY name")
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
	return oneRow(res, fmt.Sprintf("revoke token %q", name), fmt.Sprintf("token %q not found", name))
}

// SetAccess sets the access of the human token named name; ENOTFOUND when
// there is no human token of that name.
func (t *tx) SetAccess(ctx context.Context, name string, a askd.Access) error {
	if err := t.mustWrite("set access"); err != nil {
		return err
	}
	what := fmt.Sprintf("set the access of token %q", name)
	res, err := t.tx.ExecContext(ctx, "UPDATE tokens SET access = ? WHERE name = ? AND role = 'human'", string(a), name)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return oneRow(res, what, fmt.Sprintf("no human token named %q", name))
}

// SetOwner sets the owner of the agent token named name; ENOTFOUND when
// there is no agent token of that name.
func (t *tx) SetOwner(ctx context.Context, name, owner string) error {
	if err := t.mustWrite("set owner"); err != nil {
		return err
	}
	what := fmt.Sprintf("set the owner of token %q", name)
	res, err := t.tx.ExecContext(ctx, "UPDATE tokens SET owner = ? WHERE name = ? AND role = 'agent'", owner, name)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return oneRow(res, what, fmt.Sprintf("no agent token named %q", name))
}

// oneRow is nil when the statement that gave res changed a row, else
// ENOTFOUND with notFound; what names the statement in errors.
func oneRow(res sql.Result, what, notFound string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return askd.Errorf(askd.ENOTFOUND, "%s", notFound)
	}
	return nil
}

// scanToken reads one row of tokenColumns.
func scanToken(row scanner) (*askd.Token, error) {
	var (
		tok          askd.Token
		role, access string
		createdAt    int64
	)
	if err := row.Scan(&tok.Name, &role, &access, &tok.Owner, &tok.Hash, &createdAt); err != nil {
		return nil, err
	}
	tok.Role, tok.Access = askd.Role(role), askd.Access(access)
	tok.CreatedAt = fromMicros(createdAt)
	return &tok, nil
}

// SetTokenHash replaces the hash of the token named name; ENOTFOUND when
// there is none, ECONFLICT when another token has the hash.
func (t *tx) SetTokenHash(ctx context.Context, name, hash string) error {
	if err := t.mustWrite("set token hash"); err != nil {
		return err
	}
	what := fmt.Sprintf("set the hash of token %q", name)
	res, err := t.tx.ExecContext(ctx, "UPDATE tokens SET hash = ? WHERE name = ?", hash, name)
	if err != nil {
		return translate(err, what, says{dupe: "a token with the same hash exists"})
	}
	return oneRow(res, what, fmt.Sprintf("token %q not found", name))
}
