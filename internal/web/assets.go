package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/askd-dev/askd/internal/response"
)

//go:embed static
var static embed.FS

// asset is one embedded file, compressed once at start.
type asset struct {
	body, gz    []byte
	contentType string
	etag        string
}

// assets are the page's static files. version is a hash of all of them: the
// page names its assets under /assets/<version>/, so a browser may keep them
// for good, and a new binary's page asks for new URLs.
type assets struct {
	files   map[string]*asset
	version string
}

func loadAssets() *assets {
	a := &assets{files: map[string]*asset{}}
	all := sha256.New()
	entries, err := fs.ReadDir(static, "static")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasSuffix(name, ".html") { // pages are templates
			continue
		}
		body, err := static.ReadFile("static/" + name)
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(body)
		all.Write(sum[:])
		ct := mime.TypeByExtension(path.Ext(name))
		if strings.HasSuffix(name, ".js") {
			ct = "text/javascript; charset=utf-8" // the platform's table may lack it
		}
		a.files[name] = &asset{body: body, gz: gzipBytes(body), contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	a.version = hex.EncodeToString(all.Sum(nil)[:6])
	return a
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// writeMaybeGzip writes body, gzip-compressed when the client accepts it.
func writeMaybeGzip(w http.ResponseWriter, r *http.Request, body []byte) {
	w.Header().Add("Vary", "Accept-Encoding")
	if response.AcceptsGzip(r) && len(body) > 512 {
		w.Header().Set("Content-Encoding", "gzip")
		body = gzipBytes(body)
	}
	w.Write(body)
}

// asset serves /assets/<name> and /assets/<version>/<name>. A versioned URL
// of the current version is cacheable for good; anything else revalidates by
// ETag.
func (h *Handler) asset(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w, pageCSP)
	name, version := r.PathValue("name"), r.PathValue("v")
	f, ok := h.assets.files[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", f.contentType)
	hd.Set("ETag", f.etag)
	hd.Set("Vary", "Accept-Encoding")
	if version != "" && version == h.assets.version {
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		hd.Set("Cache-Control", "no-cache")
	}
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

func (h *Handler) favicon(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/assets/"+h.assets.version+"/icon.svg", http.StatusMovedPermanently)
}
