package httpapi

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/askd-dev/askd"
)

// statusOf is the one table from error codes to HTTP statuses.
func statusOf(code string) int {
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
	case askd.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// ErrorBody is the JSON body of every error response.
type ErrorBody struct {
	Error string    `json:"error"`
	Code  string    `json:"code"`
	Ask   *askd.Ask `json:"ask,omitempty"` // the current state, on a conflict
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// writeJSONCompressed is writeJSON, gzip-compressed when the client accepts
// it and the body is large enough to gain: the inbox's first load reads the
// whole list, whose JSON compresses about 4:1.
func writeJSONCompressed(w http.ResponseWriter, r *http.Request, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil || buf.Len() < 1024 || !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		writeJSON(w, status, v)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Encoding", "gzip")
	h.Add("Vary", "Accept-Encoding")
	w.WriteHeader(status)
	zw := gzip.NewWriter(w)
	_, _ = zw.Write(buf.Bytes())
	_ = zw.Close()
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := askd.ErrorCode(err)
	if code == askd.EINTERNAL {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	body := ErrorBody{Error: askd.ErrorMessage(err), Code: code}
	var e *askd.Error
	if errors.As(err, &e) {
		body.Ask = e.Ask
	}
	if code == askd.EUNAUTHORIZED {
		w.Header().Set("WWW-Authenticate", `Bearer realm="askd"`)
	}
	retryAfter(w, err)
	writeJSON(w, statusOf(code), body)
}

// decode reads a strict JSON body of at most askd.MaxBodyBytes into v.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, askd.MaxBodyBytes))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return askd.Errorf(askd.EINVALID, "body: larger than %d bytes (1 MiB)", askd.MaxBodyBytes)
		}
		return askd.Errorf(askd.EINVALID, "body: %v", err)
	}
	return askd.Decode(data, v)
}

// decodeOptional is decode for bodies that may be empty.
func decodeOptional(w http.ResponseWriter, r *http.Request, v any) error {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, askd.MaxBodyBytes))
	if err != nil {
		return askd.Errorf(askd.EINVALID, "body: larger than %d bytes (1 MiB)", askd.MaxBodyBytes)
	}
	if len(data) == 0 {
		return nil
	}
	return askd.Decode(data, v)
}

var _ = slog.Default
