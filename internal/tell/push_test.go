package tell_test

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/tell"
	"github.com/askd-dev/askd/internal/testserver"
)

// A browser's side of Web Push, as the tests play it: the subscription's
// keys, and the decryption a browser does (RFC 8291, aes128gcm).
type browserKeys struct {
	priv *ecdh.PrivateKey
	auth []byte
}

func newBrowserKeys(t testing.TB) *browserKeys {
	t.Helper()
	priv, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	rand.Read(auth)
	return &browserKeys{priv, auth}
}

func (k *browserKeys) subscription(endpoint string) map[string]any {
	enc := base64.RawURLEncoding
	return map[string]any{"endpoint": endpoint, "keys": map[string]string{
		"p256dh": enc.EncodeToString(k.priv.PublicKey().Bytes()), "auth": enc.EncodeToString(k.auth)}}
}

// decrypt opens an aes128gcm body (RFC 8188's header: salt, record size,
// the sender's key as key id) with the keys of RFC 8291 section 3.
func (k *browserKeys) decrypt(t *testing.T, body []byte) []byte {
	t.Helper()
	if len(body) < 21 {
		t.Fatalf("push body of %d bytes: too short for aes128gcm", len(body))
	}
	salt, rs, idlen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if idlen != 65 || len(body) < 21+idlen {
		t.Fatalf("key id of %d bytes, want the sender's P-256 key (65)", idlen)
	}
	senderPub, err := ecdh.P256().NewPublicKey(body[21 : 21+idlen])
	if err != nil {
		t.Fatalf("sender key: %v", err)
	}
	ciphertext := body[21+idlen:]
	if uint32(len(ciphertext)) > rs {
		t.Fatalf("one record of %d bytes, above the record size %d", len(ciphertext), rs)
	}
	shared, err := k.priv.ECDH(senderPub)
	if err != nil {
		t.Fatal(err)
	}
	info := append([]byte("WebPush: info\x00"), k.priv.PublicKey().Bytes()...)
	info = append(info, senderPub.Bytes()...)
	ikm, err := hkdf.Key(sha256.New, shared, k.auth, string(info), 32)
	if err != nil {
		t.Fatal(err)
	}
	prk, err := hkdf.Extract(sha256.New, ikm, salt)
	if err != nil {
		t.Fatal(err)
	}
	cek, _ := hkdf.Expand(sha256.New, prk, "Content-Encoding: aes128gcm\x00", 16)
	nonce, _ := hkdf.Expand(sha256.New, prk, "Content-Encoding: nonce\x00", 12)
	block, _ := aes.NewCipher(cek)
	gcm, _ := cipher.NewGCM(block)
	plain, err := gcm.Open(nil, nonce, ciphertext, nil)
	if err != nil {
		t.Fatalf("decrypt the push body: %v", err)
	}
	// The last record: the data, then the delimiter 2, then zero padding.
	end := len(plain) - 1
	for end >= 0 && plain[end] == 0 {
		end--
	}
	if end < 0 || plain[end] != 2 {
		t.Fatalf("no last-record delimiter in the decrypted body")
	}
	return plain[:end]
}

// checkVAPID checks a push request's Authorization, "vapid t=JWT, k=KEY"
// (RFC 8292): the key is the server's public key, the JWT is ES256-signed
// by it, for the endpoint's origin, and not expired.
func checkVAPID(t *testing.T, header, publicKey, origin string) {
	t.Helper()
	rest, ok := strings.CutPrefix(header, "vapid ")
	if !ok {
		t.Fatalf("Authorization %q is not vapid", header)
	}
	params := map[string]string{}
	for _, p := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		params[k] = v
	}
	if params["k"] != publicKey {
		t.Errorf("vapid k=%s, want the stored public key %s", params["k"], publicKey)
	}
	parts := strings.Split(params["t"], ".")
	if len(parts) != 3 {
		t.Fatalf("vapid t=%q is not a JWT", params["t"])
	}
	enc := base64.RawURLEncoding
	var head struct{ Alg, Typ string }
	var claims struct {
		Aud string `json:"aud"`
		Exp int64  `json:"exp"`
		Sub string `json:"sub"`
	}
	hb, _ := enc.DecodeString(parts[0])
	cb, _ := enc.DecodeString(parts[1])
	if err := json.Unmarshal(hb, &head); err != nil || head.Alg != "ES256" {
		t.Errorf("JWT header %s, want alg ES256", hb)
	}
	if err := json.Unmarshal(cb, &claims); err != nil {
		t.Fatalf("JWT claims %s: %v", cb, err)
	}
	if claims.Aud != origin || time.Unix(claims.Exp, 0).Before(time.Now()) || time.Unix(claims.Exp, 0).After(time.Now().Add(24*time.Hour)) || claims.Sub == "" {
		t.Errorf("JWT claims %+v: want aud %s, exp within a day from now, a sub", claims, origin)
	}
	pub, _ := enc.DecodeString(publicKey)
	key, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), pub) // the plain point, as VAPID gives it
	if err != nil {
		t.Fatalf("public key %s is not a P-256 point: %v", publicKey, err)
	}
	sig, _ := enc.DecodeString(parts[2])
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(key, digest[:],
		new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Error("the VAPID JWT's signature does not verify with the stored public key")
	}
}

// startPush runs askd with Web Push on (links on its own URL), a worker,
// and its push services allowed on loopback.
func startPush(t *testing.T) *testserver.Server {
	t.Helper()
	return startPushOn(t, nil)
}

// startPushOn is startPush on store (nil: a new SQLite file), which the
// server closes.
func startPushOn(t *testing.T, store askd.Store) *testserver.Server {
	t.Helper()
	cfg := app.Config{Notifiers: []askd.Channel{{Type: askd.NotifyPush}}, WebhookAllow: loopback,
		Backoff: func(int) time.Duration { return 20 * time.Millisecond }, TellAttempts: 3}
	srv := testserver.Start(t, testserver.Options{Config: cfg, Store: store})
	ctx, cancel := context.WithCancel(context.Background())
	w := tell.New(srv.App, tell.Options{Timeout: 5 * time.Second, Tick: 50 * time.Millisecond, PublicURL: srv.URL, LinkBase: srv.URL})
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv
}

// browserDo sends a request as the inbox page does: the cookie, and this
// origin.
func browserDo(t *testing.T, srv *testserver.Server, ck *http.Cookie, method, path string, body any) (int, string) {
	t.Helper()
	var b string
	if body != nil {
		j, _ := json.Marshal(body)
		b = string(j)
	}
	req, _ := http.NewRequestWithContext(t.Context(), method, srv.URL+path, strings.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", srv.URL)
	if ck != nil {
		req.AddCookie(ck)
	}
	return do(t, req)
}

func subscriptions(t *testing.T, srv *testserver.Server) []*askd.PushSubscription {
	t.Helper()
	subs, err := srv.App.PushSubscriptions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return subs
}

func TestPushCarriesSignedEncryptedAnswerLinks(t *testing.T) {
	srv := startPush(t)
	push := newReceiver(t, func(int) int { return http.StatusCreated })
	keys := newBrowserKeys(t)
	ck := srv.BrowserCookie(t, "alice")

	status, body := browserDo(t, srv, ck, http.MethodGet, "/api/push/key", nil)
	var key struct {
		PublicKey string `json:"public_key"`
	}
	if err := json.Unmarshal([]byte(body), &key); status != http.StatusOK || err != nil || key.PublicKey == "" {
		t.Fatalf("GET /api/push/key = %d %s", status, body)
	}
	if status, body := browserDo(t, srv, ck, http.MethodPost, "/api/push/subscriptions", keys.subscription(push.URL+"/push/abc")); status != http.StatusCreated {
		t.Fatalf("subscribe = %d %s", status, body)
	}

	a := askDecision(t, srv.Agent("release"), "Ship on which day?")
	testserver.Eventually(t, "the push request", func() bool { return len(push.got()) >= 1 })
	got := push.got()[0]
	checkVAPID(t, got.header.Get("Authorization"), key.PublicKey, push.URL)
	if ce, ttl := got.header.Get("Content-Encoding"), got.header.Get("TTL"); ce != "aes128gcm" || ttl != "86400" {
		t.Errorf("Content-Encoding %q, TTL %q; want aes128gcm, 86400", ce, ttl)
	}
	var m tell.PushMessage
	plain := keys.decrypt(t, got.body)
	if err := json.Unmarshal(plain, &m); err != nil {
		t.Fatalf("payload %s: %v", plain, err)
	}
	if m.Title != "askd: decision from release" || !strings.HasPrefix(m.Body, "Ship on which day?") ||
		m.URL != srv.URL+"/?ask="+itoa(a.ID) || m.Tag != "askd-"+itoa(a.ID) || m.AskID != a.ID {
		t.Errorf("payload %+v", m)
	}
	if len(m.Actions) != 2 || m.Actions[0].Title != "Monday" || m.Actions[1].Title != "Friday" ||
		m.Actions[0].Action != "answer-0" || !strings.HasPrefix(m.Actions[1].Link, srv.URL+"/a/") {
		t.Fatalf("actions %+v, want Monday and Friday, each an answer link", m.Actions)
	}

	// The service worker's tap: POST confirm=1 to the action's link.
	if status, page := tap(t, m.Actions[1].Link); status != http.StatusOK || !strings.Contains(page, "Answered by alice via link: Friday.") {
		t.Fatalf("tapping Friday = %d %s", status, page)
	}
	answered, evs := stored(t, srv, a.ID)
	if answered.Status != askd.StatusAnswered || answered.Answer.Answer != "Friday" {
		t.Errorf("ask after the tap: %s %+v", answered.Status, answered.Answer)
	}
	checkAnswered(t, evs, "via link")
	if status, _ := tap(t, m.Actions[0].Link); status != http.StatusConflict {
		t.Errorf("tapping Monday after Friday = %d, want 409", status)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestPushSubscriptionGoesWhenGone(t *testing.T) {
	srv := startPush(t)
	push := newReceiver(t, func(int) int { return http.StatusGone })
	ck := srv.BrowserCookie(t, "alice")
	if status, body := browserDo(t, srv, ck, http.MethodPost, "/api/push/subscriptions", newBrowserKeys(t).subscription(push.URL+"/gone")); status != http.StatusCreated {
		t.Fatalf("subscribe = %d %s", status, body)
	}
	a := askDecision(t, srv.Agent("s1"), "Which?")
	var d *askd.Delivery
	testserver.Eventually(t, "the push delivery to finish", func() bool {
		err := srv.Store.View(t.Context(), func(tx askd.Tx) (err error) {
			d, err = tx.Deliveries.Delivery(t.Context(), askd.PersonNotifyKey(a, "alice", askd.NotifyPush))
			return err
		})
		return err == nil && d.Status != askd.DeliveryPending
	})
	if d.Status != askd.DeliverySent {
		t.Errorf("push delivery %s (%s), want sent: a gone subscription is no failure", d.Status, d.LastError)
	}
	if subs := subscriptions(t, srv); len(subs) != 0 {
		t.Errorf("subscriptions after 410: %d, want none", len(subs))
	}
}

func TestPushSubscriptionBelongsToTheBrowserSession(t *testing.T) {
	srv := startPush(t)
	push := newReceiver(t, nil)
	ck := srv.BrowserCookie(t, "alice")
	sub := newBrowserKeys(t).subscription(push.URL + "/mine")

	tests := []struct {
		name   string
		req    func() (int, string)
		status int
		says   string
	}{
		{"with a token", func() (int, string) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/api/push/subscriptions", strings.NewReader(`{"endpoint":"`+push.URL+`/t","keys":{"p256dh":"x","auth":"y"}}`))
			req.Header.Set("Authorization", "Bearer "+srv.HumanToken)
			return do(t, req)
		}, http.StatusForbidden, "belong to a browser session"},
		{"plain http elsewhere", func() (int, string) {
			return browserDo(t, srv, ck, http.MethodPost, "/api/push/subscriptions", newBrowserKeys(t).subscription("http://push.example/x"))
		}, http.StatusBadRequest, "endpoint: must be https"},
		{"a private address", func() (int, string) {
			return browserDo(t, srv, ck, http.MethodPost, "/api/push/subscriptions", newBrowserKeys(t).subscription("https://10.0.0.1/x"))
		}, http.StatusBadRequest, "private address"},
		{"an unknown field", func() (int, string) {
			return browserDo(t, srv, ck, http.MethodPost, "/api/push/subscriptions", map[string]any{"endpoint": push.URL, "expirationTime": nil})
		}, http.StatusBadRequest, "expirationTime"},
		{"a bad key", func() (int, string) {
			return browserDo(t, srv, ck, http.MethodPost, "/api/push/subscriptions", map[string]any{"endpoint": push.URL, "keys": map[string]string{"p256dh": "AAAA", "auth": "AAAA"}})
		}, http.StatusBadRequest, "keys.p256dh"},
		{"an agent", func() (int, string) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/api/push/key", nil)
			req.Header.Set("Authorization", "Bearer "+srv.AgentToken)
			return do(t, req)
		}, http.StatusForbidden, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := tt.req()
			if status != tt.status || !strings.Contains(body, tt.says) {
				t.Errorf("= %d %s, want %d saying %q", status, body, tt.status, tt.says)
			}
		})
	}
	if n := len(subscriptions(t, srv)); n != 0 {
		t.Fatalf("%d subscriptions stored by refused requests", n)
	}

	// Another browser session cannot delete it; its own can; signing out
	// drops it.
	if status, body := browserDo(t, srv, ck, http.MethodPost, "/api/push/subscriptions", sub); status != http.StatusCreated {
		t.Fatalf("subscribe = %d %s", status, body)
	}
	other := srv.BrowserCookie(t, "alice")
	if status, _ := browserDo(t, srv, other, http.MethodDelete, "/api/push/subscriptions", map[string]string{"endpoint": push.URL + "/mine"}); status != http.StatusNotFound {
		t.Errorf("another browser session's DELETE = %d, want 404", status)
	}
	if status, body := browserDo(t, srv, ck, http.MethodDelete, "/api/push/subscriptions", map[string]string{"endpoint": push.URL + "/mine"}); status != http.StatusNoContent {
		t.Errorf("DELETE = %d %s, want 204", status, body)
	}
	browserDo(t, srv, ck, http.MethodPost, "/api/push/subscriptions", sub)
	if n := len(subscriptions(t, srv)); n != 1 {
		t.Fatalf("%d subscriptions, want 1", n)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/signout", nil)
	req.Header.Set("Origin", srv.URL)
	req.AddCookie(ck)
	resp, err := http.DefaultTransport.RoundTrip(req) // its redirect is not followed
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out = %d", resp.StatusCode)
	}
	if n := len(subscriptions(t, srv)); n != 0 {
		t.Errorf("%d subscriptions after signing out, want none", n)
	}
}
