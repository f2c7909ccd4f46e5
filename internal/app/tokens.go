package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"github.com/askd-dev/askd"
)

// tokenPrefix marks askd tokens so they are recognisable in configs and by
// secret scanners.
const tokenPrefix = "askd_"

// HashToken returns the stored form of a token: hex SHA-256. Tokens are 160
// random bits, so a fast hash is enough; no salt is needed against guessing.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// CreateToken makes a new token for name with role and returns its secret,
// which is shown once and never stored. A name in use is ECONFLICT.
func CreateToken(ctx context.Context, store askd.Store, name string, role askd.Role) (string, error) {
	if err := askd.ValidName("name", name); err != nil {
		return "", err
	}
	if role != askd.RoleHuman && role != askd.RoleAgent {
		return "", askd.Errorf(askd.EINVALID, "role: %q is not human or agent", role)
	}
	secret := tokenPrefix + string(role[0]) + "_" + strings.ToLower(rand.Text())
	t := &askd.Token{Name: name, Role: role, Hash: HashToken(secret)}
	err := store.Update(ctx, func(tx askd.Tx) error { return tx.CreateToken(ctx, t) })
	if err != nil {
		return "", err
	}
	return secret, nil
}

// Authenticate returns the caller a token belongs to, or EUNAUTHORIZED. The
// stored hash is compared in constant time.
func (s *Service) Authenticate(ctx context.Context, token string) (askd.Caller, error) {
	if token == "" {
		return askd.Caller{}, askd.Errorf(askd.EUNAUTHORIZED, "no token: send Authorization: Bearer <token>")
	}
	hash := HashToken(token)
	if c, ok := s.tokens.get(hash, s.now()); ok {
		return c, nil
	}
	var t *askd.Token
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		t, err = tx.TokenByHash(ctx, hash)
		return err
	})
	if askd.ErrorCode(err) == askd.ENOTFOUND || err == nil && subtle.ConstantTimeCompare([]byte(t.Hash), []byte(hash)) != 1 {
		return askd.Caller{}, askd.Errorf(askd.EUNAUTHORIZED, "unknown or revoked token")
	}
	if err != nil {
		return askd.Caller{}, err
	}
	c := askd.Caller{Name: t.Name, Role: t.Role, Session: t.Name}
	s.tokens.put(hash, c, s.now())
	return c, nil
}

// tokenTTL is how long a verified token is remembered. A revocation (which
// `askd token revoke` writes to the database, maybe from another process)
// takes effect within this time.
const tokenTTL = 5 * time.Second

// tokenCache remembers verified tokens by hash, so a busy agent does not cost
// a database read per request.
type tokenCache struct {
	mu sync.Mutex
	m  map[string]cachedToken
}

type cachedToken struct {
	caller askd.Caller
	until  time.Time
}

func (c *tokenCache) get(hash string, now time.Time) (askd.Caller, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[hash]
	if !ok || now.After(e.until) {
		return askd.Caller{}, false
	}
	return e.caller, true
}

func (c *tokenCache) put(hash string, caller askd.Caller, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > 10000 {
		c.m = map[string]cachedToken{} // bounded: forget all rather than grow
	}
	c.m[hash] = cachedToken{caller: caller, until: now.Add(tokenTTL)}
}

// Bootstrap creates one human and one agent token when the database has none
// and returns their secrets; on a database with tokens it returns empty strings.
func Bootstrap(ctx context.Context, store askd.Store) (human, agent string, err error) {
	var n int
	err = store.View(ctx, func(tx askd.Tx) error {
		ts, err := tx.Tokens(ctx)
		n = len(ts)
		return err
	})
	if err != nil || n > 0 {
		return "", "", err
	}
	if human, err = CreateToken(ctx, store, "owner", askd.RoleHuman); err != nil {
		if askd.ErrorCode(err) == askd.ECONFLICT { // another process bootstrapped first
			return "", "", nil
		}
		return "", "", err
	}
	if agent, err = CreateToken(ctx, store, "agent", askd.RoleAgent); err != nil {
		return "", "", err
	}
	return human, agent, nil
}

type callerKey struct{}

// WithCaller returns ctx carrying the authenticated caller, for adapters that
// hand requests to one another (the HTTP server to the MCP handler).
func WithCaller(ctx context.Context, c askd.Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller WithCaller stored, and whether there was one.
func CallerFrom(ctx context.Context) (askd.Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(askd.Caller)
	return c, ok
}
