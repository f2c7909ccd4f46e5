// Package web serves askd's inbox page (SPEC §3.2): an HTML page, a stylesheet
// and a few JavaScript modules embedded in the binary, no build step and
// nothing fetched from elsewhere. The page talks to the JSON API and the event
// stream of internal/httpapi; this package adds only what the page needs
// beside them: the sign-in page, and option previews and ask details
// rendered on the server (Markdown through goldmark, sanitized by bluemonday;
// HTML previews only inside a sandboxed frame with its own
// Content-Security-Policy).
//
// Every page response carries a strict Content-Security-Policy: scripts from
// this origin only, no inline script, no plugins, no framing, no <base>.
package web

import (
	"context"
	"errors"
	"html/template"
	"net/http"
	"strings"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// pageCSP is the policy of the inbox and sign-in pages. Styles come from the
// stylesheet only; scripts may still set element.style (CSSOM), which the
// policy allows. Frames may load only this origin's preview documents.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-src 'self'; form-action 'self'; manifest-src 'self'; worker-src 'self'; " +
	"base-uri 'none'; object-src 'none'; frame-ancestors 'none'"

// Handler serves the inbox page, its assets, the sign-in page and option
// previews. Mount it at "/" beside the HTTP API.
type Handler struct {
	svc    *app.Service
	assets *assets
	mux    *http.ServeMux
}

// New returns the inbox handler over svc.
func New(svc *app.Service) *Handler {
	h := &Handler{svc: svc, assets: loadAssets(), mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /{$}", h.index)
	h.mux.HandleFunc("GET /signin.html", h.signInPage)
	h.mux.HandleFunc("GET /assets/{name}", h.asset)
	h.mux.HandleFunc("GET /assets/{v}/{name}", h.asset)
	h.mux.HandleFunc("GET /favicon.ico", h.favicon)
	h.mux.HandleFunc("GET /sw.js", h.serviceWorker)
	h.mux.HandleFunc("GET /manifest.webmanifest", h.manifest)
	h.mux.HandleFunc("GET /inbox/previews/{id}", h.previews)
	h.mux.HandleFunc("GET /inbox/previews/{id}/{q}/{o}", h.previewDoc)
	h.mux.HandleFunc("GET /inbox/details", h.details)
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w, pageCSP)
		http.NotFound(w, r)
	})
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// securityHeaders sets the headers every response of this package carries.
func securityHeaders(w http.ResponseWriter, csp string) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	// Not no-referrer: under it, browsers send "Origin: null" with form
	// posts (sign-in, sign-out), which the server's Origin check refuses.
	hd.Set("Referrer-Policy", "same-origin")
	if strings.Contains(csp, "frame-ancestors 'none'") {
		hd.Set("X-Frame-Options", "DENY")
	} else {
		hd.Set("X-Frame-Options", "SAMEORIGIN")
	}
}

// human returns the person whose browser session the cookie (set by
// internal/httpapi's /signin) names, or an EUNAUTHORIZED error. Browser
// sessions are only ever a human token's.
func (h *Handler) human(r *http.Request) (askd.Caller, error) {
	ck, err := r.Cookie(app.BrowserCookie)
	if err != nil {
		return askd.Caller{}, askd.Errorf(askd.EUNAUTHORIZED, "not signed in")
	}
	return h.svc.BrowserCaller(r.Context(), ck.Value)
}

var pages = template.Must(template.ParseFS(static, "static/index.html", "static/signin.html"))

// index serves the inbox page, or sends a visitor who is not signed in to the
// sign-in page. The page carries the id of the newest event, so its event
// stream resumes right after the state it loads and misses nothing.
func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w, pageCSP)
	w.Header().Set("Cache-Control", "no-store")
	if _, err := h.human(r); err != nil {
		if askd.ErrorCode(err) == askd.EUNAUTHORIZED {
			http.Redirect(w, r, "/signin.html", http.StatusSeeOther)
			return
		}
		http.Error(w, askd.ErrorMessage(err), http.StatusServiceUnavailable)
		return
	}
	cursor, err := h.lastEventID(r.Context())
	if err != nil {
		http.Error(w, "database unavailable", http.StatusServiceUnavailable)
		return
	}
	h.render(w, r, "index.html", map[string]any{"Cursor": cursor, "V": h.assets.version})
}

func (h *Handler) lastEventID(ctx context.Context) (int64, error) {
	var id int64
	err := h.svc.Store().View(ctx, func(tx askd.Tx) (err error) {
		id, err = tx.Events.LastEventID(ctx)
		return err
	})
	return id, err
}

// signInMessages are the only texts the sign-in page shows for ?error=; the
// query value itself is never echoed.
var signInMessages = map[string]string{
	"unknown":    "That token is unknown or has been revoked.",
	"agent":      "That is an agent token. Agents cannot open the inbox; paste a human token.",
	"code":       "That sign-in link has expired or was already used. Run askd signin-link for a new one, or paste a human token.",
	"token-link": "Sign-in links no longer carry a token. Run askd signin-link for a link with a one-time code, or paste a human token.",
}

func (h *Handler) signInPage(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w, pageCSP)
	w.Header().Set("Cache-Control", "no-store")
	h.render(w, r, "signin.html", map[string]any{
		"Error": signInMessages[r.URL.Query().Get("error")],
		"V":     h.assets.version,
		// SPEC §15: "Sign in with NAME" beside the rest; after signing
		// out of a provider's session, its own sign-out offered.
		"OIDC":      h.svc.OIDCName(),
		"SignedOut": r.URL.Query().Get("signed-out") == "oidc" && h.svc.OIDCName() != "",
	})
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, name string, data any) {
	var b strings.Builder
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, "template: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	writeMaybeGzip(w, r, []byte(b.String()))
}

var errNoPreview = errors.New("no such preview")
