package web

import (
	"net/http"
	"strings"

	"github.com/askd-dev/askd/internal/response"
)

// Installing the inbox (docs/notifications.md, Web Push): the web app
// manifest and the service worker, both at the root, so that the worker's
// scope is the whole inbox. Neither needs a sign-in: they hold nothing of
// anyone's.

// workerCSP is the service worker's own policy (a worker's fetches follow
// the policy it was served with): it fetches only this origin, the answer
// links it POSTs.
const workerCSP = "default-src 'none'; connect-src 'self'; img-src 'self'"

// serviceWorker serves GET /sw.js. It is revalidated on every check
// (no-cache), so a new binary's worker replaces the old one.
func (h *Handler) serviceWorker(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w, workerCSP)
	w.Header().Set("Service-Worker-Allowed", "/")
	h.root(w, r, "sw.js", "text/javascript; charset=utf-8")
}

// manifest serves GET /manifest.webmanifest.
func (h *Handler) manifest(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w, pageCSP)
	h.root(w, r, "manifest.webmanifest", "application/manifest+json")
}

// root serves the embedded file name at a fixed URL, revalidated by ETag.
func (h *Handler) root(w http.ResponseWriter, r *http.Request, name, contentType string) {
	f := h.assets.files[name]
	hd := w.Header()
	hd.Set("Content-Type", contentType)
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", f.etag)
	hd.Set("Vary", "Accept-Encoding")
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, f.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := f.body
	if response.AcceptsGzip(r) && len(f.gz) < len(f.body) {
		hd.Set("Content-Encoding", "gzip")
		body = f.gz
	}
	w.Write(body)
}
