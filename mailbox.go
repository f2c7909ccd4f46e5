package askd

import (
	"strings"
)

// MaxMailboxBytes bounds an email address (RFC 5321's longest path, less
// its angle brackets).
const MaxMailboxBytes = 254

// CheckMailbox checks that s is one mailbox as askd takes it (SPEC §16):
// local@domain and nothing else — no display name, no second address, no
// comment, no quoting, no space or line break — so that an address can go
// into a To header and an SMTP RCPT command as it is, and name one person.
// The local part is a dot-atom of RFC 5322's atext (ASCII letters, digits
// and !#$%&'*+-/=?^_`{|}~); the domain is two or more labels of ASCII
// letters, digits and hyphens (an internationalised domain in its xn--
// form), or a single label, which only a mail server of one's own network
// knows. Errors are EINVALID naming field.
func CheckMailbox(field, s string) error {
	var p problems
	p.mailbox(field, s)
	return p.err()
}

func (p *problems) mailbox(field, s string) {
	if len(s) > MaxMailboxBytes {
		p.add(field, "%d bytes, at most %d", len(s), MaxMailboxBytes)
		return
	}
	local, domain, ok := strings.Cut(s, "@")
	switch {
	case s == "":
		p.add(field, "required: an email address such as alice@example.com")
	case strings.ContainsAny(s, "\r\n"):
		p.add(field, "may not contain a line break: one address, such as alice@example.com")
	case strings.ContainsAny(s, ",;<>\"() \t"):
		p.add(field, "%q is not one address: only local@domain, with no name, comment or second address", clipValue(s))
	case !ok || strings.Contains(domain, "@"):
		p.add(field, "%q is not one address such as alice@example.com", clipValue(s))
	case !dotAtom(local):
		p.add(field, "%q: the part before @ may hold only letters, digits, dots (not two together, nor first or last) and !#$%%&'*+-/=?^_`{|}~", clipValue(s))
	case !mailDomain(domain):
		p.add(field, "%q: the domain must be host names of letters, digits and hyphens joined by dots (in its xn-- form if it is not ASCII)", clipValue(s))
	}
}

// dotAtom reports whether s is a dot-atom of atext (RFC 5322 §3.2.3).
func dotAtom(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, atom := range strings.Split(s, ".") {
		if atom == "" {
			return false
		}
		for i := 0; i < len(atom); i++ {
			if b := atom[i]; !isAlnum(b) && !strings.ContainsRune("!#$%&'*+-/=?^_`{|}~", rune(b)) {
				return false
			}
		}
	}
	return true
}

// mailDomain reports whether s is a host name: labels of 1 to 63 letters,
// digits and hyphens, neither first nor last a hyphen.
func mailDomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if b := label[i]; !isAlnum(b) && b != '-' {
				return false
			}
		}
	}
	return true
}
