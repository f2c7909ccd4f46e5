package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/askd-dev/askd"
)

// translate gives the caller's message for the code and keeps the driver's
// error in the chain; errors without a code stay internal. The constraint
// codes come from real violations, in the store suite.
func TestTranslate(t *testing.T) {
	for _, tt := range []struct {
		name    string
		err     error
		code    string
		message string
	}{
		{"no rows, with a message", sql.ErrNoRows, askd.ENOTFOUND, "ask 1 not found"},
		{"an askd error keeps its code", askd.Errorf(askd.ELIMIT, "too many"), askd.ELIMIT, "too many"},
		{"a cancelled context", context.Canceled, askd.EINTERNAL, "internal error"},
		{"anything else", errors.New("disk I/O error"), askd.EINTERNAL, "internal error"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := translate(fmt.Errorf("scan: %w", tt.err), "read ask 1", says{notFound: "ask 1 not found"})
			if askd.ErrorCode(err) != tt.code || askd.ErrorMessage(err) != tt.message {
				t.Errorf("translate(%v) = %v (%s, %q), want %s, %q", tt.err, err, askd.ErrorCode(err), askd.ErrorMessage(err), tt.code, tt.message)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("translate(%v) = %v: the error is not in the chain", tt.err, err)
			}
		})
	}
	if err := translate(nil, "x", says{}); err != nil {
		t.Errorf("translate(nil) = %v", err)
	}
}
