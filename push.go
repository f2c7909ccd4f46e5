package askd

import (
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"net/url"
	"time"
)

// Web Push (docs/notifications.md): a person who allows notifications in an
// installed inbox gets, per browser session, a push subscription: the
// endpoint of the browser vendor's push service and the keys that encrypt
// what is sent to it (RFC 8291). On each new ask every subscription gets a
// notification, signed with the server's VAPID key (RFC 8292), whose
// actions are signed answer links minted for the subscription's person.

// NotifyPush is the notifier type of Web Push (askd serve --notify-push): one
// notify delivery per ask sends it to every push subscription.
const NotifyPush ChannelType = "push"

// Caps on push subscriptions (docs/security.md, "Caps on what callers can
// create"): each new ask is pushed once to every
// subscription, so their number is the number of requests one ask sends.
// A browser keeps one subscription per site, replaced when it subscribes
// again; a few more per browser session allow for an old one its push
// service has not yet reported gone. A person has a browser session per
// device or browser they use. Replacing a subscription (the same endpoint)
// is never refused.
const (
	MaxPushPerBrowserSession = 10
	MaxPushPerHuman          = 50 // across all their browser sessions
)

// PushSubscription is one browser's push subscription. It belongs to the
// browser session that made it (Browser, the session's hash), and goes when
// that ends: signed out, expired, its human token revoked.
type PushSubscription struct {
	// Endpoint is the push service's URL for this browser: unique, and
	// what identifies the subscription.
	Endpoint string   `json:"endpoint"`
	Keys     PushKeys `json:"keys"`
	// Browser is the hash of the browser session it belongs to.
	Browser string `json:"-"`
	// Human is the name of that browser session's human token: the person
	// the notification's answer links answer as.
	Human     string    `json:"-"`
	CreatedAt time.Time `json:"-"`
}

// PushKeys are a subscription's keys, unpadded base64url as browsers give
// them (PushSubscription.toJSON()).
type PushKeys struct {
	// P256dh is the browser's P-256 public key, uncompressed (65 bytes).
	P256dh string `json:"p256dh"`
	// Auth is the authentication secret (16 bytes).
	Auth string `json:"auth"`
}

// VAPIDKeys is the server's key pair that signs its push requests (RFC
// 8292), made at first start and kept in the database: P-256, unpadded
// base64url, the public key uncompressed (65 bytes), the private one the
// raw scalar (32 bytes), as browsers' applicationServerKey and
// webpush-go take them.
type VAPIDKeys struct {
	Public    string
	Private   string
	CreatedAt time.Time
}

// Validate checks s as a browser sends it. Errors are EINVALID naming the
// field: the endpoint must be an https URL of at most MaxURLBytes, whose
// host the webhook guard would not obviously refuse (allow is the
// operator's --webhook-allow: a push endpoint is chosen by a browser, not
// the operator); http is taken only for a loopback host allow allows (a
// test's push service). The keys must decode to a P-256 point and 16
// bytes.
func (s *PushSubscription) Validate(allow WebhookAllow) error {
	if s.Endpoint == "" {
		return Errorf(EINVALID, "endpoint: required")
	}
	if len(s.Endpoint) > MaxURLBytes {
		return Errorf(EINVALID, "endpoint: longer than %d bytes", MaxURLBytes)
	}
	u, err := url.Parse(s.Endpoint)
	if err != nil || u.Host == "" || u.User != nil {
		return Errorf(EINVALID, "endpoint: not an absolute URL without credentials")
	}
	switch u.Scheme {
	case "https":
	case "http":
		ip, ok := literalIP(canonicalHost(u.Hostname()))
		if !ok || !ip.IsLoopback() || !(allow.AllowsAddr(ip) || allow.AllowsHost(u.Hostname())) {
			return Errorf(EINVALID, "endpoint: must be https (http only to a loopback address askd serve --webhook-allow allows)")
		}
	default:
		return Errorf(EINVALID, "endpoint: must be https")
	}
	if err := allow.CheckURL("endpoint", s.Endpoint); err != nil {
		return err
	}
	if b, err := base64.RawURLEncoding.DecodeString(s.Keys.P256dh); err != nil || len(b) != 65 || !onP256(b) {
		return Errorf(EINVALID, "keys.p256dh: must be an uncompressed P-256 public key (65 bytes), unpadded base64url")
	}
	if b, err := base64.RawURLEncoding.DecodeString(s.Keys.Auth); err != nil || len(b) != 16 {
		return Errorf(EINVALID, "keys.auth: must be 16 bytes, unpadded base64url")
	}
	return nil
}

// onP256 reports whether b is an uncompressed point of P-256.
func onP256(b []byte) bool {
	_, err := ecdh.P256().NewPublicKey(b)
	return err == nil
}

// PushTx is what a transaction may do with push subscriptions and the
// server's VAPID keys.
type PushTx interface {
	// PutPushSubscription stores p, replacing the subscription with its
	// endpoint (a browser subscribing again, or signed in anew); ENOTFOUND
	// when its browser session or human token does not exist. Ending the
	// browser session (signing out, DeleteExpiredSignIns) or revoking the
	// token deletes it.
	PutPushSubscription(ctx context.Context, p *PushSubscription) error
	// PushSubscription returns the subscription with the endpoint;
	// ENOTFOUND when there is none.
	PushSubscription(ctx context.Context, endpoint string) (*PushSubscription, error)
	// PushSubscriptions returns the subscriptions whose browser session is
	// live at t (expires after it), by endpoint.
	PushSubscriptions(ctx context.Context, t time.Time) ([]*PushSubscription, error)
	// CountPushSubscriptions returns how many subscriptions human has, live
	// or not, and how many of them belong to browser session browser.
	CountPushSubscriptions(ctx context.Context, browser, human string) (ofBrowser, ofHuman int, err error)
	// DeletePushSubscription deletes the subscription with the endpoint;
	// ENOTFOUND when there is none.
	DeletePushSubscription(ctx context.Context, endpoint string) error
	// CreateVAPIDKeys stores the server's VAPID keys; ECONFLICT when some
	// are stored already (another process made them first).
	CreateVAPIDKeys(ctx context.Context, k *VAPIDKeys) error
	// VAPIDKeys returns the server's VAPID keys; ENOTFOUND when none are
	// stored yet.
	VAPIDKeys(ctx context.Context) (*VAPIDKeys, error)
}
