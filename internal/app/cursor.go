package app

import (
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/askd-dev/askd"
)

// A cursor says where the next page of a list starts: the key of the last
// item of the page before (askd.UrgencyKey, SettledKey, SessionKey), as
// unpadded base64url of a JSON array whose first element names the list:
//
//	["pending", <deadline µs since the epoch, or null>, <id>]
//	["history", <settled_at µs since the epoch>, <id>]
//	["sessions", <agent>, <name>]
//
// Callers treat it as opaque. It is not signed: a made-up one is only a
// place in a list a person may read whole anyway. Times are microseconds,
// the stores' precision, so a key comes back exactly as stored.

// Cursor list names.
const (
	cursorPending  = "pending"
	cursorHistory  = "history"
	cursorSessions = "sessions"
	cursorAudit    = "audit"
)

// errCursor is the refusal of a cursor that does not decode as one of the
// list's.
func errCursor() error {
	return askd.Errorf(askd.EMISMATCH, "cursor: not a cursor this server gave")
}

// encodeCursor is the cursor of list holding parts.
func encodeCursor(list string, parts ...any) string {
	b, err := json.Marshal(append([]any{list}, parts...))
	if err != nil {
		panic("encode cursor: " + err.Error()) // strings and integers always encode
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor decodes cursor c of list into parts (pointers), each part
// exactly one element of the array, null only into a **int64; errCursor
// when c is anything else.
func decodeCursor(c, list string, parts ...any) error {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return errCursor()
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(b, &elems); err != nil || len(elems) != len(parts)+1 {
		return errCursor()
	}
	var name string
	if err := json.Unmarshal(elems[0], &name); err != nil || name != list {
		return errCursor()
	}
	for i, p := range parts {
		// Unmarshal leaves a value alone for null: null stands only for a
		// missing deadline.
		if _, nullable := p.(**int64); !nullable && string(elems[i+1]) == "null" {
			return errCursor()
		}
		if err := json.Unmarshal(elems[i+1], p); err != nil {
			return errCursor()
		}
	}
	return nil
}

// pendingCursor is the cursor of the page after the ask with key k.
func pendingCursor(k askd.UrgencyKey) string {
	var deadline *int64
	if k.Deadline != nil {
		us := k.Deadline.UnixMicro()
		deadline = &us
	}
	return encodeCursor(cursorPending, deadline, k.ID)
}

// pendingAfter is the key cursor c starts after; nil for "", the first page.
func pendingAfter(c string) (*askd.UrgencyKey, error) {
	if c == "" {
		return nil, nil
	}
	var deadline *int64
	var k askd.UrgencyKey
	if err := decodeCursor(c, cursorPending, &deadline, &k.ID); err != nil {
		return nil, err
	}
	if k.ID <= 0 {
		return nil, errCursor()
	}
	if deadline != nil {
		t := time.UnixMicro(*deadline).UTC()
		k.Deadline = &t
	}
	return &k, nil
}

// historyCursor is the cursor of the page after the ask with key k.
func historyCursor(k askd.SettledKey) string {
	return encodeCursor(cursorHistory, k.SettledAt.UnixMicro(), k.ID)
}

// historyAfter is the key cursor c starts after; nil for "", the first page.
func historyAfter(c string) (*askd.SettledKey, error) {
	if c == "" {
		return nil, nil
	}
	var us int64
	var k askd.SettledKey
	if err := decodeCursor(c, cursorHistory, &us, &k.ID); err != nil {
		return nil, err
	}
	if k.ID <= 0 {
		return nil, errCursor()
	}
	k.SettledAt = time.UnixMicro(us).UTC()
	return &k, nil
}

// sessionsCursor is the cursor of the page after the session with key k.
func sessionsCursor(k askd.SessionKey) string {
	return encodeCursor(cursorSessions, k.Agent, k.Name)
}

// sessionsAfter is the key cursor c starts after; nil for "", the first page.
func sessionsAfter(c string) (*askd.SessionKey, error) {
	if c == "" {
		return nil, nil
	}
	var k askd.SessionKey
	if err := decodeCursor(c, cursorSessions, &k.Agent, &k.Name); err != nil {
		return nil, err
	}
	return &k, nil
}
