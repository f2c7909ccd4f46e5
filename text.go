package askd

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// textForm is what a text field may hold.
type textForm int

const (
	multiLine  textForm = iota // line breaks (\n, or \r\n) and tabs; no other control characters
	oneLine                    // no control characters at all, nor U+2028/U+2029
	identifier                 // oneLine, and nothing invisible: no bidi controls, zero-width or format characters
)

// badRune returns the first character s may not hold in form, and what kind
// of character it is; "" when there is none. s is valid UTF-8.
func badRune(s string, form textForm) (rune, string) {
	for i, r := range s {
		if r >= 0x20 && r < 0x7f {
			continue // printable ASCII, most of any text
		}
		if r == '\r' && form == multiLine && strings.HasPrefix(s[i+1:], "\n") {
			// Only as half of a CRLF line break: a lone carriage return
			// rewrites the line on a terminal.
			continue
		}
		if what := kindOf(r, form); what != "" {
			return r, what
		}
	}
	return 0, ""
}

// kindOf says what kind of character r is when form may not hold it, ""
// when it may (a carriage return is never allowed here; see badRune).
func kindOf(r rune, form textForm) string {
	switch {
	case r == '\n' || r == '\t':
		if form == multiLine {
			return ""
		}
		return "control character"
	case r < 0x20 || r >= 0x7f && r <= 0x9f:
		// C0, DEL, C1; NUL among them, which PostgreSQL cannot store in
		// text: refused on every store alike.
		return "control character"
	case form == multiLine:
		return ""
	case r == 0x2028 || r == 0x2029:
		return "line separator"
	case form == oneLine:
		return ""
	}
	return invisible(r)
}

// invisible says what kind of invisible character r is, "" if it is none:
// bidi controls, which reorder what is shown; zero-width characters; and the
// rest of Unicode's format characters and default-ignorables (soft hyphen,
// tags, fillers, variation selectors), which show as nothing and so make two
// different strings look alike. The emoji and text presentation selectors
// (U+FE0E, U+FE0F) change what is shown and stay allowed.
func invisible(r rune) string {
	switch {
	case r < 0xa0:
		return ""
	case r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
		return "bidi control"
	case r >= 0x200b && r <= 0x200d || r == 0x2060 || r == 0xfeff:
		return "zero-width"
	case r == 0xfe0e || r == 0xfe0f:
		return ""
	case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r),
		unicode.Is(unicode.Variation_Selector, r):
		return "invisible"
	}
	return ""
}

// Printable returns s with every character that could act on a terminal or
// hide from a reader written as an escape: control characters (C0 with line
// breaks and tabs, DEL, C1) as \x1b, \n, \u009b; U+2028/U+2029, bidi
// controls, zero-width and other invisible characters as \u202e or
// \U000e0041; bytes that are not UTF-8 as \xff. The rest, backslashes
// included, is left as it is, so ordinary text reads unchanged. It is for
// showing agent and person text on a terminal, whatever the database holds.
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || Unprintable(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case !Unprintable(r):
			b.WriteString(s[i : i+n])
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

// Unprintable reports whether Printable escapes r: whether r is one an
// identifier may not hold (a control character, a line or paragraph
// separator, a bidi control, zero-width or otherwise invisible).
func Unprintable(r rune) bool {
	if r >= 0x20 && r < 0x7f {
		return false
	}
	return kindOf(r, identifier) != ""
}
