package response

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/askd-dev/askd"
)

func TestStatus(t *testing.T) {
	tests := []struct {
		name string
		code string
		want int
	}{
		{"invalid", askd.EINVALID, http.StatusBadRequest},
		{"mismatch", askd.EMISMATCH, http.StatusUnprocessableEntity},
		{"not found", askd.ENOTFOUND, http.StatusNotFound},
		{"conflict", askd.ECONFLICT, http.StatusConflict},
		{"forbidden", askd.EFORBIDDEN, http.StatusForbidden},
		{"unauthorized", askd.EUNAUTHORIZED, http.StatusUnauthorized},
		{"limit", askd.ELIMIT, http.StatusTooManyRequests},
		{"unavailable", askd.EUNAVAILABLE, http.StatusServiceUnavailable},
		{"disk full", askd.EFULL, http.StatusInsufficientStorage},
		{"busy", askd.EBUSY, http.StatusServiceUnavailable},
		{"read-only", askd.EREADONLY, http.StatusServiceUnavailable},
		{"corrupt", askd.ECORRUPT, http.StatusServiceUnavailable},
		{"internal", askd.EINTERNAL, http.StatusInternalServerError},
		{"unknown code", "no_such_code", http.StatusInternalServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Status(tt.code); got != tt.want {
				t.Errorf("Status(%q) = %d, want %d", tt.code, got, tt.want)
			}
		})
	}
}

func TestAcceptsGzip(t *testing.T) {
	tests := []struct {
		name   string
		header string
		want   bool
	}{
		{"none", "", false},
		{"gzip", "gzip", true},
		{"among others", "br, gzip, deflate", true},
		{"any case", "GZip", true},
		{"weighted", "gzip;q=0.5", true},
		{"refused", "gzip;q=0", false},
		{"refused with spaces", "gzip ; q = 0", false},
		{"another coding", "x-gzip, deflate", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			if tt.header != "" {
				r.Header.Set("Accept-Encoding", tt.header)
			}
			if got := AcceptsGzip(r); got != tt.want {
				t.Errorf("AcceptsGzip(%q) = %v, want %v", tt.header, got, tt.want)
			}
		})
	}
}
