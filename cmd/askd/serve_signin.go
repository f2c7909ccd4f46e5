package main

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/httpapi"
	"github.com/askd-dev/askd/internal/openid"
)

// signInConfig is askd serve's flags of signing people in with an OpenID
// Connect provider or through a trusted proxy (SPEC §15).
type signInConfig struct {
	issuer, clientID, secretFile, name, scopes string
	allow, admin, approver                     listFlag
	roleClaim, teamClaim, teamPrefix           string
	sessionMaxAge                              time.Duration

	proxyHeader  string
	proxyTrusted listFlag
	proxyCreate  bool

	oidc  *app.OIDC          // read by check, its Provider made at serve
	proxy *httpapi.AuthProxy // read by check
}

// signInFlags are the flags of signing people in besides tokens and links.
func signInFlags(fs *flag.FlagSet, sc *signInConfig) {
	fs.StringVar(&sc.issuer, "oidc-issuer", "", "people sign in with this OpenID Connect provider (its issuer URL, discovered at\n"+
		"/.well-known/openid-configuration); needs --oidc-client-id, --oidc-client-secret-file and --public-url,\n"+
		"whose /auth/oidc/callback is the redirect URL to register with the provider")
	fs.StringVar(&sc.clientID, "oidc-client-id", "", "askd's client id at the provider")
	fs.StringVar(&sc.secretFile, "oidc-client-secret-file", "", "a file holding askd's client secret at the provider (read at start; the secret is taken\n"+
		"from no flag or variable, so it is never in a process list or a log)")
	fs.StringVar(&sc.name, "oidc-name", "", "the provider's name on the sign-in page's \"Sign in with NAME\" (default: the issuer's host)")
	fs.StringVar(&sc.scopes, "oidc-scopes", "openid email profile", "the scopes asked for, separated by spaces")
	fs.Var(&sc.allow, "oidc-allow", "CLAIM=VALUE: only an identity whose claim has this value signs in, and an unknown one then\n"+
		"becomes a person, a viewer (repeat: any one suffices). Without it or --oidc-role-claim only\n"+
		"identities linked to a person (askd token link) sign in")
	fs.StringVar(&sc.roleClaim, "oidc-role-claim", "", "the claim whose values give a person's role at every sign-in (--oidc-admin, --oidc-approver,\n"+
		"else viewer); an unknown identity then becomes a person")
	fs.Var(&sc.admin, "oidc-admin", "a --oidc-role-claim value that makes an admin (repeat, or comma-separate)")
	fs.Var(&sc.approver, "oidc-approver", "a --oidc-role-claim value that makes an approver (repeat, or comma-separate)")
	fs.StringVar(&sc.teamClaim, "oidc-team-claim", "", "the claim whose values (with --oidc-team-prefix) are a person's teams at every sign-in; the teams\n"+
		"must exist (askd team create), and the person leaves those not named")
	fs.StringVar(&sc.teamPrefix, "oidc-team-prefix", "", "only --oidc-team-claim values with this prefix name teams: PREFIX+platform is team platform")
	fs.DurationVar(&sc.sessionMaxAge, "oidc-session-max-age", app.DefaultProviderSessionMax, "how long a browser signed in by the provider (or the proxy) stays signed in at most")
	fs.StringVar(&sc.proxyHeader, "auth-proxy-header", "", "a header a trusted reverse proxy names the signed-in person in, e.g. X-Forwarded-User: a browser's\n"+
		"request for the inbox from --auth-proxy-trusted signs in as that person (never /mcp, /hooks, the\n"+
		"agent API or a request with a token); from other addresses it is ignored and logged")
	fs.Var(&sc.proxyTrusted, "auth-proxy-trusted", "the proxy's addresses, IP or CIDR (repeat, or comma-separate); required with --auth-proxy-header")
	fs.BoolVar(&sc.proxyCreate, "auth-proxy-create-people", false, "a name the proxy's header gives that is no person yet becomes one, a viewer (else it is refused)")
}

// check checks the sign-in flags and reads them into sc.oidc and sc.proxy;
// publicURL is --public-url. A mistake is a cli.UsageError naming its flag.
func (sc *signInConfig) check(publicURL string) error {
	if err := sc.checkOIDC(publicURL); err != nil {
		return err
	}
	return sc.checkProxy()
}

func (sc *signInConfig) checkOIDC(publicURL string) error {
	if sc.issuer == "" {
		for _, f := range []struct{ name, v string }{{"--oidc-client-id", sc.clientID}, {"--oidc-client-secret-file", sc.secretFile},
			{"--oidc-role-claim", sc.roleClaim}, {"--oidc-team-claim", sc.teamClaim}, {"--oidc-allow", sc.allow.String()}} {
			if f.v != "" {
				return cli.UsageError(f.name + ": needs --oidc-issuer, the provider people sign in with")
			}
		}
		return nil
	}
	u, err := url.Parse(sc.issuer)
	switch {
	case err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "":
		return cli.UsageError(fmt.Sprintf("--oidc-issuer: %q is not an issuer URL such as https://accounts.example.com", sc.issuer))
	case sc.clientID == "":
		return cli.UsageError("--oidc-client-id: required with --oidc-issuer: askd's client id at the provider")
	case sc.secretFile == "":
		return cli.UsageError("--oidc-client-secret-file: required with --oidc-issuer: a file holding askd's client secret")
	case publicURL == "":
		return cli.UsageError("--oidc-issuer: needs --public-url, the inbox's URL as people reach it: the provider sends them back to\n" +
			"its /auth/oidc/callback (register that as the redirect URL)")
	case sc.sessionMaxAge <= 0:
		return cli.UsageError("--oidc-session-max-age: must be positive")
	case (len(sc.admin) > 0 || len(sc.approver) > 0) && sc.roleClaim == "":
		return cli.UsageError("--oidc-admin, --oidc-approver: need --oidc-role-claim, the claim they are values of")
	case sc.teamPrefix != "" && sc.teamClaim == "":
		return cli.UsageError("--oidc-team-prefix: needs --oidc-team-claim")
	}
	o := &app.OIDC{Name: sc.name, Issuer: sc.issuer, RoleClaim: sc.roleClaim, TeamClaim: sc.teamClaim, TeamPrefix: sc.teamPrefix,
		Admin: splitList(sc.admin), Approver: splitList(sc.approver)}
	if o.Name == "" {
		o.Name = u.Host
	}
	for _, v := range sc.allow {
		claim, value, ok := strings.Cut(v, "=")
		if !ok || claim == "" {
			return cli.UsageError(fmt.Sprintf("--oidc-allow: %q is not CLAIM=VALUE, e.g. hd=example.com", v))
		}
		o.Allow = append(o.Allow, app.ClaimMatch{Claim: claim, Value: value})
	}
	sc.oidc = o
	return nil
}

func (sc *signInConfig) checkProxy() error {
	switch {
	case sc.proxyHeader == "" && len(sc.proxyTrusted) == 0:
		if sc.proxyCreate {
			return cli.UsageError("--auth-proxy-create-people: needs --auth-proxy-header and --auth-proxy-trusted")
		}
		return nil
	case sc.proxyHeader == "":
		return cli.UsageError("--auth-proxy-trusted: needs --auth-proxy-header, the header the proxy names people in")
	case len(sc.proxyTrusted) == 0:
		return cli.UsageError("--auth-proxy-header: needs --auth-proxy-trusted, the proxy's addresses: from any other the header is ignored")
	}
	p := &httpapi.AuthProxy{Header: sc.proxyHeader}
	for _, v := range splitList(sc.proxyTrusted) {
		pre, err := netip.ParsePrefix(v)
		if err != nil {
			ip, ierr := netip.ParseAddr(v)
			if ierr != nil {
				return cli.UsageError(fmt.Sprintf("--auth-proxy-trusted: %q is not an IP address or CIDR such as 127.0.0.1 or 10.0.0.0/8", v))
			}
			pre = netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen())
		}
		p.Trusted = append(p.Trusted, pre.Masked())
	}
	sc.proxy = p
	return nil
}

// splitList is l's values, each split at commas, without blanks.
func splitList(l listFlag) []string {
	var out []string
	for _, v := range l {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// provider makes the OIDC provider's client, reading the client secret
// from its file, and asks for its discovery document once: a provider
// that does not answer yet is asked again at the first sign-in.
func (sc *signInConfig) provider(ctx context.Context, base string, log interface{ Warn(string, ...any) }) error {
	if sc.oidc == nil {
		return nil
	}
	secret, err := os.ReadFile(sc.secretFile)
	if err != nil {
		return cli.UsageError(fmt.Sprintf("--oidc-client-secret-file: %v", err))
	}
	s := strings.TrimSpace(string(secret))
	if s == "" {
		return cli.UsageError(fmt.Sprintf("--oidc-client-secret-file: %s is empty", sc.secretFile))
	}
	p := openid.New(openid.Config{Issuer: sc.issuer, ClientID: sc.clientID, ClientSecret: s,
		RedirectURL: base + "/auth/oidc/callback", SignedOutURL: base + "/signin.html", Scopes: strings.Fields(sc.scopes)})
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := p.Discover(dctx); err != nil {
		log.Warn("the OpenID Connect provider did not answer at start; it is asked again at the first sign-in", "err", err)
	}
	sc.oidc.Provider = p
	return nil
}
