package askd

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of SPEC §7 and the choices made where it is silent (docs/limits in the
// README). Characters are Unicode code points; sizes are bytes.
const (
	MaxBodyBytes       = 1 << 20 // request bodies
	MaxQuestions       = 4
	MinOptions         = 2
	MaxOptions         = 4 // per question
	MaxDecisionOptions = 6
	MaxQuestionChars   = 1000
	MaxHeaderChars     = 12
	MaxLabelChars      = 100
	MaxDescChars       = 500
	MaxPreviewBytes    = 64 << 10
	MaxTitleChars      = 200
	MaxDetailsBytes    = 16 << 10  // attention asks
	MaxApprovalDetails = 64 << 10  // approvals carry diffs and commands: more room
	MaxPayloadBytes    = 256 << 10 // approval payloads and permission inputs
	MaxGraceSeconds    = 120
	MaxAnswerChars     = 4000 // own words, replies, comments
	MaxNameChars       = 128  // session and token names
	MaxToolNameChars   = 200
	MaxToolUseIDChars  = 200
)

// problems collects the rules an input breaks, each as "path: rule". Past
// maxProblems it only counts them: a 1 MiB body of repeated bad values once
// made a message of 12 MB.
type problems struct {
	list []string
	more int
}

const maxProblems = 10

func (p *problems) add(path, format string, args ...any) {
	if len(p.list) == maxProblems {
		p.more++
		return
	}
	p.list = append(p.list, path+": "+fmt.Sprintf(format, args...))
}

// err returns nil, or one EINVALID *Error listing the problems (the first
// maxProblems, then how many more there are).
func (p problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	msg := strings.Join(p.list, "; ")
	if p.more > 0 {
		msg += "; and " + plural(p.more, "more problem")
	}
	return &Error{Code: EINVALID, Message: msg}
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// text checks a required (min 1) or optional (min 0) text field of several
// lines (question text, descriptions, own words): its length in characters,
// and no control character but line breaks and tabs.
func (p *problems) text(path, s string, min, max int) {
	p.check(path, s, min, max, multiLine, "")
}

// line checks a one-line text field (titles, headers): as text, and no line
// breaks or tabs either. noun names such fields in the message ("titles").
func (p *problems) line(path, s string, min, max int, noun string) {
	p.check(path, s, min, max, oneLine, noun)
}

// ident checks a one-line field that is also a key, which two strings that
// look the same must not both be (labels, names, tool names): as line, and no
// bidi controls, zero-width or other invisible characters.
func (p *problems) ident(path, s string, min, max int, noun string) {
	p.check(path, s, min, max, identifier, noun)
}

func (p *problems) check(path, s string, min, max int, form textForm, noun string) {
	if !utf8.ValidString(s) {
		p.add(path, "not valid UTF-8")
		return
	}
	if r, what := badRune(s, form); what != "" {
		p.add(path, "%s", refusal(r, what, form, noun))
		return
	}
	n := utf8.RuneCountInString(s)
	switch {
	case n == 0 && min > 0:
		p.add(path, "required, 1 to %d characters", max)
	case strings.TrimSpace(s) == "" && min > 0:
		p.add(path, "blank, must have visible text")
	case n > max:
		p.add(path, "%s, at most %d", plural(n, "character"), max)
	}
}

// refusal is the rule a character breaks: "contains U+200B (zero-width), not
// allowed in labels".
func refusal(r rune, what string, form textForm, noun string) string {
	if form == multiLine {
		return fmt.Sprintf("contains U+%04X (%s); text may hold line breaks and tabs, no other control characters", r, what)
	}
	return fmt.Sprintf("contains U+%04X (%s), not allowed in %s", r, what, noun)
}

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
		switch {
		case r >= 0x20 && r < 0x7f:
			continue // printable ASCII, most of any text
		case r == '\n' || r == '\t':
			if form == multiLine {
				continue
			}
			return r, "control character"
		case r == '\r':
			// Only as half of a CRLF line break: a lone carriage return
			// rewrites the line on a terminal.
			if form == multiLine && strings.HasPrefix(s[i+1:], "\n") {
				continue
			}
			return r, "control character"
		case r < 0x20 || r >= 0x7f && r <= 0x9f:
			// C0, DEL, C1; NUL among them, which PostgreSQL cannot store
			// in text: refused on every store alike.
			return r, "control character"
		case form == multiLine:
			continue
		case r == 0x2028 || r == 0x2029:
			return r, "line separator"
		case form == oneLine:
			continue
		}
		if what := invisible(r); what != "" {
			return r, what
		}
	}
	return 0, ""
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

// blob checks a long optional text field of several lines (details,
// previews): its size in bytes, UTF-8, no control character but line breaks
// and tabs.
func (p *problems) blob(path, s string, max int) {
	switch {
	case len(s) > max:
		p.size(path, len(s), max)
	case !utf8.ValidString(s):
		p.add(path, "not valid UTF-8")
	default:
		if r, what := badRune(s, multiLine); what != "" {
			p.add(path, "%s", refusal(r, what, multiLine, ""))
		}
	}
}

// size checks a field's length in bytes.
func (p *problems) size(path string, n, max int) {
	if n > max {
		p.add(path, "%d bytes, at most %d (%d KiB)", n, max, max>>10)
	}
}

// count checks the number of items in a list.
func (p *problems) count(path string, n, min, max int) {
	switch {
	case n < min && n == 0:
		p.add(path, "required, %d to %d items", min, max)
	case n < min:
		p.add(path, "%s, at least %d", plural(n, "item"), min)
	case n > max:
		p.add(path, "%s, at most %d", plural(n, "item"), max)
	}
}

// ValidName checks a session or token name (a token's name is its agents'
// default session): 1 to 128 characters; no control, bidi, zero-width or other
// invisible characters, so that two names that look the same are the same;
// and not starting with "-", so that no command a session's answer is told
// through reads it as an option (SPEC §5). what names the field in the
// message.
func ValidName(what, name string) error {
	var p problems
	p.ident(what, name, 1, MaxNameChars, "names")
	if strings.HasPrefix(name, "-") {
		p.add(what, `starts with "-", which a command would read as an option`)
	}
	return p.err()
}
