package app

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/askd-dev/askd"
)

// Web Push (docs/notifications.md). With askd serve --notify-push (a
// notifier of type askd.NotifyPush in Config.Notifiers), a person who
// allows notifications in the inbox gets a push subscription for that
// browser session; each new ask is pushed to every subscription through the
// outbox (internal/tell), signed with the server's VAPID key, with up to two
// actions, signed answer links minted for the subscription's person. A
// subscription belongs to its browser session: it goes when that ends
// (signing out, expiry, its token revoked), and when the push service says
// it is gone (404, 410).

// PushOn reports whether Web Push is configured (askd serve --notify-push).
func (s *Service) PushOn() bool {
	for _, n := range s.cfg.Notifiers {
		if n.Type == askd.NotifyPush {
			return true
		}
	}
	return false
}

// errPushOff is what the push API says when Web Push is not configured.
func errPushOff() error {
	return askd.Errorf(askd.ENOTFOUND, "Web Push is off: askd serve --notify-push (with --public-url) turns it on")
}

// vapidCache holds the VAPID keys once read: they never change.
type vapidCache struct {
	mu   sync.Mutex
	keys *askd.VAPIDKeys
}

// VAPIDKeys returns the server's VAPID keys, making and storing them the
// first time (of several processes starting at once, one makes them and
// the others read them). Errors are the store's.
func (s *Service) VAPIDKeys(ctx context.Context) (*askd.VAPIDKeys, error) {
	s.vapid.mu.Lock()
	defer s.vapid.mu.Unlock()
	if s.vapid.keys != nil {
		return s.vapid.keys, nil
	}
	var k *askd.VAPIDKeys
	read := func() error {
		return s.store.View(ctx, func(tx askd.Tx) (err error) {
			k, err = tx.Push.VAPIDKeys(ctx)
			return err
		})
	}
	err := read()
	if askd.ErrorCode(err) == askd.ENOTFOUND {
		k, err = newVAPIDKeys()
		if err != nil {
			return nil, err
		}
		k.CreatedAt = s.now()
		err = s.store.Update(ctx, func(tx askd.Tx) error { return tx.Push.CreateVAPIDKeys(ctx, k) })
		if askd.ErrorCode(err) == askd.ECONFLICT { // another process made them first
			err = read()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("VAPID keys: %w", err)
	}
	s.vapid.keys = k
	return k, nil
}

// newVAPIDKeys makes a P-256 key pair, encoded as askd.VAPIDKeys says.
func newVAPIDKeys() (*askd.VAPIDKeys, error) {
	priv, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("make VAPID keys: %w", err)
	}
	enc := base64.RawURLEncoding
	return &askd.VAPIDKeys{Public: enc.EncodeToString(priv.PublicKey().Bytes()), Private: enc.EncodeToString(priv.Bytes())}, nil
}

// PushKey returns the VAPID public key browsers subscribe with (their
// applicationServerKey), for people. ENOTFOUND when Web Push is off.
func (s *Service) PushKey(ctx context.Context, c askd.Caller) (string, error) {
	if c.Role != askd.RoleHuman {
		return "", askd.Errorf(askd.EFORBIDDEN, "only people subscribe to Web Push")
	}
	if !s.PushOn() {
		return "", errPushOff()
	}
	k, err := s.VAPIDKeys(ctx)
	if err != nil {
		return "", err
	}
	return k.Public, nil
}

// browserOf returns the hash of the browser session c was authenticated by
// (BrowserCaller), or EFORBIDDEN when c came with a token: a push
// subscription belongs to a browser session, and goes when it ends.
func browserOf(c askd.Caller) (string, error) {
	hash, ok := strings.CutPrefix(c.TokenHash, browserHold)
	if c.Role != askd.RoleHuman || !ok || hash == "" {
		return "", askd.Errorf(askd.EFORBIDDEN, "push subscriptions belong to a browser session: subscribe from the signed-in inbox, not with a token")
	}
	return hash, nil
}

// SubscribePush stores p as the push subscription of c's browser session,
// replacing any with its endpoint (the browser subscribing again, or
// someone signed in anew in it). Errors: ENOTFOUND when Web Push is off;
// EFORBIDDEN unless c is a browser session; EINVALID naming the field
// (askd.PushSubscription.Validate); ELIMIT when the subscription would be
// one more than askd.MaxPushPerBrowserSession for the browser session or
// askd.MaxPushPerHuman for the person; EUNAUTHORIZED when the browser
// session ended meanwhile.
func (s *Service) SubscribePush(ctx context.Context, c askd.Caller, p *askd.PushSubscription) error {
	if !s.PushOn() {
		return errPushOff()
	}
	browser, err := browserOf(c)
	if err != nil {
		return err
	}
	if err := p.Validate(s.cfg.WebhookAllow); err != nil {
		return err
	}
	now := s.now()
	p.Browser, p.Human, p.CreatedAt = browser, c.Name, now
	err = s.store.Update(ctx, func(tx askd.Tx) error {
		if err := checkPushCaps(ctx, tx, p, now); err != nil {
			return err
		}
		return tx.Push.PutPushSubscription(ctx, p)
	})
	if askd.ErrorCode(err) == askd.ENOTFOUND {
		return askd.Errorf(askd.EUNAUTHORIZED, "signed out: sign in again")
	}
	return err
}

// checkPushCaps refuses (ELIMIT) subscription p when its browser session
// or its person already has as many subscriptions as the caps allow and p
// would add one there; replacing a subscription of the same endpoint adds
// none. Browser sessions expired by now go first, with their
// subscriptions, so that they are not counted.
func checkPushCaps(ctx context.Context, tx askd.Tx, p *askd.PushSubscription, now time.Time) error {
	if _, err := tx.SignIns.DeleteExpiredSignIns(ctx, now); err != nil {
		return err
	}
	old, err := tx.Push.PushSubscription(ctx, p.Endpoint) // nil when it is new
	if err != nil && askd.ErrorCode(err) != askd.ENOTFOUND {
		return err
	}
	ofBrowser, ofHuman, err := tx.Push.CountPushSubscriptions(ctx, p.Browser, p.Human)
	if err != nil {
		return err
	}
	if (old == nil || old.Browser != p.Browser) && ofBrowser >= askd.MaxPushPerBrowserSession {
		return askd.Errorf(askd.ELIMIT, "this browser session already has %d push subscriptions, at most %d: unsubscribe one first", ofBrowser, askd.MaxPushPerBrowserSession)
	}
	if (old == nil || old.Human != p.Human) && ofHuman >= askd.MaxPushPerHuman {
		return askd.Errorf(askd.ELIMIT, "%s already has %d push subscriptions across their browser sessions, at most %d: unsubscribe in a browser, or sign out of one", p.Human, ofHuman, askd.MaxPushPerHuman)
	}
	return nil
}

// UnsubscribePush deletes the push subscription with the endpoint, if c's
// browser session made it. Errors: EFORBIDDEN unless c is a browser
// session; ENOTFOUND when it has no subscription with the endpoint.
func (s *Service) UnsubscribePush(ctx context.Context, c askd.Caller, endpoint string) error {
	browser, err := browserOf(c)
	if err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx askd.Tx) error {
		p, err := tx.Push.PushSubscription(ctx, endpoint)
		if err == nil && p.Browser != browser {
			err = askd.Errorf(askd.ENOTFOUND, "this browser session has no push subscription with that endpoint")
		}
		if err != nil {
			return err
		}
		return tx.Push.DeletePushSubscription(ctx, endpoint)
	})
}

// PushSubscriptions returns the subscriptions to push a new ask to: those
// of every live browser session.
func (s *Service) PushSubscriptions(ctx context.Context) ([]*askd.PushSubscription, error) {
	var out []*askd.PushSubscription
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		out, err = tx.Push.PushSubscriptions(ctx, s.now())
		return err
	})
	return out, err
}

// DropPushSubscription deletes the subscription with the endpoint, which
// its push service says is gone (404, 410). One gone already is no error.
func (s *Service) DropPushSubscription(ctx context.Context, endpoint string) error {
	err := s.store.Update(ctx, func(tx askd.Tx) error { return tx.Push.DeletePushSubscription(ctx, endpoint) })
	if askd.ErrorCode(err) == askd.ENOTFOUND {
		return nil
	}
	return err
}
