package app

import (
	"context"
	"slices"

	"github.com/askd-dev/askd"
)

// # Signing in through a trusted reverse proxy (SPEC §15)
//
// The proxy in front of askd signs people in and names each in a header
// (askd serve --auth-proxy-header); the HTTP edge takes the header only
// from the proxy's addresses and only to sign a browser in (httpapi's
// proxy.go). Here the name becomes a person: its identity (issuer
// askd.ProxyIssuer, the name as subject) is linked to one person, at first
// the person of that name; a name that is no person yet becomes a viewer
// only with Config.ProxyCreatePeople. A revoked person's name signs no one
// in until an admin links it again, so revoking someone holds even when
// the proxy may make people.

// ProxyActor is the audit chain's actor for what a proxy's sign-in changed.
var ProxyActor = askd.Caller{Name: "proxy", Role: askd.RoleHuman, Access: askd.AccessAdmin}

// SignInWithProxy signs in the person the proxy's header names and
// returns the browser session's id; a *RefusedError with nothing changed
// when they may not.
func (s *Service) SignInWithProxy(ctx context.Context, name string) (string, error) {
	if err := askd.ValidName("the proxy's header", name); err != nil {
		return "", refuse(RefusedUnknown, "%s", askd.ErrorMessage(err))
	}
	in := identitySignIn{issuer: askd.ProxyIssuer, subject: name, via: askd.ViaProxy, by: ProxyActor}
	in.newPerson = func(ctx context.Context, tx askd.Tx) (*askd.Token, SignInRefusal, error) {
		// The proxy names askd's people: the person of that name, unless
		// they were linked to an identity of the proxy's before (then
		// theirs is revoked, or an admin linked them to another name).
		t, err := tx.Tokens.TokenByName(ctx, name)
		switch {
		case err == nil && t.Role != askd.RoleHuman:
			return nil, RefusedUnknown, nil
		case err == nil:
			if ids, err := tx.Identities.IdentitiesOf(ctx, name); err != nil || slices.ContainsFunc(ids, fromProxy) {
				return nil, RefusedUnknown, err
			}
			return t, "", nil
		case askd.ErrorCode(err) != askd.ENOTFOUND:
			return nil, "", err
		case !s.cfg.ProxyCreatePeople:
			return nil, RefusedUnknown, nil
		}
		// A name a revoked person had is theirs: no new person takes it.
		if taken, err := nameTaken(ctx, tx, name); err != nil || taken {
			return nil, RefusedUnknown, err
		}
		t, _, err = insertToken(ctx, tx, in.by, TokenSpec{Name: name, Role: askd.RoleHuman, Access: askd.AccessViewer})
		return t, "", err
	}
	return s.signInIdentity(ctx, in)
}

// fromProxy reports whether id is an identity the proxy vouches for.
func fromProxy(id *askd.Identity) bool { return id.Issuer == askd.ProxyIssuer }
