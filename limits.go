package askd

import (
	"fmt"
	"strings"
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
	MaxGateKeyChars    = 200      // a keyed approval's key (SPEC §12)
	MaxFormTitleChars  = 1000     // a form's message: several lines allowed (SPEC §9)
	MaxSourceChars     = 100      // the MCP server's name
	MaxFormURLBytes    = 2048     // url mode
	MaxFormSchemaBytes = 64 << 10 // form mode
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

// merge adds q's problems to p's.
func (p *problems) merge(q problems) {
	for _, m := range q.list {
		if len(p.list) == maxProblems {
			p.more++
			continue
		}
		p.list = append(p.list, m)
	}
	p.more += q.more
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
