package httpapi

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"sync"

	"github.com/askd-dev/askd/api"
	"github.com/askd-dev/askd/internal/response"
)

// openAPIDocument is the OpenAPI document as served, and gzip-compressed
// once for the clients that take it (it compresses about 8:1).
var openAPIDocument = sync.OnceValues(func() (plain, zipped []byte) {
	plain = api.Document()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(plain)
	_ = zw.Close()
	return plain, buf.Bytes()
})

// openAPI is GET /api/openapi.json: the API's OpenAPI document (package
// api), the contract's machine-readable form, to anyone: it holds nothing
// that is not in the README.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	plain, zipped := openAPIDocument()
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Add("Vary", "Accept-Encoding")
	if response.AcceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		_, _ = w.Write(zipped)
		return
	}
	_, _ = w.Write(plain)
}
