// Package openid speaks OpenID Connect with one provider for askd's
// sign-in (SPEC §15): discovery from the issuer's
// /.well-known/openid-configuration, the authorization code flow with PKCE
// (S256), and the ID token verified by coreos/go-oidc (signature against
// the issuer's published keys, fetched again when a token names a key not
// yet seen, so the provider may rotate them; iss, aud, exp) with its nonce
// checked here. It decides nothing about people: app.Service does, with
// what Exchange returns. It implements app.Provider.
package openid

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/askd-dev/askd/internal/app"
)

// Config is one provider and askd's registration with it.
type Config struct {
	Issuer       string // the issuer URL, exactly as its ID tokens' iss
	ClientID     string
	ClientSecret string // read from --oidc-client-secret-file, never argv
	RedirectURL  string // --public-url + /auth/oidc/callback
	Scopes       []string
	// SignedOutURL is where the provider sends a browser back after its
	// sign-out (post_logout_redirect_uri), "" for none.
	SignedOutURL string
	// HTTPClient talks to the provider; nil: one with a 10 s timeout.
	HTTPClient *http.Client
	// Now is the clock ID tokens' expiry is checked against; nil: time.Now.
	Now func() time.Time
}

// Provider is a Config's provider, discovered at first use and then kept:
// a provider that cannot be reached when askd starts is asked again at the
// next sign-in.
type Provider struct {
	cfg Config
	mu  sync.Mutex
	d   *discovered
}

// discovered is what discovery told of the provider.
type discovered struct {
	provider   *oidc.Provider
	verifier   *oidc.IDTokenVerifier
	oauth      oauth2.Config
	endSession string
}

// New returns cfg's provider; nothing is fetched until it is used.
func New(cfg Config) *Provider {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = []string{oidc.ScopeOpenID, "email", "profile"}
	}
	return &Provider{cfg: cfg}
}

var _ app.Provider = (*Provider)(nil)

// Discover reads the provider's discovery document, once it has been read
// successfully: never again.
func (p *Provider) Discover(ctx context.Context) error {
	_, err := p.discover(ctx)
	return err
}

func (p *Provider) discover(ctx context.Context) (*discovered, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.d != nil {
		return p.d, nil
	}
	ctx = oidc.ClientContext(ctx, p.cfg.HTTPClient)
	// go-oidc refuses a document whose issuer is not p.cfg.Issuer.
	provider, err := oidc.NewProvider(ctx, p.cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("discover the OpenID Connect provider %s: %w", p.cfg.Issuer, err)
	}
	var extra struct {
		EndSession string `json:"end_session_endpoint"`
	}
	if err := provider.Claims(&extra); err != nil {
		return nil, fmt.Errorf("read the discovery document of %s: %w", p.cfg.Issuer, err)
	}
	d := &discovered{
		provider: provider,
		// The key set's fetches use a context of their own, with our client.
		verifier: provider.VerifierContext(oidc.ClientContext(context.Background(), p.cfg.HTTPClient),
			&oidc.Config{ClientID: p.cfg.ClientID, Now: p.cfg.Now}),
		oauth: oauth2.Config{
			ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, RedirectURL: p.cfg.RedirectURL,
			Endpoint: provider.Endpoint(), Scopes: p.cfg.Scopes,
		},
		endSession: extra.EndSession,
	}
	p.d = d
	return d, nil
}

// AuthCodeURL is the authorization endpoint's URL for one sign-in: the code
// flow, with the state, the nonce and the S256 challenge of verifier.
func (p *Provider) AuthCodeURL(ctx context.Context, state, nonce, verifier string) (string, error) {
	d, err := p.discover(ctx)
	if err != nil {
		return "", err
	}
	return d.oauth.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), nil
}

// Exchange trades code for the signed-in identity: the token endpoint's
// answer, its ID token verified and its nonce equal to nonce, and the
// claims of the ID token over those of the userinfo endpoint (whose
// subject must be the ID token's), where the provider has one.
func (p *Provider) Exchange(ctx context.Context, code, verifier, nonce string) (*app.ProviderIdentity, error) {
	d, err := p.discover(ctx)
	if err != nil {
		return nil, err
	}
	ctx = oidc.ClientContext(ctx, p.cfg.HTTPClient)
	tok, err := d.oauth.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return nil, fmt.Errorf("exchange the code: %w", err)
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return nil, errors.New("the token endpoint's answer has no id_token")
	}
	idt, err := d.verifier.Verify(ctx, raw)
	if err != nil {
		return nil, fmt.Errorf("verify the ID token: %w", err)
	}
	if idt.Nonce != nonce {
		return nil, errors.New("verify the ID token: its nonce is not this sign-in's")
	}
	claims := map[string]any{}
	if d.provider.UserInfoEndpoint() != "" {
		info, err := d.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
		if err != nil {
			return nil, fmt.Errorf("read the userinfo endpoint: %w", err)
		}
		if info.Subject != idt.Subject {
			return nil, errors.New("the userinfo endpoint names another subject than the ID token")
		}
		if err := info.Claims(&claims); err != nil {
			return nil, fmt.Errorf("read the userinfo claims: %w", err)
		}
	}
	var own map[string]any
	if err := idt.Claims(&own); err != nil {
		return nil, fmt.Errorf("read the ID token's claims: %w", err)
	}
	maps.Copy(claims, own)
	return &app.ProviderIdentity{Issuer: idt.Issuer, Subject: idt.Subject, Claims: claims}, nil
}

// EndSessionURL is the provider's end_session_endpoint, with askd's client
// id and, when configured, where to come back to; "" when it has none.
func (p *Provider) EndSessionURL(ctx context.Context) (string, error) {
	d, err := p.discover(ctx)
	if err != nil || d.endSession == "" {
		return "", err
	}
	u, err := url.Parse(d.endSession)
	if err != nil {
		return "", fmt.Errorf("the end_session_endpoint of %s: %w", p.cfg.Issuer, err)
	}
	q := u.Query()
	q.Set("client_id", p.cfg.ClientID)
	if p.cfg.SignedOutURL != "" {
		q.Set("post_logout_redirect_uri", p.cfg.SignedOutURL)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}
