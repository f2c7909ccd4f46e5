package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/askd-dev/askd"
)

// People's identities at providers and sign-ins begun at one (SPEC §15).

const identityColumns = "issuer, subject, person, linked_at, revoked_at"

// Identity returns the identity of issuer and subject; ENOTFOUND when there
// is none.
func (t *tx) Identity(ctx context.Context, issuer, subject string) (*askd.Identity, error) {
	row := t.tx.QueryRowContext(ctx, "SELECT "+identityColumns+" FROM identities WHERE issuer = ? AND subject = ?", issuer, subject)
	id, err := scanIdentity(row)
	if err != nil {
		return nil, translate(err, "read identity", says{notFound: "identity not found"})
	}
	return id, nil
}

// IdentitiesOf returns person's identities, by issuer then subject.
func (t *tx) IdentitiesOf(ctx context.Context, person string) ([]*askd.Identity, error) {
	rows, err := t.tx.QueryContext(ctx, "SELECT "+identityColumns+" FROM identities WHERE person = ? ORDER BY issuer, subject", person)
	return collect(rows, err, fmt.Sprintf("list identities of %q", person), scanIdentity)
}

// LinkIdentity stores id in place of any of the same issuer and subject;
// ENOTFOUND when no human token is named id.Person.
func (t *tx) LinkIdentity(ctx context.Context, id *askd.Identity) error {
	if err := t.mustWrite("link identity"); err != nil {
		return err
	}
	var revoked any
	if id.RevokedAt != nil {
		revoked = micros(*id.RevokedAt)
	}
	// Only a person's: the insert's SELECT finds no row otherwise.
	res, err := t.tx.ExecContext(ctx, `
		INSERT INTO identities (`+identityColumns+`)
		SELECT ?, ?, name, ?, ? FROM tokens WHERE name = ? AND role = 'human'
		ON CONFLICT (issuer, subject) DO UPDATE SET
			person = excluded.person, linked_at = excluded.linked_at, revoked_at = excluded.revoked_at`,
		id.Issuer, id.Subject, micros(id.LinkedAt), revoked, id.Person)
	if err != nil {
		return fmt.Errorf("link identity: %w", err)
	}
	return oneRow(res, "link identity", fmt.Sprintf("no human token named %q", id.Person))
}

// RevokeIdentitiesOf marks person's identities not yet revoked as revoked
// at at.
func (t *tx) RevokeIdentitiesOf(ctx context.Context, person string, at time.Time) (int, error) {
	if err := t.mustWrite("revoke identities"); err != nil {
		return 0, err
	}
	res, err := t.tx.ExecContext(ctx, "UPDATE identities SET revoked_at = ? WHERE person = ? AND revoked_at IS NULL", micros(at), person)
	if err != nil {
		return 0, fmt.Errorf("revoke identities of %q: %w", person, err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

func scanIdentity(row scanner) (*askd.Identity, error) {
	var (
		id      askd.Identity
		linked  int64
		revoked sql.NullInt64
	)
	if err := row.Scan(&id.Issuer, &id.Subject, &id.Person, &linked, &revoked); err != nil {
		return nil, err
	}
	id.LinkedAt = fromMicros(linked)
	if revoked.Valid {
		r := fromMicros(revoked.Int64)
		id.RevokedAt = &r
	}
	return &id, nil
}

// CreateProviderSignIn stores p; ECONFLICT when its state is stored.
func (t *tx) CreateProviderSignIn(ctx context.Context, p *askd.ProviderSignIn) error {
	if err := t.mustWrite("create provider sign-in"); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, `
		INSERT INTO provider_signins (state, binding, nonce, verifier, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)`,
		p.State, p.Binding, p.Nonce, p.Verifier, micros(p.CreatedAt), micros(p.ExpiresAt))
	return translate(err, "create provider sign-in", says{taken: "a provider sign-in with the same state exists"})
}

// TakeProviderSignIn deletes the provider sign-in with the state's hash and
// returns it; ENOTFOUND when there is none. Write transactions are
// exclusive, so one taker wins.
func (t *tx) TakeProviderSignIn(ctx context.Context, state string) (*askd.ProviderSignIn, error) {
	if err := t.mustWrite("take provider sign-in"); err != nil {
		return nil, err
	}
	p := &askd.ProviderSignIn{State: state}
	var created, expires int64
	err := t.tx.QueryRowContext(ctx,
		"DELETE FROM provider_signins WHERE state = ? RETURNING binding, nonce, verifier, created_at, expires_at", state).
		Scan(&p.Binding, &p.Nonce, &p.Verifier, &created, &expires)
	if err != nil {
		return nil, translate(err, "take provider sign-in", says{notFound: "provider sign-in not found"})
	}
	p.CreatedAt, p.ExpiresAt = fromMicros(created), fromMicros(expires)
	return p, nil
}

// TrimProviderSignIns deletes all but the keep most recently created
// provider sign-ins.
func (t *tx) TrimProviderSignIns(ctx context.Context, keep int) (int, error) {
	if err := t.mustWrite("trim provider sign-ins"); err != nil {
		return 0, err
	}
	res, err := t.tx.ExecContext(ctx, `
		DELETE FROM provider_signins WHERE state NOT IN (
			SELECT state FROM provider_signins ORDER BY created_at DESC, state DESC LIMIT ?)`, keep)
	if err != nil {
		return 0, fmt.Errorf("trim provider sign-ins: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
