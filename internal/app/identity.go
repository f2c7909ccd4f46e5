package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/askd-dev/askd"
)

// # People who sign in through a provider or a proxy (SPEC §15)
//
// An identity (askd.Identity: an issuer and the subject it gives an
// account) is linked to one person, a human token, and only by issuer and
// subject: a provider's user named like an askd person is not that person.
// signInIdentity is the one place a provider's or proxy's sign-in is
// decided, in one transaction: the identity's person, or a new person when
// something restricts who may become one, or a refusal with nothing
// changed; then, for a provider with a role or team claim, the person's
// role and teams as the claims say; then the browser session. Every change
// is a row of the audit chain whose actor is the provider (oidc:ISSUER) or
// the proxy.

// DefaultProviderSessionMax is how long a browser session signed in by a
// provider or proxy lasts at most, unless Config.ProviderSessionMax says.
const DefaultProviderSessionMax = 12 * time.Hour

// SignInRefusal says why a provider's or proxy's sign-in was refused; the
// sign-in page has a sentence for each.
type SignInRefusal string

const (
	// RefusedUnknown: an identity askd does not know, and nothing lets it
	// become a person (no --oidc-allow, no role mapping; for the proxy, no
	// --auth-proxy-create-people).
	RefusedUnknown SignInRefusal = "unknown"
	// RefusedRevoked: the identity's person was revoked.
	RefusedRevoked SignInRefusal = "revoked"
	// RefusedNotAllowed: the claims match no --oidc-allow.
	RefusedNotAllowed SignInRefusal = "not-allowed"
	// RefusedFailed: the sign-in itself failed: a state that is wrong,
	// used or expired, a code the provider refused, an ID token that does
	// not verify.
	RefusedFailed SignInRefusal = "failed"
)

// RefusedError is a refused sign-in: EUNAUTHORIZED for RefusedFailed,
// EFORBIDDEN for the others, with the reason.
type RefusedError struct {
	Refusal SignInRefusal
	Err     *askd.Error
}

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Refusal is why err refused a sign-in, or "" when it is no refusal.
func Refusal(err error) SignInRefusal {
	var r *RefusedError
	if errors.As(err, &r) {
		return r.Refusal
	}
	return ""
}

func refuse(why SignInRefusal, format string, args ...any) error {
	code := askd.EFORBIDDEN
	if why == RefusedFailed {
		code = askd.EUNAUTHORIZED
	}
	return &RefusedError{Refusal: why, Err: askd.Errorf(code, format, args...)}
}

// identitySignIn is one sign-in of an identity, as a provider or the proxy
// vouched for it.
type identitySignIn struct {
	issuer, subject string
	claims          map[string]any // a provider's verified claims; nil for the proxy
	via             string         // how the browser signed in (askd.ViaOIDC+issuer, askd.ViaProxy)
	by              askd.Caller    // the audit chain's actor: oidc:ISSUER or proxy
	// newPerson is the person an unknown identity is to sign in as, made
	// by in.by or found, or nil with the refusal why: the rules of its
	// provider or of the proxy. A person made by a sign-in has a token
	// whose secret is shown to nobody (askd token rotate makes one).
	newPerson func(ctx context.Context, tx askd.Tx) (*askd.Token, SignInRefusal, error)
	// sync brings a known person's role and teams in line with the claims,
	// when the provider says them; nil when it does not.
	sync func(ctx context.Context, tx askd.Tx, t *askd.Token) error
}

// signInIdentity signs in the identity in, or refuses it with nothing
// changed (a *RefusedError), and returns the browser session's id.
func (s *Service) signInIdentity(ctx context.Context, in identitySignIn) (string, error) {
	now := s.now()
	var id string
	var ended []string
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		person, err := s.identityPerson(ctx, tx, in, now)
		if err != nil {
			return err
		}
		if in.sync != nil {
			if err := in.sync(ctx, tx, person); err != nil {
				return err
			}
		}
		id, ended, err = startBrowserSession(ctx, tx, person.Name, in.via, now, s.browserLimit(in.via))
		return err
	})
	if r := Refusal(err); r != "" && r != RefusedFailed {
		// The operator reads who was refused here: the subject is what
		// askd token link needs.
		s.cfg.Logger.Warn("sign-in refused", "issuer", in.issuer, "subject", in.subject, "reason", string(r))
	}
	if err != nil {
		return "", err
	}
	s.forgetBrowsers(ended)
	s.notifyKept.forget() // a provider's email may have changed (mail.go)
	return id, nil
}

// identityPerson is the person in's identity signs in as: the one linked
// to it, or a new one when in's rules make one; else a refusal.
func (s *Service) identityPerson(ctx context.Context, tx askd.Tx, in identitySignIn, now time.Time) (*askd.Token, error) {
	linked, err := tx.Identities.Identity(ctx, in.issuer, in.subject)
	switch {
	case askd.ErrorCode(err) == askd.ENOTFOUND:
	case err != nil:
		return nil, err
	case linked.RevokedAt != nil:
		return nil, refuse(RefusedRevoked, "this account's person was revoked in askd: an admin must link it again (askd token link)")
	default:
		t, err := tx.Tokens.TokenByName(ctx, linked.Person)
		if askd.ErrorCode(err) == askd.ENOTFOUND || err == nil && t.Role != askd.RoleHuman {
			// Gone without its identity marked (a store changed by hand):
			// as revoked, never a new person.
			return nil, refuse(RefusedRevoked, "this account's person is no longer in askd: an admin must link it again (askd token link)")
		}
		return t, err
	}
	t, why, err := in.newPerson(ctx, tx)
	if err != nil {
		return nil, err
	}
	if why != "" {
		return nil, refuse(why, "askd does not know this account, and may not make it a person: ask an admin (%s) to let you in", strings.Join(adminNames(ctx, tx), ", "))
	}
	if err := linkIdentity(ctx, tx, in.by, &askd.Identity{Issuer: in.issuer, Subject: in.subject, Person: t.Name, LinkedAt: now}); err != nil {
		return nil, err
	}
	return t, nil
}

// adminNames are the admins' names, for a refusal that says whom to ask;
// none when they cannot be read (the refusal says "an admin" then).
func adminNames(ctx context.Context, tx askd.Tx) []string {
	ts, err := tx.Tokens.Tokens(ctx)
	if err != nil {
		return nil
	}
	var out []string
	for _, t := range ts {
		if t.Role == askd.RoleHuman && t.Access == askd.AccessAdmin {
			out = append(out, t.Name)
		}
	}
	return out
}

// freePersonName is a name for a new person from want (a provider's
// preferred_username, the proxy's header value): itself when it is a valid
// name that no token has and no identity was ever linked to (so that a
// new person never takes up a revoked one's name, whose history and rules
// speak of them), else with -2, -3, ... after it.
func freePersonName(ctx context.Context, tx askd.Tx, want string) (string, error) {
	for i := 1; ; i++ {
		name := want
		if i > 1 {
			name = fmt.Sprintf("%s-%d", want, i)
		}
		taken, err := nameTaken(ctx, tx, name)
		if err != nil || !taken {
			return name, err
		}
	}
}

// nameTaken reports whether a token has name, or an identity was linked to
// a person of that name.
func nameTaken(ctx context.Context, tx askd.Tx, name string) (bool, error) {
	if _, err := tx.Tokens.TokenByName(ctx, name); err == nil {
		return true, nil
	} else if askd.ErrorCode(err) != askd.ENOTFOUND {
		return false, err
	}
	ids, err := tx.Identities.IdentitiesOf(ctx, name)
	return len(ids) > 0, err
}

// personName makes a person's name of a provider's user name: lower case
// ASCII letters and digits, with '.', '_' and '-' kept and any other run
// of characters one '-'; at most 64 characters; "person" when nothing is
// left. Only letters askd's names cannot confuse: a provider's user name
// is the user's to choose.
func personName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if b.Len() >= 64 {
			break
		}
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_'):
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	name := strings.Trim(b.String(), "-.")
	if name == "" {
		return "person"
	}
	return name
}

// claimValues are the values of claim name as text: a string, a number or
// a boolean, or a list of them; none when it is absent or of another kind.
func claimValues(claims map[string]any, name string) []string {
	var out []string
	var add func(v any)
	add = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case bool, float64, int, int64:
			out = append(out, fmt.Sprint(v))
		case []any:
			for _, e := range v {
				if _, nested := e.([]any); !nested {
					add(e)
				}
			}
		case []string:
			out = append(out, v...)
		}
	}
	add(claims[name])
	return out
}

// hasClaim reports whether claim name has the value want (one of them, for
// a list).
func hasClaim(claims map[string]any, name, want string) bool {
	return slices.Contains(claimValues(claims, name), want)
}
