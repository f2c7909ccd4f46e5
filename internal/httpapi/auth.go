package httpapi

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// CookieName is the inbox's sign-in cookie. It holds the human token, HttpOnly
// and SameSite=Strict, so page scripts cannot read it and other sites cannot
// send it.
const CookieName = "askd_token"

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

// caller authenticates r. Agents' session comes from the Askd-Session header,
// defaulting to the token's name. Its errors refuse r before its body is
// read (see beforeBody).
func (s *Server) caller(r *http.Request) (_ askd.Caller, err error) {
	defer refuseUnread(&err)
	token, fromCookie := bearer(r), false
	if token == "" {
		if ck, err := r.Cookie(CookieName); err == nil {
			token, fromCookie = ck.Value, true
		}
	}
	c, err := s.authenticate(r, token)
	if err != nil {
		return c, err
	}
	if fromCookie {
		if c.Role != askd.RoleHuman {
			return c, askd.Errorf(askd.EUNAUTHORIZED, "agent tokens cannot sign in to the inbox")
		}
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

// authenticate is app.Authenticate behind the throttle of failed attempts
// (see throttle.go): an address over its limit gets ELIMIT, its token
// checked only if this server has verified it before; a wrong token gets
// EUNAUTHORIZED and counts against the address. A missing token is not a
// failure.
func (s *Server) authenticate(r *http.Request, token string) (askd.Caller, error) {
	addr := clientAddr(r)
	if after, over := s.throttle.refused(addr); over && !s.app.KnownToken(token) {
		return askd.Caller{}, errThrottled(after)
	}
	c, err := s.app.Authenticate(r.Context(), token)
	if token != "" && askd.ErrorCode(err) == askd.EUNAUTHORIZED {
		s.throttle.failed(addr) // this one was checked: it gets its 401
	}
	return c, err
}

// signInThrottled refuses a sign-in from an address over its limit of
// failed authentications, and counts a wrong token offered by the link
// (?token=) or the form against it; it reports whether it wrote the refusal.
func (s *Server) signInThrottled(w http.ResponseWriter, r *http.Request) bool {
	token := r.URL.Query().Get("token")
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		token = strings.TrimSpace(r.PostFormValue("token"))
	}
	if token == "" {
		return false
	}
	if _, err := s.authenticate(r, token); askd.ErrorCode(err) == askd.ELIMIT {
		s.writeError(w, r, err)
		return true
	}
	return false
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

// signIn handles GET /signin?token=… (the link askd serve prints) and POST
// /signin (the form): it checks the token is a human's, sets the cookie and
// redirects to a clean URL.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	if s.signInThrottled(w, r) {
		return
	}
	token := r.URL.Query().Get("token")
	if r.Method == http.MethodPost {
		if !sameOrigin(r) {
			http.Error(w, "cross-origin sign-in refused", http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		token = strings.TrimSpace(r.PostFormValue("token"))
	}
	if token == "" {
		http.Redirect(w, r, "/signin.html", http.StatusSeeOther)
		return
	}
	c, err := s.app.Authenticate(r.Context(), token)
	switch {
	case err != nil:
		http.Redirect(w, r, "/signin.html?error=unknown", http.StatusSeeOther)
		return
	case c.Role != askd.RoleHuman:
		http.Redirect(w, r, "/signin.html?error=agent", http.StatusSeeOther)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: 90 * 24 * 3600,
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// signOut clears the cookie.
func (s *Server) signOut(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		http.Error(w, "cross-origin sign-out refused", http.StatusForbidden)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/signin.html", http.StatusSeeOther)
}

var _ = app.WithCaller
