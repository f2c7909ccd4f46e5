package askd_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/askd-dev/askd"
)

func TestErrorHelpers(t *testing.T) {
	invalid := askd.Errorf(askd.EINVALID, "title: %d characters, at most %d", 201, 200)
	tests := []struct {
		name    string
		err     error
		code    string
		message string
	}{
		{name: "nil", err: nil, code: "", message: ""},
		{name: "an *Error", err: invalid, code: askd.EINVALID, message: "title: 201 characters, at most 200"},
		{name: "a wrapped *Error", err: fmt.Errorf("create ask: %w", invalid), code: askd.EINVALID, message: "title: 201 characters, at most 200"},
		{name: "twice wrapped", err: fmt.Errorf("a: %w", fmt.Errorf("b: %w", askd.Errorf(askd.ENOTFOUND, "ask %d not found", 7))),
			code: askd.ENOTFOUND, message: "ask 7 not found"},
		{name: "joined, first *Error wins", err: errors.Join(errors.New("disk"), askd.Errorf(askd.ECONFLICT, "ask 3 is answered")),
			code: askd.ECONFLICT, message: "ask 3 is answered"},
		{name: "another error", err: errors.New("database is locked"), code: askd.EINTERNAL, message: "internal error"},
		{name: "a wrapped other error", err: fmt.Errorf("store: %w", errors.New("secret detail")), code: askd.EINTERNAL, message: "internal error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := askd.ErrorCode(tt.err); got != tt.code {
				t.Errorf("ErrorCode = %q, want %q", got, tt.code)
			}
			if got := askd.ErrorMessage(tt.err); got != tt.message {
				t.Errorf("ErrorMessage = %q, want %q", got, tt.message)
			}
		})
	}
	if invalid.Error() != invalid.Message {
		t.Errorf("Error() = %q, want the message %q", invalid.Error(), invalid.Message)
	}
}
