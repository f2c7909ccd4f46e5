package askd

import (
	"errors"
	"fmt"
)

// Error codes. Each maps to one HTTP status and one MCP outcome, in one table
// each (internal/response.Status for both HTTP front ends, mcpserver); nothing
// else inspects error text.
const (
	EINVALID      = "invalid"      // the input breaks a rule; the message names the field
	ENOTFOUND     = "not_found"    // no such ask (or not the caller's)
	ECONFLICT     = "conflict"     // the ask is no longer pending
	EFORBIDDEN    = "forbidden"    // the caller's role may not do this, or a gate refused
	EUNAUTHORIZED = "unauthorized" // no or unknown token
	ELIMIT        = "limit"        // a count limit (pending asks per session) is reached
	EUNAVAILABLE  = "unavailable"  // shutting down, or the database is unreachable
	EINTERNAL     = "internal"
)

// Error is an error a caller can act on: Code says which kind, Message says what
// went wrong in words meant for the caller. Ask, when set, is the current state
// of the ask a conflict was about.
type Error struct {
	Code    string
	Message string
	Ask     *Ask
}

func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error with the code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err's first *Error, EINTERNAL for any other
// error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the caller-facing message of err: the *Error's message,
// or a generic text for internal errors, whose details stay in the server log.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// EMISMATCH is input that does not fit what it is for (HTTP 422): an answer
// that does not fit its ask, or a page that cannot be given (a cursor this
// server did not give, a page size out of bounds). The message names the
// field.
const EMISMATCH = "mismatch"

// Storage fault codes: the database cannot do what was asked, for a cause in
// the machine rather than in the request. Each store classifies its driver's
// errors into them once, at its edge, and each carries a message naming the
// cause (FaultMessage), so that a person and an agent can tell a full disk
// from a bug. Their HTTP statuses are in internal/response.Status.
const (
	EFULL     = "full"      // the disk holding the database is full
	EREADONLY = "read_only" // the database file (or its directory) cannot be written
	ECORRUPT  = "corrupt"   // the database file is damaged
	EBUSY     = "busy"      // the database stayed locked past the store's wait
)

// Fault returns the *Error of a storage fault code (EFULL, EREADONLY,
// ECORRUPT, EBUSY) with the message naming its cause.
func Fault(code string) *Error {
	return &Error{Code: code, Message: FaultMessage(code)}
}

// FaultMessage is the caller-facing message of a storage fault code, "" for
// any other code.
func FaultMessage(code string) string {
	switch code {
	case EFULL:
		return "the database disk is full"
	case EREADONLY:
		return "the database file is read-only"
	case ECORRUPT:
		return "the database file is damaged (corrupt)"
	case EBUSY:
		return "the database is busy"
	}
	return ""
}

// IsFault reports whether code says the database, not the request, is at
// fault: a storage fault code or EUNAVAILABLE.
func IsFault(code string) bool {
	return code == EUNAVAILABLE || FaultMessage(code) != ""
}
