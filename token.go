package askd

import (
	"context"
	"time"
)

// Token is a credential. Only its SHA-256 hash is stored.
type Token struct {
	Name      string    `json:"name"`
	Role      Role      `json:"role"`
	Access    Access    `json:"access,omitempty"` // human tokens: what the person may do (team.go)
	Owner     string    `json:"owner,omitempty"`  // agent tokens: a person or "team:NAME"; "": everyone's
	Hash      string    `json:"-"`
	CreatedAt time.Time `json:"created_at"`
}

// TokenTx is what a transaction may do with tokens.
type TokenTx interface {
	// CreateToken stores t; a name in use is ECONFLICT.
	CreateToken(ctx context.Context, t *Token) error
	TokenByHash(ctx context.Context, hash string) (*Token, error)
	Tokens(ctx context.Context) ([]*Token, error)
	// RevokeToken deletes the named token; ENOTFOUND when there is none.
	RevokeToken(ctx context.Context, name string) error
	// TokenByName returns the named token; ENOTFOUND when there is none.
	TokenByName(ctx context.Context, name string) (*Token, error)
	// SetAccess sets a human token's Access, SetOwner an agent token's
	// Owner; ENOTFOUND when there is no such token of that role.
	SetAccess(ctx context.Context, name string, a Access) error
	SetOwner(ctx context.Context, name, owner string) error
	// SetTokenHash replaces the hash of the token named name (a new
	// secret); ENOTFOUND when there is none, ECONFLICT when another token
	// has that hash.
	SetTokenHash(ctx context.Context, name, hash string) error
}

// SignInCode is what a sign-in link carries (SPEC §7): random, short-lived
// and single-use, exchanged for a BrowserSession. Only its SHA-256 is stored.
type SignInCode struct {
	Hash      string
	Human     string // the name of the human token it signs in as
	CreatedAt time.Time
	ExpiresAt time.Time
}

// BrowserSession is a person signed in to the inbox in one browser, whose
// cookie holds a random id of which only the SHA-256 is stored. Signing out
// deletes it. Not to be confused with a session, an agent's run.
type BrowserSession struct {
	Hash       string
	Human      string // the name of the human token it belongs to
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
	// Via is how the browser signed in: ViaLink, ViaToken, ViaProxy, or
	// ViaOIDC and the provider's issuer; "" for browser sessions older
	// than the record.
	Via string
}

// How a browser signed in (BrowserSession.Via).
const (
	ViaLink  = "link"  // a sign-in link's code
	ViaToken = "token" // a human token pasted into the sign-in form
	ViaProxy = "proxy" // a trusted reverse proxy's header
	ViaOIDC  = "oidc:" // prefix: "oidc:" and the provider's issuer URL
)

// SignInTx is what a transaction may do with sign-in codes and browser
// sessions.
type SignInTx interface {
	// CreateSignInCode stores c; ENOTFOUND when its human token does not
	// exist. Revoking the token deletes its codes.
	CreateSignInCode(ctx context.Context, c *SignInCode) error
	// TakeSignInCode deletes the code with the hash and returns it, expired
	// or not; ENOTFOUND when there is none. Of transactions taking one code
	// at once, one gets it.
	TakeSignInCode(ctx context.Context, hash string) (*SignInCode, error)
	// CreateBrowserSession stores b; ENOTFOUND when its human token does not
	// exist. Revoking the token deletes its browser sessions.
	CreateBrowserSession(ctx context.Context, b *BrowserSession) error
	// BrowserSession returns the browser session with the hash, expired or
	// not; ENOTFOUND when there is none.
	BrowserSession(ctx context.Context, hash string) (*BrowserSession, error)
	// BrowserSessionsOf returns the browser sessions of the human token
	// named human, expired or not, least recently seen first.
	BrowserSessionsOf(ctx context.Context, human string) ([]*BrowserSession, error)
	// TouchBrowserSession sets the LastSeenAt and ExpiresAt of the browser
	// session with the hash; ENOTFOUND when there is none.
	TouchBrowserSession(ctx context.Context, hash string, seen, expires time.Time) error
	// EndBrowserSession deletes the browser session with the hash (signing
	// out); ENOTFOUND when there is none.
	EndBrowserSession(ctx context.Context, hash string) error
	// DeleteExpiredSignIns removes the sign-in codes, browser sessions and
	// provider sign-ins whose ExpiresAt is before t, and returns how many
	// went.
	DeleteExpiredSignIns(ctx context.Context, t time.Time) (int, error)

	// CreateProviderSignIn stores p; ECONFLICT when its state is stored
	// already.
	CreateProviderSignIn(ctx context.Context, p *ProviderSignIn) error
	// TakeProviderSignIn deletes the provider sign-in whose state has the
	// hash and returns it, expired or not; ENOTFOUND when there is none. Of
	// transactions taking one at once, one gets it.
	TakeProviderSignIn(ctx context.Context, state string) (*ProviderSignIn, error)
	// TrimProviderSignIns deletes every provider sign-in but the keep most
	// recently created, and returns how many went.
	TrimProviderSignIns(ctx context.Context, keep int) (int, error)
}
