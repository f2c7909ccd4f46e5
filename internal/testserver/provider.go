package testserver

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Provider is an OpenID Connect provider in the test's process, for the
// fast cases of askd's sign-in (SPEC §15): discovery, the authorization
// endpoint (which signs in whoever SignIn names, at once), the token
// endpoint (a code works once, with its PKCE verifier), userinfo, JWKS and
// an end_session_endpoint. Its ID tokens can be made wrong on purpose
// (Tamper, SignNone, SignWithStrangerKey) to show that askd refuses them;
// RotateKey makes it sign with a new key, published beside the old.
type Provider struct {
	URL          string // the issuer
	ClientID     string
	ClientSecret string

	mu       sync.Mutex
	keys     []*rsa.PrivateKey // published; the last signs
	stranger *rsa.PrivateKey   // never published
	users    map[string]map[string]any
	signIn   string // the subject the authorization endpoint signs in
	codes    map[string]providerCode
	access   map[string]string // access token → subject
	tamper   func(claims map[string]any)
	signNone bool
	signOdd  bool
	// Codes counts the codes the token endpoint took: a code askd did not
	// redeem stays uncounted.
	Codes int
}

type providerCode struct {
	sub, nonce, challenge, redirect string
}

// StartProvider starts a provider on 127.0.0.1:0, stopped in t.Cleanup,
// with askd registered as client "askd".
func StartProvider(t testing.TB) *Provider {
	t.Helper()
	p := &Provider{ClientID: "askd", ClientSecret: "askd-secret", users: map[string]map[string]any{},
		codes: map[string]providerCode{}, access: map[string]string{}}
	p.keys = []*rsa.PrivateKey{newRSAKey(t)}
	p.stranger = newRSAKey(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /jwks", p.jwks)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	mux.HandleFunc("GET /userinfo", p.userinfo)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

func newRSAKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// SetUser gives the account sub the claims (sub itself is added).
func (p *Provider) SetUser(sub string, claims map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.users[sub] = claims
}

// SignIn makes sub the account the authorization endpoint signs in.
func (p *Provider) SignIn(sub string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.signIn = sub
}

// Tamper has fn change the claims of the ID tokens made from now on (nil:
// none); SignNone makes them unsigned (alg none), SignWithStrangerKey
// signs them with a key the provider does not publish.
func (p *Provider) Tamper(fn func(claims map[string]any)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tamper = fn
}

// SignNone: the ID tokens made from now on have alg none and no signature.
func (p *Provider) SignNone() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.signNone = true
}

// SignWithStrangerKey: the ID tokens made from now on are signed with a
// key the provider does not publish.
func (p *Provider) SignWithStrangerKey() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.signOdd = true
}

// RotateKey signs from now on with a new key, published beside the old.
func (p *Provider) RotateKey(t testing.TB) {
	k := newRSAKey(t)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = append(p.keys, k)
}

func (p *Provider) discovery(w http.ResponseWriter, r *http.Request) {
	writeProviderJSON(w, map[string]any{
		"issuer": p.URL, "authorization_endpoint": p.URL + "/authorize", "token_endpoint": p.URL + "/token",
		"userinfo_endpoint": p.URL + "/userinfo", "jwks_uri": p.URL + "/jwks", "end_session_endpoint": p.URL + "/logout",
		"response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"}, "code_challenge_methods_supported": []string{"S256"},
	})
}

func (p *Provider) jwks(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var set jose.JSONWebKeySet
	for i, k := range p.keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: keyID(i), Algorithm: "RS256", Use: "sig"})
	}
	writeProviderJSON(w, set)
}

func keyID(i int) string { return "key-" + string(rune('a'+i)) }

func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != p.ClientID || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	code := rand.Text()
	p.codes[code] = providerCode{sub: p.signIn, nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
	p.mu.Unlock()
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	bq := back.Query()
	bq.Set("code", code)
	bq.Set("state", q.Get("state"))
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c, found := p.codes[r.PostFormValue("code")]
	delete(p.codes, r.PostFormValue("code")) // once
	sum := sha256.Sum256([]byte(r.PostFormValue("code_verifier")))
	switch {
	case id != p.ClientID || secret != p.ClientSecret:
		providerError(w, "invalid_client")
		return
	case !found || r.PostFormValue("redirect_uri") != c.redirect:
		providerError(w, "invalid_grant")
		return
	case base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge:
		providerError(w, "invalid_grant") // PKCE
		return
	}
	p.Codes++
	now := time.Now()
	claims := map[string]any{"iss": p.URL, "sub": c.sub, "aud": p.ClientID, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "nonce": c.nonce}
	for k, v := range p.users[c.sub] {
		claims[k] = v
	}
	if p.tamper != nil {
		p.tamper(claims)
	}
	idToken, err := p.sign(claims)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	access := rand.Text()
	p.access[access] = c.sub
	writeProviderJSON(w, map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 300, "id_token": idToken})
}

// sign makes an ID token of claims as the provider is set to.
func (p *Provider) sign(claims map[string]any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	if p.signNone {
		enc := base64.RawURLEncoding.EncodeToString
		return enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc(payload) + ".", nil
	}
	key, kid := p.keys[len(p.keys)-1], keyID(len(p.keys)-1)
	if p.signOdd {
		key = p.stranger // under a published key's id: only the signature tells
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

func (p *Provider) userinfo(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sub, ok := p.access[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	if !ok {
		http.Error(w, "unknown access token", http.StatusUnauthorized)
		return
	}
	claims := map[string]any{"sub": sub}
	for k, v := range p.users[sub] {
		claims[k] = v
	}
	writeProviderJSON(w, claims)
}

func providerError(w http.ResponseWriter, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]string{"error": code})
}

func writeProviderJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// Reset makes the provider's ID tokens right again: no Tamper, signed by
// its published key.
func (p *Provider) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tamper, p.signNone, p.signOdd = nil, false, false
}
