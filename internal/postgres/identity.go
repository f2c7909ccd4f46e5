package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
)

// People's identities at providers and sign-ins begun at one (SPEC §15).

const identityColumns = "issuer, subject, person, linked_at, revoked_at"

// Identity returns the identity of issuer and subject; ENOTFOUND when there
// is none.
func (t *tx) Identity(ctx context.Context, issuer, subject string) (*askd.Identity, error) {
	row := t.tx.QueryRow(t.ctx(ctx), "SELECT "+identityColumns+" FROM identities WHERE issuer = $1 AND subject = $2", issuer, subject)
	id, err := scanIdentity(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, askd.Errorf(askd.ENOTFOUND, "identity not found")
	}
	if err != nil {
		return nil, translate(err, "read identity")
	}
	return id, nil
}

// IdentitiesOf returns person's identities, by issuer then subject (in
// bytes' order, as SQLite's).
func (t *tx) IdentitiesOf(ctx context.Context, person string) ([]*askd.Identity, error) {
	rows, err := t.tx.Query(t.ctx(ctx), "SELECT "+identityColumns+` FROM identities WHERE person = $1
		ORDER BY issuer COLLATE "C", subject COLLATE "C"`, person)
	if err != nil {
		return nil, translate(err, fmt.Sprintf("list identities of %q", person))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*askd.Identity, error) { return scanIdentity(row) })
	if err != nil {
		return nil, translate(err, fmt.Sprintf("list identities of %q", person))
	}
	return out, nil
}

// LinkIdentity stores id in place of any of the same issuer and subject;
// ENOTFOUND when no human token is named id.Person.
func (t *tx) LinkIdentity(ctx context.Context, id *askd.Identity) error {
	if err := t.mustWrite("link identity"); err != nil {
		return err
	}
	// Only a person's: the insert's SELECT finds no row otherwise.
	tag, err := t.tx.Exec(t.ctx(ctx), `
		INSERT INTO identities (`+identityColumns+`)
		SELECT $1, $2, name, $3, $4 FROM tokens WHERE name = $5 AND role = 'human'
		ON CONFLICT (issuer, subject) DO UPDATE SET
			person = excluded.person, linked_at = excluded.linked_at, revoked_at = excluded.revoked_at`,
		id.Issuer, id.Subject, id.LinkedAt, id.RevokedAt, id.Person)
	if err != nil {
		return translate(err, "link identity")
	}
	if tag.RowsAffected() == 0 {
		return askd.Errorf(askd.ENOTFOUND, "no human token named %q", id.Person)
	}
	return nil
}

// RevokeIdentitiesOf marks person's identities not yet revoked as revoked
// at at.
func (t *tx) RevokeIdentitiesOf(ctx context.Context, person string, at time.Time) (int, error) {
	if err := t.mustWrite("revoke identities"); err != nil {
		return 0, err
	}
	tag, err := t.tx.Exec(t.ctx(ctx), "UPDATE identities SET revoked_at = $1 WHERE person = $2 AND revoked_at IS NULL", at, person)
	if err != nil {
		return 0, translate(err, fmt.Sprintf("revoke identities of %q", person))
	}
	return int(tag.RowsAffected()), nil
}

func scanIdentity(row pgx.Row) (*askd.Identity, error) {
	var id askd.Identity
	if err := row.Scan(&id.Issuer, &id.Subject, &id.Person, &id.LinkedAt, &id.RevokedAt); err != nil {
		return nil, err
	}
	id.LinkedAt = id.LinkedAt.UTC()
	if id.RevokedAt != nil {
		r := id.RevokedAt.UTC()
		id.RevokedAt = &r
	}
	return &id, nil
}

// CreateProviderSignIn stores p; ECONFLICT when its state is stored.
func (t *tx) CreateProviderSignIn(ctx context.Context, p *askd.ProviderSignIn) error {
	if err := t.mustWrite("create provider sign-in"); err != nil {
		return err
	}
	_, err := t.tx.Exec(t.ctx(ctx), `
		INSERT INTO provider_signins (state, binding, nonce, verifier, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`,
		p.State, p.Binding, p.Nonce, p.Verifier, p.CreatedAt, p.ExpiresAt)
	if uniqueViolation(err) {
		return askd.Errorf(askd.ECONFLICT, "a provider sign-in with the same state exists")
	}
	if err != nil {
		return translate(err, "create provider sign-in")
	}
	return nil
}

// TakeProviderSignIn deletes the provider sign-in with the state's hash and
// returns it; ENOTFOUND when there is none. A concurrent taker waits on
// the row's lock and then finds it gone.
func (t *tx) TakeProviderSignIn(ctx context.Context, state string) (*askd.ProviderSignIn, error) {
	if err := t.mustWrite("take provider sign-in"); err != nil {
		return nil, err
	}
	p := &askd.ProviderSignIn{State: state}
	err := t.tx.QueryRow(t.ctx(ctx),
		"DELETE FROM provider_signins WHERE state = $1 RETURNING binding, nonce, verifier, created_at, expires_at", state).
		Scan(&p.Binding, &p.Nonce, &p.Verifier, &p.CreatedAt, &p.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, askd.Errorf(askd.ENOTFOUND, "provider sign-in not found")
	}
	if err != nil {
		return nil, translate(err, "take provider sign-in")
	}
	p.CreatedAt, p.ExpiresAt = p.CreatedAt.UTC(), p.ExpiresAt.UTC()
	return p, nil
}

// TrimProviderSignIns deletes all but the keep most recently created
// provider sign-ins.
func (t *tx) TrimProviderSignIns(ctx context.Context, keep int) (int, error) {
	if err := t.mustWrite("trim provider sign-ins"); err != nil {
		return 0, err
	}
	tag, err := t.tx.Exec(t.ctx(ctx), `
		DELETE FROM provider_signins WHERE state NOT IN (
			SELECT state FROM provider_signins ORDER BY created_at DESC, state DESC LIMIT $1)`, keep)
	if err != nil {
		return 0, translate(err, "trim provider sign-ins")
	}
	return int(tag.RowsAffected()), nil
}
