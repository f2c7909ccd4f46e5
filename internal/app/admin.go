package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/askd-dev/askd"
)

// # Administration: one face (SPEC §10, §11)
//
// Every admin action — tokens, people's roles, agents' owners (here),
// teams (teams.go), policies (policies.go), sign-in links (signin.go),
// reading the whole audit trail (audit.go) — is a method of Service that
// takes the caller: it checks that the caller may (admins only), refuses
// what breaks a rule (nothing is stored then), and records the change in
// the audit chain as the caller's. Front ends make one call and shape its
// result: the HTTP API with the authenticated person, the command line
// working on the database (askd token, team, signin-link, audit) with
// LocalAdmin, askd's own first start with Itself. A change reaches running
// servers within tokenTTL, as a revocation does.

// LocalAdmin is the caller of the command line working on the database
// directly, run by the operating-system user named user: an admin, since
// whoever can open the database (its file's permissions, a PostgreSQL
// URL's credentials) can change it anyway. The audit trail records it as
// "cli:" and user.
func LocalAdmin(user string) askd.Caller {
	return askd.Caller{Name: "cli:" + user, Role: askd.RoleHuman, Access: askd.AccessAdmin}
}

// Itself is askd acting on its own behalf, as an admin: a first start's
// tokens (Bootstrap) and sign-in link. The audit trail records it as
// "askd", as it records askd's own events.
var Itself = askd.Caller{Name: "askd", Role: askd.RoleHuman, Access: askd.AccessAdmin}

// CreateToken makes the token spec describes (admins only) and returns it
// with its secret, which is shown once and never stored. A person's token
// is an approver's unless spec says otherwise; an owner must be an existing
// person or team; a name in use is ECONFLICT; nothing is stored on any
// refusal.
func (s *Service) CreateToken(ctx context.Context, c askd.Caller, spec TokenSpec) (*askd.Token, string, error) {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return nil, "", err
	}
	return newToken(ctx, s.store, c, spec)
}

// Tokens lists every token (admins only), without their secrets.
func (s *Service) Tokens(ctx context.Context, c askd.Caller) ([]*askd.Token, error) {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return nil, err
	}
	var out []*askd.Token
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		out, err = tx.Tokens.Tokens(ctx)
		return err
	})
	return out, err
}

// SetAccess sets the person name's role (admins only); ENOTFOUND when name
// is no human token.
func (s *Service) SetAccess(ctx context.Context, c askd.Caller, name string, a askd.Access) error {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return err
	}
	if !a.Valid() {
		return askd.Errorf(askd.EINVALID, "role: %q is not one of admin, approver, viewer", a)
	}
	return s.store.Update(ctx, func(tx askd.Tx) error {
		if err := tx.Tokens.SetAccess(ctx, name, a); err != nil {
			return err
		}
		return recordConfig(ctx, tx, c, askd.ConfigTokenRole, map[string]any{"name": name, "access": a})
	})
}

// SetOwner sets agent token name's owner (admins only): a person,
// "team:NAME", or "" for everyone's. Asks made from then on are routed
// there; asks made before keep their owner.
func (s *Service) SetOwner(ctx context.Context, c askd.Caller, name, owner string) error {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx askd.Tx) error {
		if err := checkRoute(ctx, tx, "owner", owner); err != nil {
			return err
		}
		if err := tx.Tokens.SetOwner(ctx, name, owner); err != nil {
			return err
		}
		return recordConfig(ctx, tx, c, askd.ConfigTokenOwner, map[string]any{"name": name, "owner": owner})
	})
}

// RevokeToken revokes token name (admins only); ENOTFOUND when there is
// none. Its streams, waits and browser sessions end within tokenTTL. A
// person's identities at providers (SPEC §15) are recorded as revoked: they
// sign no one in until an admin links them again (LinkIdentity), even to a
// new person of the same name.
func (s *Service) RevokeToken(ctx context.Context, c askd.Caller, name string) error {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return err
	}
	now := s.now()
	return s.store.Update(ctx, func(tx askd.Tx) error {
		n, err := tx.Identities.RevokeIdentitiesOf(ctx, name, now)
		if err != nil {
			return err
		}
		if err := tx.Tokens.RevokeToken(ctx, name); err != nil {
			return err
		}
		fields := map[string]any{"name": name}
		if n > 0 {
			fields["identities_revoked"] = n
		}
		return recordConfig(ctx, tx, c, askd.ConfigTokenRevoked, fields)
	})
}

// RotateToken gives token name a new secret (admins only) and returns it,
// shown once: the old one is refused from then on (within tokenTTL in
// other processes), and its streams and waits end. A person made by a
// sign-in has a token whose secret nobody was shown: this is how they get
// one for the command line. Browser sessions stay signed in. ENOTFOUND
// when there is no such token.
func (s *Service) RotateToken(ctx context.Context, c askd.Caller, name string) (*askd.Token, string, error) {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return nil, "", err
	}
	var t *askd.Token
	var secret string
	err := s.store.Update(ctx, func(tx askd.Tx) (err error) {
		if t, err = tx.Tokens.TokenByName(ctx, name); err != nil {
			return err
		}
		secret = newSecret(t.Role)
		if err := tx.Tokens.SetTokenHash(ctx, name, HashToken(secret)); err != nil {
			return err
		}
		return recordConfig(ctx, tx, c, askd.ConfigTokenRotated, map[string]any{"name": name})
	})
	if err != nil {
		return nil, "", err
	}
	return t, secret, nil
}

// LinkIdentity links the identity of issuer and subject to the person name
// (admins only; SPEC §15: askd token link): their sign-ins with it sign in
// as name from then on. An identity revoked with its person is linked
// again so. ECONFLICT when it is linked to another person still here
// (revoke them first); ENOTFOUND when name is no person; EINVALID for an
// empty issuer or subject.
func (s *Service) LinkIdentity(ctx context.Context, c askd.Caller, name, issuer, subject string) error {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return err
	}
	if err := checkIdentity(issuer, subject); err != nil {
		return err
	}
	now := s.now()
	return s.store.Update(ctx, func(tx askd.Tx) error {
		old, err := tx.Identities.Identity(ctx, issuer, subject)
		switch {
		case askd.ErrorCode(err) == askd.ENOTFOUND:
		case err != nil:
			return err
		case old.Person != name && old.RevokedAt == nil:
			if here, err := isPerson(ctx, tx, old.Person); err != nil {
				return err
			} else if here {
				return askd.Errorf(askd.ECONFLICT, "that identity is linked to %s: revoke them first (askd token revoke %s)", old.Person, old.Person)
			}
		}
		if ok, err := isPerson(ctx, tx, name); err != nil {
			return err
		} else if !ok {
			return askd.Errorf(askd.ENOTFOUND, "no person named %q (a human token's name)", name)
		}
		return linkIdentity(ctx, tx, c, &askd.Identity{Issuer: issuer, Subject: subject, Person: name, LinkedAt: now})
	})
}

// linkIdentity stores id, recorded as by's change.
func linkIdentity(ctx context.Context, tx askd.Tx, by askd.Caller, id *askd.Identity) error {
	if err := tx.Identities.LinkIdentity(ctx, id); err != nil {
		return err
	}
	return recordConfig(ctx, tx, by, askd.ConfigIdentityLinked, map[string]any{"name": id.Person, "issuer": id.Issuer, "subject": id.Subject})
}

// checkIdentity refuses an issuer or subject that cannot name an identity.
func checkIdentity(issuer, subject string) error {
	var errs []string
	for _, f := range []struct{ name, v string }{{"issuer", issuer}, {"subject", subject}} {
		switch {
		case f.v == "":
			errs = append(errs, f.name+": required")
		case len(f.v) > maxIdentityBytes || askd.Printable(f.v) != f.v:
			errs = append(errs, fmt.Sprintf("%s: at most %d bytes of printable text", f.name, maxIdentityBytes))
		}
	}
	if len(errs) > 0 {
		return askd.Errorf(askd.EINVALID, "%s", strings.Join(errs, "; "))
	}
	return nil
}

// maxIdentityBytes bounds an issuer URL and a subject (OpenID Connect's
// sub is at most 255 ASCII characters).
const maxIdentityBytes = 1024
