package tell

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// # Standard Webhooks signatures (SPEC §19)
//
// Beside Askd-Signature and Idempotency-Key, every signed webhook — a tell
// webhook, and a notification webhook that has a secret — carries the
// headers of the Standard Webhooks specification (standardwebhooks.com),
// so that a receiver can check it with that project's libraries and refuse
// a replay by its timestamp:
//
//	webhook-id         the delivery's key, its Idempotency-Key
//	webhook-timestamp  when this attempt was signed, in seconds since the Unix epoch
//	webhook-signature  "v1," and the base64 HMAC-SHA256 of "<id>.<timestamp>.<body>"
//
// The HMAC's key is the secret's UTF-8 bytes, as for Askd-Signature; the
// libraries take it as base64 (their "whsec_" prefix optional), so a
// receiver gives them the base64 of the secret's bytes. Each attempt is
// signed anew with its own timestamp; its id stays the delivery's key.

// Header names of the Standard Webhooks signature. Go sends them in its
// canonical case (Webhook-Id); HTTP header names are case-insensitive.
const (
	HeaderWebhookID        = "webhook-id"
	HeaderWebhookTimestamp = "webhook-timestamp"
	HeaderWebhookSignature = "webhook-signature"
)

// WebhookTolerance is how far a webhook-timestamp may be from the
// receiver's clock, either way, in VerifyStandard: the Standard Webhooks
// libraries' five minutes.
const WebhookTolerance = 5 * time.Minute

// SignStandard returns the webhook-signature header value of body sent as
// delivery id at time at, under secret: "v1," and the base64 HMAC-SHA256 of
// "<id>.<unix seconds>.<body>" keyed with the secret's bytes.
func SignStandard(secret, id string, at time.Time, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(id + "." + strconv.FormatInt(at.Unix(), 10) + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Errors of VerifyStandard.
var (
	ErrWebhookHeaders   = errors.New("webhook: missing or unreadable webhook-id, webhook-timestamp or webhook-signature")
	ErrWebhookTimestamp = errors.New("webhook: timestamp too far from now (a replay, or a clock that is off)")
	ErrWebhookSignature = errors.New("webhook: no signature matches")
)

// VerifyStandard checks a received webhook's Standard Webhooks headers
// under secret at the receiver's time now: its timestamp within
// WebhookTolerance of now, and one of its space-separated signatures
// body's, compared in constant time. It is what a Go receiver does; the
// libraries of other languages do the same.
func VerifyStandard(secret string, h http.Header, body []byte, now time.Time) error {
	id, ts, sigs := h.Get(HeaderWebhookID), h.Get(HeaderWebhookTimestamp), h.Get(HeaderWebhookSignature)
	secs, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || sigs == "" || err != nil {
		return ErrWebhookHeaders
	}
	at := time.Unix(secs, 0)
	if d := now.Sub(at); d > WebhookTolerance || d < -WebhookTolerance {
		return ErrWebhookTimestamp
	}
	want := []byte(SignStandard(secret, id, at, body))
	for _, sig := range strings.Fields(sigs) {
		if hmac.Equal([]byte(sig), want) {
			return nil
		}
	}
	return ErrWebhookSignature
}

// sign sets a webhook request's signatures under secret: Askd-Signature
// over the body, and the Standard Webhooks headers for delivery key, signed
// at time at.
func sign(h http.Header, secret, key string, at time.Time, body []byte) {
	h.Set(HeaderSignature, Sign(secret, body))
	h.Set(HeaderWebhookID, key)
	h.Set(HeaderWebhookTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(HeaderWebhookSignature, SignStandard(secret, key, at, body))
}
