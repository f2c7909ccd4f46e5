package tell

import (
	"encoding/base64"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/askd-dev/askd"
)

// Agent text on notification channels (docs/security.md, "Agent text on
// notification channels"). A notification carries words an agent chose —
// titles, questions, details, labels, session names — to a program that
// parses them before a person sees them: ntfy decodes RFC 2047 encoded words
// in every header (even inside quotes, even in what it made of a JSON
// publish) and only then reads its action syntax; Slack reads mrkdwn; the
// ntfy app, Slack and mail clients turn whatever reads as a URL into a
// link. So every piece of agent text leaves through its channel's one
// encoder, which makes it inert for that channel's parser:
//
//   - ntfy: ntfyHeader for every header that carries it (Title, Actions),
//     shown for the message;
//   - Slack: slackShown (shown, then escaped for mrkdwn, in text objects
//     marked verbatim) for the message, buttonLabel for a button;
//   - Web Push: shown and shownLine for the payload's body and title,
//     buttonLabel for an action's title (the service worker shows them as
//     text and takes an action's target only from askd's link);
//   - webhooks: encoding/json, the agent's words as they are (a program
//     reads them; structure cannot change).
//
// Links a person may tap are askd's own (the inbox, answer links) and never
// come from agent text.

// shownLine is agent text for a one-line place a person reads (a title): as
// shown, on one line.
func shownLine(s string) string { return defang(oneLineText(s)) }

// shown is agent text for a place a person reads that may hold several
// lines (a message's body): line breaks and tabs kept, every other control
// character and every invisible one (bidi controls, zero-width) dropped,
// and what reads as a URL defanged.
func shown(s string) string { return defang(multiLineText(s)) }

// buttonLabel is agent text for a button: one line, nothing invisible. A
// button's label is never a link, so it is not defanged: the person sees
// the answer they give.
func buttonLabel(s string) string { return strings.TrimSpace(oneLineText(s)) }

// oneLineText is s with line breaks, tabs and line separators as spaces and
// every other character askd.Unprintable names (control, bidi, zero-width,
// invisible) dropped; bytes that are not UTF-8 dropped.
func oneLineText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t' || r == 0x2028 || r == 0x2029:
			return ' '
		case askd.Unprintable(r):
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
}

// multiLineText is s with line breaks (a CRLF as one \n) and tabs kept and
// every other character askd.Unprintable names dropped.
func multiLineText(s string) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, ""), "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == 0x2028 || r == 0x2029:
			return '\n'
		case askd.Unprintable(r):
			return -1
		}
		return r
	}, s)
}

// ipv4 is four dotted numbers: what linkifiers take as an address.
var ipv4 = regexp.MustCompile(`[0-9]{1,3}(?:\.[0-9]{1,3}){3}`)

// defang rewrites what a linkifier would read as a URL so that it reads as
// text and opens nothing: "://" becomes "[:]//", and the dots of a host
// name become "[.]" — a dot after a visible character and before a label
// that starts with a letter and has two characters or more (the shape of
// every top-level domain, which Android's Linkify, used by the ntfy app,
// links even without a scheme), and the dots of four dotted numbers. So
// "https://evil.example/x" reads "https[:]//evil[.]example/x", and
// "see evil.com" reads "see evil[.]com"; "e.g.", "3.14" and "v1.2.3" stay
// as they are.
func defang(s string) string {
	if !strings.Contains(s, ".") && !strings.Contains(s, "://") {
		return s
	}
	s = strings.ReplaceAll(s, "://", "[:]//")
	s = ipv4.ReplaceAllStringFunc(s, func(m string) string { return strings.ReplaceAll(m, ".", "[.]") })
	var b strings.Builder
	b.Grow(len(s) + 16)
	prev := ' '
	for i, r := range s {
		if r == '.' && hostDot(prev, s[i+1:]) {
			b.WriteString("[.]")
		} else {
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}

// hostDot reports whether a dot after prev and before rest may join a host
// name's labels with a top-level-domain-like label after it.
func hostDot(prev rune, rest string) bool {
	if unicode.IsSpace(prev) || prev == '.' {
		return false
	}
	first, n := utf8.DecodeRuneInString(rest)
	if !unicode.IsLetter(first) {
		return false
	}
	second, _ := utf8.DecodeRuneInString(rest[n:])
	return unicode.IsLetter(second) || unicode.IsDigit(second) || second == '-'
}

// ntfyHeader is the value of an ntfy header holding text: the text, all of
// it, as RFC 2047 encoded words (UTF-8, base64). ntfy decodes encoded words
// in every header it reads, wherever they stand, before it reads anything
// else in it; text sent as it is would be decoded too, so an agent's
// "=?utf-8?q?...?=" would become whatever it encodes (quotes, commas, a
// second action, a line break). Encoded, the text is decoded once, back to
// exactly itself. Words hold at most 45 bytes (75 characters, RFC 2047's
// limit), cut between characters; the space between two words is dropped
// by the decoder.
func ntfyHeader(s string) string {
	const prefix, suffix, chunk = "=?utf-8?b?", "?=", 45
	var b strings.Builder
	for s != "" {
		n := min(len(s), chunk)
		for n < len(s) && n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(prefix + base64.StdEncoding.EncodeToString([]byte(s[:n])) + suffix)
		s = s[n:]
	}
	return b.String()
}
