package app

import (
	"context"

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
// none. Its streams, waits and browser sessions end within tokenTTL.
func (s *Service) RevokeToken(ctx context.Context, c askd.Caller, name string) error {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx askd.Tx) error {
		if err := tx.Tokens.RevokeToken(ctx, name); err != nil {
			return err
		}
		return recordConfig(ctx, tx, c, askd.ConfigTokenRevoked, map[string]any{"name": name})
	})
}
