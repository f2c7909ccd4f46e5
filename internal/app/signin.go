package app

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	"github.com/askd-dev/askd"
)

// Signing in to the inbox (SPEC §7). A sign-in link carries a random code,
// good for one use within SignInCodeTTL; the browser exchanges it (or a
// human token pasted into the sign-in form) for a browser session, whose
// random id is all its cookie holds. Signing out deletes the browser
// session; revoking the human token deletes its codes and browser sessions.
// Codes and ids are 130 random bits, stored as their SHA-256 like tokens.

// BrowserCookie names the cookie holding a browser session's id. The HTTP API
// and the inbox page both read it, and both resolve it with BrowserCaller.
const BrowserCookie = "askd_browser"

const (
	// SignInCodeTTL is how long a sign-in link works: time enough to open it
	// from the terminal it was printed in, too little for one found later in
	// a scrollback or a log.
	SignInCodeTTL = 10 * time.Minute
	// BrowserSessionIdle ends a browser session not used for this long.
	BrowserSessionIdle = 30 * 24 * time.Hour
	// BrowserSessionMax ends a browser session this long after signing in,
	// however much it is used.
	BrowserSessionMax = 90 * 24 * time.Hour
	// MaxBrowserSessions bounds one human token's browser sessions: signing
	// in once more signs out the least recently used one (its push
	// subscriptions go with it). Signing in is not refused, since a person
	// cannot sign out of a browser whose cookie is lost, and would be
	// locked out for up to BrowserSessionIdle; only the token's holder can
	// sign in, and they may sign out any of its sessions already. Room for
	// every browser and device a person uses.
	MaxBrowserSessions = 50
	// browserTouchEvery is how often a browser session in use has its
	// last-seen time (and so its idle expiry) written: not on every request.
	browserTouchEvery = time.Hour
)

// CreateSignInCode makes a sign-in code for the human token named human
// (admins only), good for one use within SignInCodeTTL, and returns it with
// what is stored of it: that token's name and the code's expiry. With human
// empty it is the only human token; with none or several that is EINVALID,
// as is an agent token's name; an unknown name is ENOTFOUND.
func (s *Service) CreateSignInCode(ctx context.Context, c askd.Caller, human string) (string, *askd.SignInCode, error) {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return "", nil, err
	}
	now := s.now()
	code := strings.ToLower(rand.Text())
	var out *askd.SignInCode
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		ts, err := tx.Tokens.Tokens(ctx)
		if err != nil {
			return err
		}
		name, err := humanTokenName(ts, human, "--human")
		if err != nil {
			return err
		}
		if _, err := tx.SignIns.DeleteExpiredSignIns(ctx, now); err != nil {
			return err
		}
		out = &askd.SignInCode{Hash: HashToken(code), Human: name, CreatedAt: now, ExpiresAt: now.Add(SignInCodeTTL)}
		return tx.SignIns.CreateSignInCode(ctx, out)
	})
	if err != nil {
		return "", nil, err
	}
	return code, out, nil
}

// humanTokenName returns the name of the human token in ts named want, or,
// with want empty, of the only one. flag names the command-line flag that
// chooses one, for the errors: with none or several that is EINVALID, as is
// an agent token's name; an unknown name is ENOTFOUND.
func humanTokenName(ts []*askd.Token, want, flag string) (string, error) {
	var humans []string
	for _, t := range ts {
		if want != "" && t.Name == want {
			if t.Role != askd.RoleHuman {
				return "", askd.Errorf(askd.EINVALID, "%q is an agent token; %s takes a human token's name", want, flag)
			}
			return t.Name, nil
		}
		if t.Role == askd.RoleHuman {
			humans = append(humans, t.Name)
		}
	}
	switch {
	case want != "":
		return "", askd.Errorf(askd.ENOTFOUND, "no token named %q", want)
	case len(humans) == 1:
		return humans[0], nil
	case len(humans) == 0:
		return "", askd.Errorf(askd.EINVALID, "there is no human token: create one with askd token create --human NAME")
	}
	return "", askd.Errorf(askd.EINVALID, "there are several human tokens (%s): choose one with %s NAME", strings.Join(humans, ", "), flag)
}

// SignInWithCode takes a sign-in code, which then works no more, and starts
// a browser session for its human token; it returns the browser session's
// id, the cookie's value. A code unknown, used or expired is EUNAUTHORIZED.
func (s *Service) SignInWithCode(ctx context.Context, code string) (string, error) {
	now := s.now()
	var id string
	var ended []string
	var expired bool
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		id, ended, expired = "", nil, false
		c, err := tx.SignIns.TakeSignInCode(ctx, HashToken(code))
		if askd.ErrorCode(err) == askd.ENOTFOUND {
			return nil
		}
		if err != nil {
			return err
		}
		if !now.Before(c.ExpiresAt) {
			expired = true // taken all the same: it is of no more use
			return nil
		}
		id, ended, err = startBrowserSession(ctx, tx, c.Human, askd.ViaLink, now, BrowserSessionMax)
		return err
	})
	switch {
	case err != nil:
		return "", err
	case expired:
		return "", askd.Errorf(askd.EUNAUTHORIZED, "this sign-in link has expired: links work for %d minutes", int(SignInCodeTTL/time.Minute))
	case id == "":
		return "", askd.Errorf(askd.EUNAUTHORIZED, "this sign-in link is unknown or was already used")
	}
	s.forgetBrowsers(ended)
	return id, nil
}

// SignInWithToken starts a browser session for a human token (pasted into
// the sign-in form) and returns its id. An unknown token is EUNAUTHORIZED,
// an agent token EFORBIDDEN.
func (s *Service) SignInWithToken(ctx context.Context, token string) (string, error) {
	c, err := s.Authenticate(ctx, token)
	if err != nil {
		return "", err
	}
	if c.Role != askd.RoleHuman {
		return "", askd.Errorf(askd.EFORBIDDEN, "agent tokens cannot sign in to the inbox")
	}
	now := s.now()
	var id string
	var ended []string
	err = s.store.Update(ctx, func(tx askd.Tx) (err error) {
		id, ended, err = startBrowserSession(ctx, tx, c.Name, askd.ViaToken, now, BrowserSessionMax)
		return err
	})
	if askd.ErrorCode(err) == askd.ENOTFOUND { // revoked since Authenticate's cache saw it
		return "", askd.Errorf(askd.EUNAUTHORIZED, "unknown or revoked token")
	}
	if err != nil {
		return "", err
	}
	s.forgetBrowsers(ended)
	return id, nil
}

// startBrowserSession stores a new browser session for human, signed in via
// (askd.ViaLink, ...) and lasting at most limit, and returns its id, and
// the hashes of the browser sessions it ended: the least recently seen of
// human's, past MaxBrowserSessions. Expired codes and browser sessions go
// first, so they do not pile up.
func startBrowserSession(ctx context.Context, tx askd.Tx, human, via string, now time.Time, limit time.Duration) (id string, ended []string, err error) {
	if _, err := tx.SignIns.DeleteExpiredSignIns(ctx, now); err != nil {
		return "", nil, err
	}
	bs, err := tx.SignIns.BrowserSessionsOf(ctx, human)
	if err != nil {
		return "", nil, err
	}
	for _, b := range bs[:max(0, len(bs)-MaxBrowserSessions+1)] {
		if err := tx.SignIns.EndBrowserSession(ctx, b.Hash); err != nil {
			return "", nil, fmt.Errorf("end the least recently used browser session: %w", err)
		}
		ended = append(ended, b.Hash)
	}
	id = strings.ToLower(rand.Text())
	err = tx.SignIns.CreateBrowserSession(ctx, &askd.BrowserSession{
		Hash: HashToken(id), Human: human, CreatedAt: now, LastSeenAt: now, ExpiresAt: browserExpiry(now, now, limit), Via: via,
	})
	if err != nil {
		return "", nil, fmt.Errorf("start browser session: %w", err)
	}
	return id, ended, nil
}

// forgetBrowsers forgets the browser sessions with the hashes, which a
// sign-in ended, and ends their streams in this process, as SignOut does (other
// processes notice within tokenTTL, as for a revoked token).
func (s *Service) forgetBrowsers(hashes []string) {
	for _, h := range hashes {
		s.browsers.forget(h)
		s.live.revoke(browserHold + h)
	}
}

// browserExpiry is when a browser session started at created, last seen at
// seen and lasting at most limit ends.
func browserExpiry(created, seen time.Time, limit time.Duration) time.Time {
	idle, end := seen.Add(BrowserSessionIdle), created.Add(limit)
	if idle.Before(end) {
		return idle
	}
	return end
}

// browserLimit is how long a browser session signed in via may last at
// most: a provider's or proxy's, the provider session limit (SPEC §15:
// --oidc-session-max-age), so that a person removed there is out here
// within it; others BrowserSessionMax.
func (s *Service) browserLimit(via string) time.Duration {
	if via == askd.ViaProxy || strings.HasPrefix(via, askd.ViaOIDC) {
		return s.cfg.ProviderSessionMax
	}
	return BrowserSessionMax
}

// BrowserCaller returns the person whose browser session has the id (the
// cookie's value), or EUNAUTHORIZED when there is none: signed out, expired,
// or its token revoked. Like tokens, a browser session once read is
// remembered for tokenTTL, so revoking a token (which another process may
// do) ends its browser sessions within that time; signing out through this
// service ends it at once.
func (s *Service) BrowserCaller(ctx context.Context, id string) (askd.Caller, error) {
	if id == "" {
		return askd.Caller{}, askd.Errorf(askd.EUNAUTHORIZED, "not signed in")
	}
	hash, now := HashToken(id), s.now()
	if c, ok := s.browsers.get(hash, now); ok {
		return c, nil
	}
	var b *askd.BrowserSession
	var t *askd.Token
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		if b, err = tx.SignIns.BrowserSession(ctx, hash); err != nil {
			return err
		}
		t, err = tx.Tokens.TokenByName(ctx, b.Human) // the person's role
		return err
	})
	switch {
	case askd.ErrorCode(err) == askd.ENOTFOUND:
		return askd.Caller{}, askd.Errorf(askd.EUNAUTHORIZED, "signed out: sign in again")
	case err != nil:
		return askd.Caller{}, err
	case !now.Before(b.ExpiresAt):
		return askd.Caller{}, askd.Errorf(askd.EUNAUTHORIZED, "the browser session has expired: sign in again")
	}
	if now.Sub(b.LastSeenAt) >= browserTouchEvery {
		err := s.store.Update(ctx, func(tx askd.Tx) error {
			return tx.SignIns.TouchBrowserSession(ctx, hash, now, browserExpiry(b.CreatedAt, now, s.browserLimit(b.Via)))
		})
		if askd.ErrorCode(err) == askd.ENOTFOUND { // signed out meanwhile
			return askd.Caller{}, askd.Errorf(askd.EUNAUTHORIZED, "signed out: sign in again")
		}
		if err != nil {
			return askd.Caller{}, err
		}
	}
	// The browser session is what its streams hold (TokenHash), so signing
	// out or revoking the token ends them too (checkTokens).
	c := askd.Caller{Name: b.Human, Role: askd.RoleHuman, Access: t.Access, Session: b.Human, TokenHash: browserHold + hash, Via: b.Via}
	s.browsers.put(hash, c, now)
	return c, nil
}

// browserHold marks a Caller.TokenHash that is a browser session's hash
// rather than a token's.
const browserHold = "browser:"

// KnownBrowser reports whether the browser session with the id is one this
// service has verified before (and not found ended), without looking at the
// store: the HTTP edge's throttle keeps serving it, as KnownToken a token.
func (s *Service) KnownBrowser(id string) bool {
	return id != "" && s.browsers.seen(HashToken(id))
}

// SignOut ends the browser session with the id, in every process: the
// cookie, even copied, works no more. An id already ended is no error.
func (s *Service) SignOut(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	hash := HashToken(id)
	err := s.store.Update(ctx, func(tx askd.Tx) error { return tx.SignIns.EndBrowserSession(ctx, hash) })
	s.browsers.forget(hash)
	if err == nil || askd.ErrorCode(err) == askd.ENOTFOUND {
		s.live.revoke(browserHold + hash) // this process's streams end now
	}
	if askd.ErrorCode(err) == askd.ENOTFOUND {
		return nil
	}
	return err
}
