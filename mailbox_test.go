package askd_test

import (
	"strings"
	"testing"

	"github.com/askd-dev/askd"
)

// An address is one mailbox (SPEC §16): what a To header and a RCPT
// command take as they are, naming one person.
func TestCheckMailbox(t *testing.T) {
	for _, ok := range []string{
		"alice@example.com", "a.b+tag@mail.example.co.uk", "o'brien@example.com", "x@xn--bcher-kva.example",
		"ops@localhost", "UPPER@Example.COM", "a!#$%&'*+-/=?^_`{|}~@example.com",
	} {
		if err := askd.CheckMailbox("email", ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"", "alice", "@example.com", "alice@", "alice@@example.com", "a@b@example.com",
		"Alice <alice@example.com>", "alice@example.com, bob@example.com", "alice@example.com;bob@example.com",
		"alice@example.com\r\nBcc: eve@example.com", "alice@example.com\nX: y", "alice @example.com",
		`"alice smith"@example.com`, "alice(comment)@example.com", ".alice@example.com", "al..ice@example.com",
		"alice@-example.com", "alice@example..com", "alice@exa_mple.com", "alicé@example.com", "alice@bücher.example",
		"<alice@example.com>", "alice@example.com>", strings.Repeat("a", 65) + "@example.com",
		"a@" + strings.Repeat("b", 250) + ".com",
	} {
		err := askd.CheckMailbox("email", bad)
		if askd.ErrorCode(err) != askd.EINVALID || !strings.HasPrefix(askd.ErrorMessage(err), "email: ") {
			t.Errorf("%q: %v, want EINVALID naming email", bad, err)
		}
	}
}
