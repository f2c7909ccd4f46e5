package app

import (
	"encoding/base64"
	"reflect"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// Cursors give back exactly the key they were made from, and anything else
// is refused as EMISMATCH.
func TestCursors(t *testing.T) {
	d := time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)
	t.Run("round trips", func(t *testing.T) {
		for _, k := range []askd.UrgencyKey{{Deadline: &d, ID: 7}, {ID: 1 << 53}} {
			got, err := pendingAfter(pendingCursor(k))
			if err != nil || !reflect.DeepEqual(*got, k) {
				t.Errorf("pending key %+v came back as %+v, %v", k, got, err)
			}
		}
		hk := askd.SettledKey{SettledAt: d, ID: 9}
		if got, err := historyAfter(historyCursor(hk)); err != nil || *got != hk {
			t.Errorf("history key %+v came back as %+v, %v", hk, got, err)
		}
		sk := askd.SessionKey{Agent: "agent-1", Name: "ci/job 42 \"x\" 数据库"}
		if got, err := sessionsAfter(sessionsCursor(sk)); err != nil || *got != sk {
			t.Errorf("session key %+v came back as %+v, %v", sk, got, err)
		}
		for _, f := range []func(string) error{
			func(c string) error { k, err := pendingAfter(c); return nilKey(k, err) },
			func(c string) error { k, err := historyAfter(c); return nilKey(k, err) },
			func(c string) error { k, err := sessionsAfter(c); return nilKey(k, err) },
		} {
			if err := f(""); err != nil {
				t.Errorf("the first page's empty cursor: %v", err)
			}
		}
	})
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, tt := range []struct {
		name, cursor string
	}{
		{"not base64", "%%%"},
		{"padded base64", base64.URLEncoding.EncodeToString([]byte(`["pending",null,12]`))},
		{"not JSON", enc("pending,1")},
		{"not a list", enc(`{"pending":1}`)},
		{"another list's", sessionsCursor(askd.SessionKey{Agent: "a", Name: "b"})},
		{"too few parts", enc(`["pending",1]`)},
		{"too many parts", enc(`["pending",null,1,2]`)},
		{"id not a number", enc(`["pending",null,"1"]`)},
		{"id not whole", enc(`["pending",null,1.5]`)},
		{"id null", enc(`["pending",5,null]`)},
		{"id zero", enc(`["pending",5,0]`)},
		{"deadline not a number", enc(`["pending","soon",1]`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k, err := pendingAfter(tt.cursor)
			if askd.ErrorCode(err) != askd.EMISMATCH || askd.ErrorMessage(err) != "cursor: not a cursor this server gave" {
				t.Errorf("pendingAfter(%q) = %+v, %v; want the refusal", tt.cursor, k, err)
			}
		})
	}
	if k, err := sessionsAfter(enc(`["sessions",null,"b"]`)); askd.ErrorCode(err) != askd.EMISMATCH {
		t.Errorf("a sessions cursor with a null agent = %+v, %v; want the refusal", k, err)
	}
	if k, err := historyAfter(enc(`["history",null,3]`)); askd.ErrorCode(err) != askd.EMISMATCH {
		t.Errorf("a history cursor with a null time = %+v, %v; want the refusal", k, err)
	}
}

// nilKey is err, or an error when a first page's key is not nil.
func nilKey[K any](k *K, err error) error {
	if err == nil && k != nil {
		return askd.Errorf(askd.EINTERNAL, "key %+v for the first page", *k)
	}
	return err
}
