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

// text checks a required (min 1) or optional (min 0) text field's length in characters.
func (p *problems) text(path, s string, min, max int) {
	n := utf8.RuneCountInString(s)
	switch {
	case !utf8.ValidString(s):
		p.add(path, "not valid UTF-8")
	case strings.ContainsRune(s, 0):
		// PostgreSQL cannot store NUL in text; refuse it on every store alike.
		p.add(path, "contains a NUL character")
	case n == 0 && min > 0:
		p.add(path, "required, 1 to %d characters", max)
	case strings.TrimSpace(s) == "" && min > 0:
		p.add(path, "blank, must have visible text")
	case n > max:
		p.add(path, "%s, at most %d", plural(n, "character"), max)
	}
}

// blob checks a long optional text field: its size in bytes, UTF-8, no NUL.
func (p *problems) blob(path, s string, max int) {
	switch {
	case len(s) > max:
		p.size(path, len(s), max)
	case !utf8.ValidString(s):
		p.add(path, "not valid UTF-8")
	case strings.ContainsRune(s, 0):
		p.add(path, "contains a NUL character")
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

// ValidName checks a session or token name: 1 to 128 characters, no control
// characters. what names the field in the message.
func ValidName(what, name string) error {
	var p problems
	if strings.ContainsRune(name, 0) {
		// Named below as a control character; no need to say NUL twice.
		name = strings.ReplaceAll(name, "\x00", "\x01")
	}
	p.text(what, name, 1, MaxNameChars)
	for _, r := range name {
		if unicode.IsControl(r) { // C0, DEL and C1 (U+0080–U+009F)
			p.add(what, "control characters are not allowed")
			break
		}
	}
	return p.err()
}
