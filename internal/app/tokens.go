package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
	"sync"
	"sync/atomic"
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

// TokenSpec is a token to make: its name and role, a person's access
// (default approver), an agent's owner (a person, "team:NAME", or "" for
// everyone's).
type TokenSpec struct {
	Name   string
	Role   askd.Role
	Access askd.Access
	Owner  string
}

// newToken makes the token spec describes, recorded as by's change, and
// returns it with its secret (CreateToken says the rules).
func newToken(ctx context.Context, store askd.Store, by askd.Caller, spec TokenSpec) (*askd.Token, string, error) {
	var t *askd.Token
	var secret string
	err := store.Update(ctx, func(tx askd.Tx) (err error) {
		t, secret, err = insertToken(ctx, tx, by, spec)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return t, secret, nil
}

// insertToken makes the token spec describes in tx, recorded as by's
// change, and returns it with its secret.
func insertToken(ctx context.Context, tx askd.Tx, by askd.Caller, spec TokenSpec) (*askd.Token, string, error) {
	if err := askd.ValidName("name", spec.Name); err != nil {
		return nil, "", err
	}
	if spec.Role != askd.RoleHuman && spec.Role != askd.RoleAgent {
		return nil, "", askd.Errorf(askd.EINVALID, "role: %q is not human or agent", spec.Role)
	}
	if err := checkTokenSpec(&spec); err != nil {
		return nil, "", err
	}
	secret := newSecret(spec.Role)
	t := &askd.Token{Name: spec.Name, Role: spec.Role, Access: spec.Access, Owner: spec.Owner, Hash: HashToken(secret), CreatedAt: time.Now().UTC()}
	if err := checkRoute(ctx, tx, "owner", t.Owner); err != nil {
		return nil, "", err
	}
	if err := tx.Tokens.CreateToken(ctx, t); err != nil {
		return nil, "", err
	}
	fields := map[string]any{"name": t.Name, "role": t.Role, "access": t.Access, "owner": t.Owner}
	if err := recordConfig(ctx, tx, by, askd.ConfigTokenCreated, fields); err != nil {
		return nil, "", err
	}
	return t, secret, nil
}

// newSecret is a new token's secret: its role's prefix and 160 random bits.
func newSecret(role askd.Role) string { return TokenPrefix(role) + strings.ToLower(rand.Text()) }

// checkTokenSpec fills in a person's default access and refuses what does
// not fit the token's role.
func checkTokenSpec(spec *TokenSpec) error {
	switch spec.Role {
	case askd.RoleHuman:
		// A person's name is an owner or escalation target as it is:
		// "team:x" would name a team instead.
		if strings.HasPrefix(spec.Name, askd.TeamPrefix) {
			return askd.Errorf(askd.EINVALID, "name: %q starts with %q, which names a team where a person is meant", spec.Name, askd.TeamPrefix)
		}
		if spec.Owner != "" {
			return askd.Errorf(askd.EINVALID, "owner: only agent tokens have an owner")
		}
		if spec.Access == "" {
			spec.Access = askd.AccessApprover
		}
		if !spec.Access.Valid() {
			return askd.Errorf(askd.EINVALID, "role: %q is not one of admin, approver, viewer", spec.Access)
		}
	case askd.RoleAgent:
		if spec.Access != "" {
			return askd.Errorf(askd.EINVALID, "role: agent tokens have no role of admin, approver or viewer; those are people's")
		}
	}
	return nil
}

// TokenPrefix is how every token of role begins: askd_h_ or askd_a_. It
// says nothing secret, so a client may tell a token's role by it.
func TokenPrefix(role askd.Role) string { return tokenPrefix + string(role[0]) + "_" }

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
		t, err = tx.Tokens.TokenByHash(ctx, hash)
		return err
	})
	if askd.ErrorCode(err) == askd.ENOTFOUND || err == nil && subtle.ConstantTimeCompare([]byte(t.Hash), []byte(hash)) != 1 {
		return askd.Caller{}, askd.Errorf(askd.EUNAUTHORIZED, "unknown or revoked token")
	}
	if err != nil {
		return askd.Caller{}, err
	}
	c := askd.Caller{Name: t.Name, Role: t.Role, Access: t.Access, Owner: t.Owner, Session: t.Name, TokenHash: hash}
	s.tokens.put(hash, c, s.now())
	return c, nil
}

// KnownToken reports whether token is one this service has verified before
// (and not yet found revoked), without looking at the store. The HTTP edge
// uses it to keep serving tokens in use from an address whose failed
// attempts are throttled; such a token is still authenticated as usual.
func (s *Service) KnownToken(token string) bool {
	return token != "" && s.tokens.seen(HashToken(token))
}

// tokenTTL is how long a verified token is remembered. A revocation (which
// `askd token revoke` writes to the database, maybe from another process),
// like a change of a person's role or an agent's owner, takes effect within
// this time: for new requests when the remembered token
// expires, for open streams and waits at the next check of the tokens in use
// (Config.TokenCheckInterval, by default this).
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

// seen reports whether hash was verified since the cache was last reset,
// even if its entry has expired.
func (c *tokenCache) seen(hash string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.m[hash]
	return ok
}

// forget drops hash, found revoked.
func (c *tokenCache) forget(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, hash)
}

func (c *tokenCache) put(hash string, caller askd.Caller, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > 10000 {
		c.m = map[string]cachedToken{} // bounded: forget all rather than grow
	}
	c.m[hash] = cachedToken{caller: caller, until: now.Add(tokenTTL)}
}

// Bootstrap creates one human token (owner, an admin) and one agent token
// (agent) when the database has none, as Itself, and returns their secrets;
// on a database with tokens it returns empty strings. askd serve calls it
// on the store before its Service exists.
func Bootstrap(ctx context.Context, store askd.Store) (human, agent string, err error) {
	var n int
	err = store.View(ctx, func(tx askd.Tx) error {
		ts, err := tx.Tokens.Tokens(ctx)
		n = len(ts)
		return err
	})
	if err != nil || n > 0 {
		return "", "", err
	}
	if _, human, err = newToken(ctx, store, Itself, TokenSpec{Name: "owner", Role: askd.RoleHuman, Access: askd.AccessAdmin}); err != nil {
		if askd.ErrorCode(err) == askd.ECONFLICT { // another process bootstrapped first
			return "", "", nil
		}
		return "", "", err
	}
	if _, agent, err = newToken(ctx, store, Itself, TokenSpec{Name: "agent", Role: askd.RoleAgent}); err != nil {
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

// # Revocation of tokens in use
//
// A token is looked up once per tokenTTL (the cache above), so a revoked
// token's new requests fail within that time. Streams and waits outlive any
// request: they hold their caller's token in liveTokens, and a background
// check (watchTokens) looks up every held token once per
// Config.TokenCheckInterval. One found gone is revoked here: its channel
// closes, every holder is woken, and poll and Wait fail with EUNAUTHORIZED.
// Requests pay nothing for this; a wait pays one map insert.

// errRevoked is the error a stream or wait ends with when its token is
// revoked.
func errRevoked() error {
	return askd.Errorf(askd.EUNAUTHORIZED, "token revoked")
}

// liveTokens is the set of tokens held by open streams and waits.
type liveTokens struct {
	mu sync.Mutex
	m  map[string]*liveToken // by hash
	// revoked counts entries of m found revoked, so that poll looks at m
	// only when there is one (almost never).
	revoked atomic.Int32
}

// liveToken is one token in use.
type liveToken struct {
	holds   map[*tokenHold]struct{}
	gone    chan struct{} // closed when the token is found revoked
	revoked bool
}

// tokenHold is one stream's or wait's hold on a token; fn, if not nil, is
// called (and must not block) when the token is revoked.
type tokenHold struct{ fn func() }

// Hold records that a stream or wait of c's runs, until release is called.
// The channel closes when c's token is found revoked; it is nil (never
// closes) for a caller without a token.
func (s *Service) Hold(c askd.Caller) (revoked <-chan struct{}, release func()) {
	return s.live.hold(c.TokenHash, nil)
}

func (l *liveTokens) hold(hash string, fn func()) (<-chan struct{}, func()) {
	if hash == "" {
		return nil, func() {}
	}
	h := &tokenHold{fn: fn}
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*liveToken{}
	}
	e := l.m[hash]
	if e == nil {
		e = &liveToken{holds: map[*tokenHold]struct{}{}, gone: make(chan struct{})}
		l.m[hash] = e
	}
	e.holds[h] = struct{}{}
	l.mu.Unlock()
	return e.gone, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(e.holds, h)
		if len(e.holds) == 0 && l.m[hash] == e {
			delete(l.m, hash)
			if e.revoked {
				l.revoked.Add(-1)
			}
		}
	}
}

// isRevoked reports whether hash is held and was found revoked.
func (l *liveTokens) isRevoked(hash string) bool {
	if hash == "" || l.revoked.Load() == 0 {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.m[hash]
	return e != nil && e.revoked
}

// held returns the hashes held and not yet found revoked.
func (l *liveTokens) held() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.m))
	for h, e := range l.m {
		if !e.revoked {
			out = append(out, h)
		}
	}
	return out
}

// revoke marks hash revoked, closes its channel and wakes its holders.
func (l *liveTokens) revoke(hash string) {
	l.mu.Lock()
	e := l.m[hash]
	if e == nil || e.revoked {
		l.mu.Unlock()
		return
	}
	e.revoked = true
	l.revoked.Add(1)
	close(e.gone)
	var fns []func()
	for h := range e.holds {
		if h.fn != nil {
			fns = append(fns, h.fn)
		}
	}
	l.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// watchTokens checks the tokens in use once per interval until ctx ends.
func (s *Service) watchTokens(ctx context.Context) {
	t := time.NewTicker(s.cfg.TokenCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.checkTokens(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("check tokens in use", "err", err)
		}
	}
}

// checkTokens looks up every token held by a stream or wait and revokes
// those no longer in the store. A store error revokes nothing.
func (s *Service) checkTokens(ctx context.Context) error {
	hashes := s.live.held()
	if len(hashes) == 0 {
		return nil
	}
	var gone []string
	err := s.store.View(ctx, func(tx askd.Tx) error {
		gone = gone[:0]
		for _, h := range hashes {
			var err error
			if b, ok := strings.CutPrefix(h, browserHold); ok {
				var bs *askd.BrowserSession
				// Signed out, expired, or its token revoked (which deletes it).
				if bs, err = tx.SignIns.BrowserSession(ctx, b); err == nil && !s.now().Before(bs.ExpiresAt) {
					err = askd.Errorf(askd.ENOTFOUND, "browser session expired")
				}
			} else {
				_, err = tx.Tokens.TokenByHash(ctx, h)
			}
			switch askd.ErrorCode(err) {
			case "":
			case askd.ENOTFOUND:
				gone = append(gone, h)
			default:
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, h := range gone {
		s.tokens.forget(h)
		s.browsers.forget(strings.TrimPrefix(h, browserHold))
		s.live.revoke(h)
	}
	return nil
}
