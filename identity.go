package askd

import (
	"context"
	"time"
)

// People sign in through their identity provider (SPEC §15): an identity
// is a person's account at an OpenID Connect provider, named by the
// provider's issuer and the subject (sub) it gives that account, or a name
// a trusted reverse proxy vouches for (issuer ProxyIssuer). A person is a
// human token; an identity is linked to one person by issuer and subject
// only, never by an email address or a user name.

// ProxyIssuer is the issuer of identities a trusted reverse proxy's header
// names (askd serve --auth-proxy-header): their subject is the header's
// value.
const ProxyIssuer = "proxy"

// Identity links a provider's account to a person.
type Identity struct {
	Issuer   string    `json:"issuer"`  // the provider's issuer URL, or ProxyIssuer
	Subject  string    `json:"subject"` // the provider's sub, or the proxy's header value
	Person   string    `json:"person"`  // the human token's name
	LinkedAt time.Time `json:"linked_at"`
	// RevokedAt is when the person was revoked: their identity signs in no
	// one until an admin links it again (askd token link).
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// IdentityTx is what a transaction may do with identities. An identity
// outlives its person's token: revoking the token marks it revoked
// (RevokeIdentitiesOf), so that it is refused rather than made a new
// person at its next sign-in.
type IdentityTx interface {
	// Identity returns the identity of issuer and subject; ENOTFOUND when
	// there is none.
	Identity(ctx context.Context, issuer, subject string) (*Identity, error)
	// IdentitiesOf returns the identities linked to person, revoked ones
	// too, by issuer then subject.
	IdentitiesOf(ctx context.Context, person string) ([]*Identity, error)
	// LinkIdentity stores id, in place of any identity of the same issuer
	// and subject (its person, time and revocation replaced); ENOTFOUND when
	// no human token is named id.Person.
	LinkIdentity(ctx context.Context, id *Identity) error
	// RevokeIdentitiesOf marks person's identities not yet revoked as
	// revoked at t, and returns how many it marked.
	RevokeIdentitiesOf(ctx context.Context, person string, t time.Time) (int, error)
}

// ProviderSignIn is a sign-in begun at an OpenID Connect provider and not
// yet back (SPEC §15): what the callback must find to take it, once. Its
// state (sent to the provider) and binding (kept in the browser's cookie)
// are stored as their SHA-256 like tokens; the nonce and the PKCE
// verifier, which the callback needs as they are, in the clear, for
// ExpiresAt's few minutes.
type ProviderSignIn struct {
	State     string // hex SHA-256 of the state parameter
	Binding   string // hex SHA-256 of the cookie's value
	Nonce     string
	Verifier  string
	CreatedAt time.Time
	ExpiresAt time.Time
}
