package app

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"slices"
	"strings"
	"time"

	"github.com/askd-dev/askd"
)

// # Signing in with an OpenID Connect provider (SPEC §15)
//
// BeginOIDC starts a sign-in: a random state (sent to the provider), a
// binding (kept in the browser's cookie), a nonce and a PKCE verifier,
// stored as a provider sign-in that the callback takes once, within
// ProviderSignInTTL. FinishOIDC takes it by the state the provider sent
// back, checks the browser's binding, has the Provider exchange the code
// and verify the ID token (signature, issuer, audience, expiry, nonce),
// and signs the identity in (identity.go). The protocol is the Provider's
// (internal/oidc); who signs in as whom is decided here.

const (
	// ProviderSignInTTL is how long a sign-in begun at the provider may
	// take to come back: the state cookie lives as long.
	ProviderSignInTTL = 10 * time.Minute
	// MaxProviderSignIns bounds the sign-ins begun and not back, which
	// anyone may begin: past it the oldest give way (their callback is
	// then refused, and the person clicks again), so a flood grows nothing.
	MaxProviderSignIns = 10000
)

// OIDC is an OpenID Connect provider people sign in with, and its rules.
type OIDC struct {
	Name     string // the sign-in page's "Sign in with Name"
	Issuer   string // the provider's issuer URL, as its ID tokens' iss
	Provider Provider
	// Allow: an identity may sign in only when its claims match one of
	// these (--oidc-allow CLAIM=VALUE), and an unknown one then becomes a
	// person. None: every identity may, but only a known one signs in
	// unless RoleClaim is set.
	Allow []ClaimMatch
	// RoleClaim names the claim whose values say a person's role at every
	// sign-in: admin when one of them is in Admin, else approver when one
	// is in Approver, else viewer. "": roles are askd's own.
	RoleClaim       string
	Admin, Approver []string
	// TeamClaim names the claim whose values, with TeamPrefix, are the
	// person's teams at every sign-in (teams that exist). "": teams are
	// askd's own.
	TeamClaim, TeamPrefix string
}

// ClaimMatch is one --oidc-allow: claim Claim has the value Value (one of
// its values, for a list).
type ClaimMatch struct{ Claim, Value string }

// Provider is the OpenID Connect protocol with one provider, as
// internal/oidc speaks it.
type Provider interface {
	// AuthCodeURL is where a browser signs in: the authorization endpoint
	// with the state, the nonce and the PKCE challenge (S256) of verifier.
	AuthCodeURL(ctx context.Context, state, nonce, verifier string) (string, error)
	// Exchange trades code (with verifier) for the signed-in identity: the
	// ID token verified (signature by the issuer's published keys, iss,
	// aud, exp, and its nonce equal to nonce) and its claims, with the
	// userinfo endpoint's where the provider has one. Any failure is an
	// error saying what failed.
	Exchange(ctx context.Context, code, verifier, nonce string) (*ProviderIdentity, error)
	// EndSessionURL is where a browser signs out of the provider, "" when
	// it publishes no end_session_endpoint.
	EndSessionURL(ctx context.Context) (string, error)
}

// ProviderIdentity is whom a provider signed in: its issuer, the subject
// (sub) and the claims, verified.
type ProviderIdentity struct {
	Issuer, Subject string
	Claims          map[string]any
}

// OIDCName is the provider's name for the sign-in page, "" with none.
func (s *Service) OIDCName() string {
	if s.cfg.OIDC == nil {
		return ""
	}
	return s.cfg.OIDC.Name
}

// OIDCIssuer is the provider's issuer, "" with none.
func (s *Service) OIDCIssuer() string {
	if s.cfg.OIDC == nil {
		return ""
	}
	return s.cfg.OIDC.Issuer
}

// BeginOIDC begins a sign-in with the provider: it returns where to send
// the browser and the binding for its cookie. EINVALID when no provider is
// configured; the provider's errors when it cannot be reached.
func (s *Service) BeginOIDC(ctx context.Context) (authURL, binding string, err error) {
	o := s.cfg.OIDC
	if o == nil {
		return "", "", askd.Errorf(askd.EINVALID, "no OpenID Connect provider is configured (askd serve --oidc-issuer)")
	}
	state, nonce, verifier := randomText(), randomText(), randomText()+randomText() // the verifier: 52 characters, RFC 7636's 43 to 128
	binding = randomText()
	now := s.now()
	authURL, err = o.Provider.AuthCodeURL(ctx, state, nonce, verifier)
	if err != nil {
		return "", "", err
	}
	err = s.store.Update(ctx, func(tx askd.Tx) error {
		if _, err := tx.SignIns.DeleteExpiredSignIns(ctx, now); err != nil {
			return err
		}
		if _, err := tx.SignIns.TrimProviderSignIns(ctx, MaxProviderSignIns-1); err != nil {
			return err
		}
		return tx.SignIns.CreateProviderSignIn(ctx, &askd.ProviderSignIn{
			State: HashToken(state), Binding: HashToken(binding), Nonce: nonce, Verifier: verifier,
			CreatedAt: now, ExpiresAt: now.Add(ProviderSignInTTL),
		})
	})
	if err != nil {
		return "", "", err
	}
	return authURL, binding, nil
}

// randomText is 130 random bits in lower case base32.
func randomText() string { return strings.ToLower(rand.Text()) }

// FinishOIDC finishes the sign-in whose state the provider sent back with
// code, in the browser whose cookie holds binding, and returns the browser
// session's id. A state unknown, used, expired or begun in another
// browser, a code the provider refuses and an ID token that does not
// verify are RefusedFailed (EUNAUTHORIZED); an identity that may not sign
// in is refused with its reason (EFORBIDDEN). Nothing is changed by a
// refusal but the provider sign-in, which is used up either way.
func (s *Service) FinishOIDC(ctx context.Context, state, binding, code string) (string, error) {
	o := s.cfg.OIDC
	if o == nil {
		return "", askd.Errorf(askd.EINVALID, "no OpenID Connect provider is configured (askd serve --oidc-issuer)")
	}
	if state == "" || binding == "" || code == "" {
		return "", refuse(RefusedFailed, "the sign-in came back without its state, its code or this browser's cookie: sign in again")
	}
	now := s.now()
	var p *askd.ProviderSignIn
	err := s.store.Update(ctx, func(tx askd.Tx) (err error) {
		p, err = tx.SignIns.TakeProviderSignIn(ctx, HashToken(state))
		return err
	})
	switch {
	case askd.ErrorCode(err) == askd.ENOTFOUND:
		return "", refuse(RefusedFailed, "this sign-in is unknown or was already used: sign in again")
	case err != nil:
		return "", err
	case subtle.ConstantTimeCompare([]byte(p.Binding), []byte(HashToken(binding))) != 1:
		return "", refuse(RefusedFailed, "this sign-in was begun in another browser: sign in again")
	case !now.Before(p.ExpiresAt):
		return "", refuse(RefusedFailed, "this sign-in took longer than %d minutes: sign in again", int(ProviderSignInTTL/time.Minute))
	}
	who, err := o.Provider.Exchange(ctx, code, p.Verifier, p.Nonce)
	if err != nil {
		s.cfg.Logger.Warn("sign-in with the provider failed", "issuer", o.Issuer, "err", err)
		return "", refuse(RefusedFailed, "the provider's answer did not verify: sign in again")
	}
	if who.Issuer != o.Issuer || who.Subject == "" {
		return "", refuse(RefusedFailed, "the provider's answer names another issuer or no subject")
	}
	return s.signInIdentity(ctx, s.oidcSignIn(o, who))
}

// OIDCEndSession is where a browser signs out of the provider, "" when it
// has no end_session_endpoint or no provider is configured.
func (s *Service) OIDCEndSession(ctx context.Context) (string, error) {
	if s.cfg.OIDC == nil {
		return "", nil
	}
	return s.cfg.OIDC.Provider.EndSessionURL(ctx)
}

// oidcSignIn is the sign-in of who under o's rules.
func (s *Service) oidcSignIn(o *OIDC, who *ProviderIdentity) identitySignIn {
	in := identitySignIn{
		issuer: o.Issuer, subject: who.Subject, claims: who.Claims, via: askd.ViaOIDC + o.Issuer,
		by: askd.Caller{Name: "oidc:" + o.Issuer, Role: askd.RoleHuman, Access: askd.AccessAdmin},
	}
	allowed := len(o.Allow) == 0 || slices.ContainsFunc(o.Allow, func(m ClaimMatch) bool { return hasClaim(who.Claims, m.Claim, m.Value) })
	in.newPerson = func(ctx context.Context, tx askd.Tx) (*askd.Token, SignInRefusal, error) {
		switch {
		case !allowed:
			return nil, RefusedNotAllowed, nil
		case len(o.Allow) == 0 && o.RoleClaim == "":
			return nil, RefusedUnknown, nil // nothing restricts who may
		}
		name, err := freePersonName(ctx, tx, personName(userName(who.Claims)))
		if err != nil {
			return nil, "", err
		}
		t, _, err := insertToken(ctx, tx, in.by, TokenSpec{Name: name, Role: askd.RoleHuman, Access: o.role(who.Claims)})
		return t, "", err
	}
	in.sync = func(ctx context.Context, tx askd.Tx, t *askd.Token) error {
		if !allowed {
			return refuse(RefusedNotAllowed, "this account may not sign in to askd (--oidc-allow): ask an admin (%s)", strings.Join(adminNames(ctx, tx), ", "))
		}
		// The address mailed while the person has not chosen one (mail.go).
		if err := setProviderEmail(ctx, tx, t.Name, verifiedEmail(who.Claims)); err != nil {
			return err
		}
		if o.RoleClaim != "" {
			if err := syncRole(ctx, tx, in.by, t, o.role(who.Claims)); err != nil {
				return err
			}
		}
		if o.TeamClaim != "" {
			return syncTeams(ctx, tx, in.by, t.Name, o.teams(who.Claims))
		}
		return nil
	}
	return in
}

// userName is what a new person is named after: preferred_username, else
// the email address's local part.
func userName(claims map[string]any) string {
	if v, ok := claims["preferred_username"].(string); ok && strings.TrimSpace(v) != "" {
		return v
	}
	if v, ok := claims["email"].(string); ok {
		local, _, _ := strings.Cut(v, "@")
		return local
	}
	return ""
}

// role is the role claims give: admin, approver or viewer (viewer, too,
// without a role claim).
func (o *OIDC) role(claims map[string]any) askd.Access {
	if o.RoleClaim == "" {
		return askd.AccessViewer
	}
	vs := claimValues(claims, o.RoleClaim)
	switch {
	case slices.ContainsFunc(o.Admin, func(a string) bool { return slices.Contains(vs, a) }):
		return askd.AccessAdmin
	case slices.ContainsFunc(o.Approver, func(a string) bool { return slices.Contains(vs, a) }):
		return askd.AccessApprover
	}
	return askd.AccessViewer
}

// teams are the team names claims give: the team claim's values that
// start with the prefix, without it.
func (o *OIDC) teams(claims map[string]any) []string {
	var out []string
	for _, v := range claimValues(claims, o.TeamClaim) {
		if name, ok := strings.CutPrefix(v, o.TeamPrefix); ok && name != "" {
			out = append(out, name)
		}
	}
	return out
}

// syncRole sets t's role to want, when it is another, recorded as by's.
func syncRole(ctx context.Context, tx askd.Tx, by askd.Caller, t *askd.Token, want askd.Access) error {
	if t.Access == want {
		return nil
	}
	if err := tx.Tokens.SetAccess(ctx, t.Name, want); err != nil {
		return err
	}
	was := t.Access
	t.Access = want
	return recordConfig(ctx, tx, by, askd.ConfigTokenRole, map[string]any{"name": t.Name, "access": want, "was": was})
}

// syncTeams makes person a member of the teams named in want that exist,
// and of no other, recorded as by's: one row per team changed. Names of
// teams that do not exist are passed over: teams are made in askd.
func syncTeams(ctx context.Context, tx askd.Tx, by askd.Caller, person string, want []string) error {
	teams, err := tx.Teams.Teams(ctx)
	if err != nil {
		return err
	}
	for _, t := range teams {
		in, wanted := slices.Contains(t.Members, person), slices.Contains(want, t.Name)
		switch {
		case wanted && !in:
			if err := tx.Teams.AddMembers(ctx, t.Name, []string{person}); err != nil {
				return err
			}
			err = recordConfig(ctx, tx, by, askd.ConfigTeamMembers, map[string]any{"name": t.Name, "added": []string{person}})
		case in && !wanted:
			if err := tx.Teams.RemoveMember(ctx, t.Name, person); err != nil {
				return err
			}
			err = recordConfig(ctx, tx, by, askd.ConfigTeamMembers, map[string]any{"name": t.Name, "removed": []string{person}})
		}
		if err != nil {
			return err
		}
	}
	return nil
}
