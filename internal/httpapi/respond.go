package httpapi

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/response"
)

// ErrorBody is the JSON body of every error response.
type ErrorBody struct {
	Error string    `json:"error"`
	Code  string    `json:"code"`
	Ask   *askd.Ask `json:"ask,omitempty"` // the current state, on a conflict
}

// writeJSON writes v as the response's JSON body, with its length: a
// response of known length goes out whole before the request's access line
// is written (logged), not after it.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// writeJSONCompressed is writeJSON, gzip-compressed when the client accepts
// it and the body is large enough to gain: the inbox's first load reads the
// whole list, whose JSON compresses about 4:1.
func writeJSONCompressed(w http.ResponseWriter, r *http.Request, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil || buf.Len() < 1024 || !response.AcceptsGzip(r) {
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
	if code == askd.EINTERNAL || askd.FaultMessage(code) != "" {
		// A storage fault's message names its cause; the driver's error,
		// for the operator, is in err.
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "code", code, "err", err)
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
	if code == askd.EBUSY {
		w.Header().Set("Retry-After", "1") // a lock held past busy_timeout: soon over, most likely
	}
	var bb beforeBody
	if errors.As(err, &bb) && r.ContentLength != 0 {
		closeUnread(w)
	}
	writeJSON(w, response.Status(code), body)
}

// beforeBody marks an error that refuses a request before its body is read:
// no token, a wrong one, a throttled address, the wrong role. Such a request
// gets its answer at once and its connection is closed, rather than having
// its body drained first (net/http reads up to 256 KiB of an unread body
// before answering, to keep the connection): an unauthenticated client
// sending a body slowly holds nothing.
type beforeBody struct{ error }

func (e beforeBody) Unwrap() error { return e.error }

// refuseUnread marks *err, if any, as beforeBody.
func refuseUnread(err *error) {
	if *err != nil {
		*err = beforeBody{*err}
	}
}

// closeUnread makes the response close its connection without reading the
// request's body: Connection: close stops net/http draining it before the
// response, and a read deadline already passed stops it doing so after.
func closeUnread(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

// decode reads a strict JSON body of at most askd.MaxBodyBytes into v.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	data, err := readBody(w, r)
	if err != nil {
		return err
	}
	return askd.Decode(data, v)
}

// decodeOptional is decode for bodies that may be empty.
func decodeOptional(w http.ResponseWriter, r *http.Request, v any) error {
	data, err := readBody(w, r)
	if err != nil || len(data) == 0 {
		return err
	}
	return askd.Decode(data, v)
}

// readBody reads a body of at most askd.MaxBodyBytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, askd.MaxBodyBytes))
	var mb *http.MaxBytesError
	switch {
	case err == nil:
		return data, nil
	case errors.As(err, &mb):
		return nil, askd.Errorf(askd.EINVALID, "body: larger than %d bytes (1 MiB)", askd.MaxBodyBytes)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, askd.Errorf(askd.EINVALID, "body: not received in time (askd serve --body-timeout)")
	}
	return nil, askd.Errorf(askd.EINVALID, "body: %v", err)
}
