// Package response holds what askd's HTTP front ends share: what the API
// (internal/httpapi) and the inbox page (internal/web) must answer alike, and
// the access line (AccessLine) through which a handler mounted in the API,
// the MCP endpoint (internal/mcpserver), tells the access log what only it
// knows. Adapters never import each other, so what they need lives here.
package response

import (
	"net/http"
	"strings"

	"github.com/askd-dev/askd"
)

// Status is the HTTP status of an error code (askd.ErrorCode): the one table
// from codes to statuses for every HTTP response. EINTERNAL and any unknown
// code are 500.
//
// Storage faults: a full disk is 507 Insufficient Storage, the status made
// for it; the database unreachable, busy past its wait, read-only or damaged
// is 503, since the server cannot serve now for a cause the operator can
// remove and /readyz reports the same cause meanwhile (a busy database also
// carries Retry-After). None is 500, which stays "a bug in askd".
func Status(code string) int {
	switch code {
	case askd.EINVALID:
		return http.StatusBadRequest
	case askd.EMISMATCH:
		return http.StatusUnprocessableEntity
	case askd.ENOTFOUND:
		return http.StatusNotFound
	case askd.ECONFLICT:
		return http.StatusConflict
	case askd.EFORBIDDEN:
		return http.StatusForbidden
	case askd.EUNAUTHORIZED:
		return http.StatusUnauthorized
	case askd.ELIMIT:
		return http.StatusTooManyRequests
	case askd.EUNAVAILABLE, askd.EBUSY, askd.EREADONLY, askd.ECORRUPT:
		return http.StatusServiceUnavailable
	case askd.EFULL:
		return http.StatusInsufficientStorage
	}
	return http.StatusInternalServerError
}

// AcceptsGzip reports whether the client takes gzip-encoded responses: its
// Accept-Encoding lists gzip, with any q but 0.
func AcceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}
