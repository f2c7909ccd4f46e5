package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// SessionHeader names the agent's session on MCP and HTTP requests.
const SessionHeader = "Askd-Session"

type handlerFunc func(w http.ResponseWriter, r *http.Request, c askd.Caller) error

// authed wraps h: it authenticates the request (bearer token, or the inbox
// cookie), checks the role and the Origin of state-changing browser requests,
// and writes h's error, if any, through the one status table.
func (s *Server) authed(role askd.Role, h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := s.caller(r)
		if err == nil {
			err = s.allowed(r, c, role)
		}
		if err == nil {
			err = h(w, r, c)
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	}
}

// caller authenticates r: a bearer token, or else the inbox cookie, which
// names a browser session (app.Service.BrowserCaller), never a token. Agents'
// session comes from the Askd-Session header, defaulting to the token's name.
// Its errors refuse r before its body is read (see beforeBody).
func (s *Server) caller(r *http.Request) (_ askd.Caller, err error) {
	defer refuseUnread(&err)
	var c askd.Caller
	token := bearer(r)
	ck, cookieErr := r.Cookie(app.BrowserCookie)
	fromCookie := token == "" && cookieErr == nil
	if fromCookie {
		c, err = s.authenticate(r, ck.Value, s.app.KnownBrowser, s.app.BrowserCaller)
	} else {
		c, err = s.authenticate(r, token, s.app.KnownToken, s.app.Authenticate)
	}
	if err != nil {
		return c, err
	}
	noteCaller(r, c, fromCookie)
	if fromCookie {
		if unsafeMethod(r.Method) && !sameOrigin(r) {
			return c, askd.Errorf(askd.EFORBIDDEN, "cross-origin request refused: the Origin header does not match this server")
		}
	} else if unsafeMethod(r.Method) && r.Header.Get("Origin") != "" && !sameOrigin(r) {
		return c, askd.Errorf(askd.EFORBIDDEN, "cross-origin request refused: the Origin header does not match this server")
	}
	if c.Role == askd.RoleAgent {
		if sess := r.Header.Get(SessionHeader); sess != "" {
			if err := askd.ValidName(SessionHeader, sess); err != nil {
				return c, err
			}
			c.Session = sess
		}
	}
	return c, nil
}

// authenticate checks secret (a token, or a browser session's id) with check,
// behind the throttle of failed attempts (see throttle.go): an address over
// its limit gets ELIMIT, its secret checked only if this server has verified
// it before (known); a wrong one gets EUNAUTHORIZED and counts against the
// address. A missing secret is not a failure.
func (s *Server) authenticate(r *http.Request, secret string, known func(string) bool, check func(context.Context, string) (askd.Caller, error)) (askd.Caller, error) {
	addr := clientAddr(r)
	if after, over := s.throttle.refused(addr); over && !known(secret) {
		noteFailedAuth(r)
		return askd.Caller{}, errThrottled(after)
	}
	c, err := check(r.Context(), secret)
	if secret != "" && askd.ErrorCode(err) == askd.EUNAUTHORIZED {
		s.throttle.failed(addr) // this one was checked: it gets its 401
		noteFailedAuth(r)
	}
	return c, err
}

// allowed checks the caller's role against the route's and the server's
// role. Its errors refuse r before its body is read (see beforeBody).
func (s *Server) allowed(r *http.Request, c askd.Caller, want askd.Role) (err error) {
	defer refuseUnread(&err)
	switch {
	case s.opts.Role == RoleAgent && c.Role == askd.RoleHuman:
		return askd.Errorf(askd.EFORBIDDEN, "this askd serves the agent side only; use an inbox instance")
	case s.opts.Role == RoleInbox && c.Role == askd.RoleAgent:
		return askd.Errorf(askd.EFORBIDDEN, "this askd serves the inbox side only; use an agent instance")
	case want != "" && c.Role != want:
		return askd.Errorf(askd.EFORBIDDEN, "%s tokens cannot %s %s", c.Role, r.Method, r.URL.Path)
	}
	return nil
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

func unsafeMethod(m string) bool {
	return m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions
}

// sameOrigin reports whether the request's Origin names this server. Browsers
// send Origin on every state-changing fetch; a missing one is refused for
// cookie-authenticated requests.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" || o == "null" {
		return false
	}
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// legacyCookie is the cookie older askds set, holding the human token
// itself. It is no longer read; signing in or out expires it.
const legacyCookie = "askd_token"

// signIn handles GET /signin?code=… (the link askd serve and askd
// signin-link print) and POST /signin (the sign-in page's form, with a human
// token): it starts a browser session, sets the cookie to its id and
// redirects to a clean URL. No referrer leaves this response, so the code in
// the link reaches no one else; GET /signin?token=… is refused, so no token
// is kept in the browser's history.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Cache-Control", "no-store")
	// Guessing codes or tokens here is throttled as on the API: an address
	// over its limit of failed attempts is refused before anything is read.
	addr := clientAddr(r)
	if after, over := s.throttle.refused(addr); over {
		noteFailedAuth(r)
		s.writeError(w, r, errThrottled(after))
		return
	}
	var (
		id   string
		err  error
		fail = "/signin.html?error=code"
	)
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodPost:
		if !sameOrigin(r) {
			http.Error(w, "cross-origin sign-in refused", http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		token := strings.TrimSpace(r.PostFormValue("token"))
		if token == "" {
			http.Redirect(w, r, "/signin.html", http.StatusSeeOther)
			return
		}
		fail = "/signin.html?error=unknown"
		id, err = s.app.SignInWithToken(r.Context(), token)
	case q.Has("token"):
		http.Redirect(w, r, "/signin.html?error=token-link", http.StatusSeeOther)
		return
	case q.Get("code") != "":
		id, err = s.app.SignInWithCode(r.Context(), q.Get("code"))
	default:
		http.Redirect(w, r, "/signin.html", http.StatusSeeOther)
		return
	}
	switch askd.ErrorCode(err) {
	case "":
	case askd.EUNAUTHORIZED:
		s.throttle.failed(addr)
		noteFailedAuth(r)
		http.Redirect(w, r, fail, http.StatusSeeOther)
		return
	case askd.EFORBIDDEN:
		http.Redirect(w, r, "/signin.html?error=agent", http.StatusSeeOther)
		return
	default:
		s.writeError(w, r, err)
		return
	}
	s.setBrowserCookie(w, r, id)
	if _, err := r.Cookie(legacyCookie); err == nil {
		s.expireCookie(w, r, legacyCookie)
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// signOut ends the browser session on the server, then clears the cookie.
func (s *Server) signOut(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		http.Error(w, "cross-origin sign-out refused", http.StatusForbidden)
		return
	}
	next := "/signin.html"
	if ck, err := r.Cookie(app.BrowserCookie); err == nil {
		// Signed in with the provider: the sign-in page then offers its
		// sign-out too, where it has one (SPEC §15).
		if c, err := s.app.BrowserCaller(r.Context(), ck.Value); err == nil && strings.HasPrefix(c.Via, askd.ViaOIDC) {
			if end, err := s.app.OIDCEndSession(r.Context()); err == nil && end != "" {
				next = "/signin.html?signed-out=oidc"
			}
		}
		if err := s.app.SignOut(r.Context(), ck.Value); err != nil {
			s.writeError(w, r, err) // the cookie stays: it would still work
			return
		}
	}
	s.expireCookie(w, r, app.BrowserCookie)
	if _, err := r.Cookie(legacyCookie); err == nil {
		s.expireCookie(w, r, legacyCookie)
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// secureCookie reports whether the inbox cookie must be Secure on r's reply.
func (s *Server) secureCookie(r *http.Request) bool { return r.TLS != nil || s.opts.SecureCookies }

func (s *Server) expireCookie(w http.ResponseWriter, r *http.Request, name string) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.secureCookie(r), MaxAge: -1,
	})
}
