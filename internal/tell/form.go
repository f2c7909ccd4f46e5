package tell

import (
	"cmp"
	"net/url"
	"strings"

	"github.com/askd-dev/askd"
)

// Notifications of form asks (SPEC §9): an MCP server's question, whose
// message may run to several lines and hold URLs, and which may be a link
// to open (url mode). A notification leads with who asks and the message's
// first line (formLead); a url-mode form says which host its link opens, as
// text, and never carries the link; a form of one single-select field lists
// its choices, which are its buttons (askd.Ask.OneTapAnswers); any other
// form says what it asks for and is filled in in the inbox. All of it is
// agent text and leaves through the channels' encoders (agenttext.go). A
// message of several lines shows its first line only, so the notification
// counts as cut: no button answers what it did not show.

// firstLine is a message's first line, as written, and whether the message
// has more (a line break of any kind: \n, \r, U+2028, U+2029).
func firstLine(message string) (line string, more bool) {
	message = strings.TrimSpace(message)
	i := strings.IndexAny(message, "\n\r\u2028\u2029")
	if i < 0 {
		return message, false
	}
	return strings.TrimSpace(message[:i]), true
}

// formLead is the line a notification of form ask a leads with, as the
// agent wrote it: "<source> asks: <the message's first line>", the line
// alone when a names no source, "…" after it when the message has more;
// more says it has.
func formLead(a *askd.Ask) (lead string, more bool) {
	line, more := firstLine(a.Title)
	if more {
		line += " …"
	}
	if a.Source != "" {
		line = a.Source + " asks: " + line
	}
	return line, more
}

// formText is what a notification shows of form ask a, before shown():
// its lead, then what it asks for. whole is false when the message has
// lines it leaves out.
func formText(a *askd.Ask) (text string, whole bool) {
	lead, more := formLead(a)
	var b strings.Builder
	b.WriteString(lead)
	if a.URL != "" {
		b.WriteString("\nIt opens a link")
		if u, err := url.Parse(a.URL); err == nil && u.Hostname() != "" {
			b.WriteString(": " + u.Hostname())
		}
		return b.String(), !more
	}
	s, err := askd.ParseFormSchema(a.Schema)
	if err != nil {
		return b.String(), false
	}
	if len(s.Fields) == 1 && s.Fields[0].Type == askd.FieldEnum {
		f := s.Fields[0]
		// One line each, as a decision's options are (a form's titles may
		// hold line breaks): a choice cannot pass for another line.
		b.WriteString("\n" + oneLineText(cmp.Or(f.Title, f.Name)))
		if f.Description != "" {
			b.WriteString(": " + oneLineText(f.Description))
		}
		for _, o := range f.Options {
			b.WriteString("\n• " + oneLineText(cmp.Or(o.Title, o.Const)))
			if f.Default == o.Const {
				b.WriteString(" (default)")
			}
		}
		return b.String(), !more
	}
	names := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		names[i] = oneLineText(cmp.Or(f.Title, f.Name))
	}
	b.WriteString("\nA form to fill in, in the inbox: " + strings.Join(names, ", "))
	return b.String(), !more
}

// subject is what a notification's one-line places (Slack's fallback text)
// name ask a by, as written: a form's lead, else its title or first
// question.
func subject(a *askd.Ask) string {
	if a.Kind == askd.KindForm {
		lead, _ := formLead(a)
		return lead
	}
	return a.Summary()
}
