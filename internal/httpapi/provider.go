package httpapi

import (
	"html/template"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// # Signing in with a provider or through a proxy (SPEC §15)
//
// OpenID Connect: the sign-in page's "Sign in with NAME" opens
// /auth/oidc/start, which sets a cookie holding this browser's binding to
// the sign-in (HttpOnly, SameSite=Lax, at most app.ProviderSignInTTL, only
// for /auth/oidc/) and sends the browser to the provider. The provider
// sends it back to /auth/oidc/callback: a cross-site navigation, which
// carries the Lax cookie but would not carry a Strict one. The callback
// deletes the binding cookie, has the app finish the sign-in, and answers
// with a page that takes a same-site step: it holds the new browser
// session's id in a Lax cookie for /auth/finish only, for a minute, and
// its meta refresh opens /auth/finish from askd's own page, which moves
// the id into the Strict browser cookie. So the Strict cookie is set only
// on a same-site request, and is sent from then on.
//
// A trusted proxy (Options.AuthProxy): a browser's request for the inbox
// page from one of the proxy's addresses, carrying its header and no
// working browser cookie and no token, signs in as the person the header
// names, by the same same-site step. The header is read nowhere else: not
// on /mcp, /hooks or any API path, never beside a token, and from any
// other address it is ignored and logged.

// AuthProxy is a reverse proxy trusted to name the person signed in.
type AuthProxy struct {
	Header  string         // the header naming the person, e.g. X-Forwarded-User
	Trusted []netip.Prefix // the proxy's addresses
}

// trusts reports whether r comes from one of the proxy's addresses.
func (p *AuthProxy) trusts(r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := ap.Addr().Unmap()
	for _, pre := range p.Trusted {
		if pre.Contains(ip) {
			return true
		}
	}
	return false
}

// Cookies of a sign-in with a provider or proxy.
const (
	oidcCookie   = "askd_oidc"   // the binding, for /auth/oidc/
	finishCookie = "askd_finish" // the new browser session's id, for /auth/finish
	finishPath   = "/auth/finish"
	finishTTL    = time.Minute
)

// beginOIDC is GET /auth/oidc/start: the binding cookie, then the provider.
func (s *Server) beginOIDC(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	authURL, binding, err := s.app.BeginOIDC(r.Context())
	if err != nil {
		s.log.Warn("begin a sign-in with the provider", "err", err)
		s.signInPage(w, http.StatusBadGateway, "The identity provider cannot be reached just now", "askd could not begin the sign-in with it. Try again shortly; the operator finds why in askd's log.")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: oidcCookie, Value: binding, Path: "/auth/oidc/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secureCookie(r), MaxAge: int(app.ProviderSignInTTL / time.Second),
	})
	http.Redirect(w, r, authURL, http.StatusSeeOther)
}

// oidcCallback is GET /auth/oidc/callback: the provider's answer, the
// binding cookie deleted whatever happens.
func (s *Server) oidcCallback(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer") // the code is in this URL
	addr := clientAddr(r)
	if after, over := s.throttle.refused(addr); over {
		noteFailedAuth(r)
		s.writeError(w, r, errThrottled(after))
		return
	}
	var binding string
	if ck, err := r.Cookie(oidcCookie); err == nil {
		binding = ck.Value
	}
	http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: "", Path: "/auth/oidc/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secureCookie(r), MaxAge: -1})
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		s.signInPage(w, http.StatusUnauthorized, "The identity provider did not sign you in", "It answered "+e+". Sign in again from askd's sign-in page.")
		return
	}
	id, err := s.app.FinishOIDC(r.Context(), q.Get("state"), binding, q.Get("code"))
	if err != nil {
		if app.Refusal(err) == app.RefusedFailed {
			s.throttle.failed(addr) // a state or code that does not fit counts as a wrong secret
			noteFailedAuth(r)
		}
		s.refused(w, r, err)
		return
	}
	s.finishStep(w, r, id)
}

// refused answers a refused sign-in with a page saying why (the app's
// words: whom to ask), or the error as any other.
func (s *Server) refused(w http.ResponseWriter, r *http.Request, err error) {
	if app.Refusal(err) == "" {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusForbidden
	if askd.ErrorCode(err) == askd.EUNAUTHORIZED {
		status = http.StatusUnauthorized
	}
	s.signInPage(w, status, "askd did not sign you in", askd.ErrorMessage(err))
}

// finishStep answers a sign-in with the same-site step to /auth/finish,
// holding the browser session's id in a Lax cookie for that path only.
func (s *Server) finishStep(w http.ResponseWriter, r *http.Request, id string) {
	http.SetCookie(w, &http.Cookie{
		Name: finishCookie, Value: id, Path: finishPath, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secureCookie(r), MaxAge: int(finishTTL / time.Second),
	})
	w.Header().Set("Cache-Control", "no-store")
	writeHTML(w, http.StatusOK, stepPage, nil)
}

// finishSignIn is GET /auth/finish, opened by finishStep's page: the
// browser session's id moves from the Lax cookie to the Strict browser
// cookie, and the inbox opens.
func (s *Server) finishSignIn(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	ck, err := r.Cookie(finishCookie)
	http.SetCookie(w, &http.Cookie{Name: finishCookie, Value: "", Path: finishPath, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secureCookie(r), MaxAge: -1})
	if err != nil {
		http.Redirect(w, r, "/signin.html", http.StatusSeeOther)
		return
	}
	if _, err := s.app.BrowserCaller(r.Context(), ck.Value); err != nil {
		http.Redirect(w, r, "/signin.html", http.StatusSeeOther)
		return
	}
	s.setBrowserCookie(w, r, ck.Value)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// oidcSignOut is GET /auth/oidc/signout, which the sign-in page offers
// after signing out of askd: the provider's own sign-out.
func (s *Server) oidcSignOut(w http.ResponseWriter, r *http.Request) {
	end, err := s.app.OIDCEndSession(r.Context())
	if err != nil || end == "" {
		http.Redirect(w, r, "/signin.html", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, end, http.StatusSeeOther)
}

// proxied is the inbox page behind a trusted proxy: a page request that
// the proxy's header names someone for, with no working browser cookie
// and no token, signs them in first.
func (s *Server) proxied(page http.Handler) http.Handler {
	p := s.opts.AuthProxy
	if p == nil || page == nil {
		return page
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.Header.Get(p.Header)
		if name == "" || r.Method != http.MethodGet || r.URL.Path != "/" && r.URL.Path != "/signin.html" ||
			bearer(r) != "" || !p.trusts(r) || s.browserSignedIn(r) {
			page.ServeHTTP(w, r)
			return
		}
		id, err := s.app.SignInWithProxy(r.Context(), name)
		if err != nil {
			s.refused(w, r, err)
			return
		}
		s.finishStep(w, r, id)
	})
}

// browserSignedIn reports whether r carries a browser cookie that works.
func (s *Server) browserSignedIn(r *http.Request) bool {
	ck, err := r.Cookie(app.BrowserCookie)
	if err != nil {
		return false
	}
	_, err = s.app.BrowserCaller(r.Context(), ck.Value)
	return err == nil
}

// noteProxyHeader logs a request carrying the proxy's header from an
// address the proxy does not have: the header is ignored.
func (s *Server) noteProxyHeader(r *http.Request) {
	if p := s.opts.AuthProxy; p != nil && r.Header.Get(p.Header) != "" && !p.trusts(r) {
		s.log.Warn("ignored the proxy's header from an address not trusted (--auth-proxy-trusted)", "header", p.Header, "remote", clientAddr(r))
	}
}

// setBrowserCookie sets the Strict browser cookie to a browser session's id.
func (s *Server) setBrowserCookie(w http.ResponseWriter, r *http.Request, id string) {
	http.SetCookie(w, &http.Cookie{
		Name: app.BrowserCookie, Value: id, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.secureCookie(r), MaxAge: int(app.BrowserSessionMax / time.Second),
	})
}

// htmlCSP is the policy of the pages here: no script at all.
const htmlCSP = "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

var (
	stepPage = template.Must(template.New("step").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="0;url=/auth/finish"><title>Signing in · askd</title>
<link rel="stylesheet" href="/assets/app.css"></head>
<body class="signin-page"><main class="signin"><h1>askd</h1><p>Signing you in… <a href="/auth/finish">Continue</a></p></main></body></html>
`))
	messagePage = template.Must(template.New("message").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign-in · askd</title><link rel="stylesheet" href="/assets/app.css"></head>
<body class="signin-page"><main class="signin"><h1>askd</h1><p class="error" role="alert">{{.Title}}</p><p>{{.Text}}</p>
<p><a href="/signin.html">Back to the sign-in page</a></p></main></body></html>
`))
)

// signInPage answers with a page saying title and text.
func (s *Server) signInPage(w http.ResponseWriter, status int, title, text string) {
	writeHTML(w, status, messagePage, map[string]string{"Title": title, "Text": text})
}

func writeHTML(w http.ResponseWriter, status int, t *template.Template, data any) {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		http.Error(w, "template: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", htmlCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	w.Write([]byte(b.String()))
}

// signedInWith is GET /api/me's signed_in_with: how this browser signed
// in, for the Settings view.
func (s *Server) signedInWith(via string) map[string]string {
	out := map[string]string{"method": via}
	if issuer, ok := strings.CutPrefix(via, askd.ViaOIDC); ok {
		out["method"], out["issuer"] = "oidc", issuer
		if name := s.app.OIDCName(); name != "" && s.app.OIDCIssuer() == issuer {
			out["provider"] = name
		}
	}
	if via == askd.ViaProxy && s.opts.AuthProxy != nil {
		out["header"] = s.opts.AuthProxy.Header
	}
	return out
}
