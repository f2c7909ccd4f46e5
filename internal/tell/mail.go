package tell

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html/template"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// Email notifications (SPEC §16; docs/notifications.md, "Email"). One mail
// per notify delivery, through the server's SMTP server (smtp.go), as a
// mail client reads it:
//
//   - Subject: the ask's title on one line (a question's first question, a
//     form's first line), "Re: " before it on a follow-up; agent text, so
//     shown (agenttext.go) and always sent as encoded words when it holds
//     anything but printable ASCII or looks like an encoded word itself, so
//     that it decodes back to exactly itself and never into a header;
//   - a text/plain and a text/html part, both quoted-printable: the ask as
//     shown (defanged: a mail client links no URL or host name in it),
//     escaped for HTML by html/template, then one link per one-tap answer —
//     each the signed answer link of the phone notifications, which opens
//     the confirm page and answers only from its button, so scanners and
//     previews answer nothing — the quorum count where one applies, and the
//     card's link. Every link is askd's; a viewer's mail has none to
//     answer with;
//   - Message-ID per ask and person; a later mail about the same ask (a new
//     revision, its escalation, an approval of a quorum, its settling by
//     someone else: app.NotifyReasonOf) names the first in In-Reply-To and
//     References, so a mail client shows one thread per ask. A retry sends
//     the same Message-ID, which mail clients fold;
//   - List-Unsubscribe with List-Unsubscribe-Post (RFC 8058's one-click)
//     on a person's mail: POSTing it records their choice of no email.

// maxSubject bounds, in characters, the ask's words in a Subject.
const maxSubject = 150

// notifyEmail mails a to the delivery's address.
func (w *Worker) notifyEmail(ctx context.Context, d *askd.Delivery, a *askd.Ask) error {
	m := w.opts.Mail
	if m == nil {
		return &failure{msg: "email: this askd has no SMTP server to send through (askd serve --notify-smtp)", permanent: true}
	}
	to := d.Channel.Email
	if err := askd.CheckMailbox("email", to); err != nil { // checked when set; a store changed by hand is not trusted
		return &failure{msg: askd.ErrorMessage(err), permanent: true}
	}
	reason := app.NotifyReasonOf(d)
	var links []app.MintedLink
	if reason != app.NotifySettledMsg && a.Pending() {
		var err error
		if links, err = w.mint(ctx, a, 0, d.Channel.As); err != nil {
			return err
		}
	}
	unsubscribe := ""
	if d.Channel.As != "" {
		code, err := w.svc.UnsubscribeCode(ctx, d.Channel.As)
		if err != nil && askd.ErrorCode(err) != askd.ENOTFOUND {
			return err
		}
		if err == nil {
			unsubscribe = strings.TrimRight(w.opts.PublicURL, "/") + "/unsubscribe/" + code
		}
	}
	msg, err := w.mailMessage(d, a, reason, links, unsubscribe)
	if err != nil {
		return err
	}
	return w.sendMail(ctx, to, msg)
}

// mailLink is one link of a mail: what it says and where it goes.
type mailLink struct{ Label, URL string }

// mailContent is what a mail says, its agent text already shown.
type mailContent struct {
	Intro       string     // askd's words: why this mail
	Text        string     // the ask as shown (shownText), with its count
	Links       []mailLink // the answer links
	Viewer      bool       // the person may not answer: no links, and a line saying so
	Card        string     // the ask in the inbox
	Unsubscribe string     // the person's unsubscribe link; "" for the fallback address
}

// mailMessage is the whole message of a's mail for delivery d.
func (w *Worker) mailMessage(d *askd.Delivery, a *askd.Ask, reason app.NotifyReason, links []app.MintedLink, unsubscribe string) ([]byte, error) {
	text, _ := shownText(a)
	c := mailContent{Text: text, Card: w.link(a.ID), Unsubscribe: unsubscribe}
	for _, l := range links {
		c.Links = append(c.Links, mailLink{Label: mailLabel(l.Label), URL: w.answerURL(l.Code)})
	}
	if len(a.OneTapAnswers()) > 0 && len(links) == 0 && a.Pending() && reason != app.NotifySettledMsg {
		c.Viewer = true
	}
	c.Intro = mailIntro(a, reason, c.Viewer)
	plain, html, err := mailBodies(c)
	if err != nil {
		return nil, err
	}
	m := w.opts.Mail
	host := w.messageHost()
	recipient := d.Channel.As
	if recipient == "" {
		recipient = "to:" + d.Channel.Email
	}
	first := messageID(a.ID, recipient, "", host)
	followUp := reason != app.NotifyNew || a.Revision > 1
	subject := shownLine(subject(a))
	if utf8.RuneCountInString(subject) > maxSubject {
		subject = string([]rune(subject)[:maxSubject-1]) + "…"
	}
	if strings.TrimSpace(subject) == "" {
		subject = shownLine(headline(a))
	}
	h := []string{
		"From: " + (&mail.Address{Name: "askd", Address: m.From}).String(),
		"To: " + d.Channel.Email,
		"Date: " + w.svc.Config().Now().Format(time.RFC1123Z),
	}
	if followUp {
		subject = "Re: " + subject
		h = append(h, "Message-ID: "+messageID(a.ID, recipient, d.Key, host), "In-Reply-To: "+first, "References: "+first)
	} else {
		h = append(h, "Message-ID: "+first)
	}
	h = append(h, "Subject: "+headerText(subject), "Auto-Submitted: auto-generated")
	if unsubscribe != "" {
		h = append(h, "List-Unsubscribe: <"+unsubscribe+">", "List-Unsubscribe-Post: List-Unsubscribe=One-Click")
	}
	return assemble(h, plain, html)
}

// mailIntro is the mail's first line, askd's words (with the session's
// and people's names, shown); a viewer's does not ask for their approval.
func mailIntro(a *askd.Ask, reason app.NotifyReason, viewer bool) string {
	switch reason {
	case app.NotifyEscalated:
		return shownLine(fmt.Sprintf("Escalated to you: nobody took this %s from %s in time.", a.Kind, a.Session))
	case app.NotifyApproval:
		if viewer {
			return shownLine(headline(a)) + ": one more approval is in."
		}
		return shownLine(headline(a)) + ": one more approval is in, and yours is needed."
	case app.NotifySettledMsg:
		return shown(app.SettledText(a, "")) + " Its links in earlier mails answer nothing now."
	}
	if a.Revision > 1 {
		return shownLine(headline(a)) + ": the agent changed it; earlier mails' links answer nothing now."
	}
	return shownLine(headline(a))
}

// mailLabel is an answer's label in a mail: one line, nothing invisible,
// and defanged, as a mail client would link a host name in it.
func mailLabel(s string) string { return strings.TrimSpace(shownLine(s)) }

// messageHost is the right side of askd's Message-IDs: the public URL's
// host (one per askd), else the sender's domain.
func (w *Worker) messageHost() string {
	if u, err := url.Parse(w.opts.PublicURL); err == nil && u.Hostname() != "" && !strings.Contains(u.Hostname(), ":") {
		return u.Hostname()
	}
	_, domain, _ := strings.Cut(w.opts.Mail.From, "@")
	return domain
}

// messageID is the Message-ID of the mail about ask id to recipient (a
// person, or "to:ADDRESS" for the fallback) of delivery key, "" for the
// ask's first mail: stable, so a retry sends the same one.
func messageID(id int64, recipient, key, host string) string {
	s := "askd." + strconv.FormatInt(id, 10) + "." + shortHash(recipient)
	if key != "" {
		s += "." + shortHash(key)
	}
	return "<" + s + "@" + host + ">"
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// headerText is text for an unstructured header (Subject): as it is when
// it is printable ASCII that holds no "=?" (which a mail client would
// decode as an encoded word), else all of it as RFC 2047 encoded words
// (UTF-8, base64), folded one word a line: a mail client decodes it back
// to exactly the text. It holds no line break either way (shown text has
// none).
func headerText(s string) string {
	plain := !strings.Contains(s, "=?")
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] < 0x7f
	}
	if plain && len(s) <= 900 {
		return s
	}
	const prefix, suffix, chunk = "=?utf-8?b?", "?=", 45
	var words []string
	for s != "" {
		n := min(len(s), chunk)
		for n < len(s) && n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		words = append(words, prefix+base64.StdEncoding.EncodeToString([]byte(s[:n]))+suffix)
		s = s[n:]
	}
	return strings.Join(words, "\r\n ")
}

// mailHTML is the text/html part. html/template escapes every value as
// text or, for href, as a URL; the values are askd's links and agent text
// as shown.
var mailHTML = template.Must(template.New("mail").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"></head>
<body style="font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-size:15px;line-height:1.45;color:#1b1f24">
<p style="margin:0 0 12px;color:#57606a">{{.Intro}}</p>
<div style="white-space:pre-wrap;margin:0 0 16px">{{.Text}}</div>
{{- if .Links}}
<p style="margin:0 0 8px">Answer (each link opens a page that asks you to confirm):</p>
<p style="margin:0 0 16px">{{range .Links}}<a href="{{.URL}}" style="display:inline-block;margin:0 8px 8px 0;padding:8px 14px;border-radius:6px;background:#0969da;color:#ffffff;text-decoration:none">{{.Label}}</a>{{end}}</p>
{{- else if .Viewer}}
<p style="margin:0 0 16px">You read this ask as a viewer: answering is for approvers.</p>
{{- end}}
<p style="margin:0 0 24px"><a href="{{.Card}}">Open it in the inbox</a></p>
{{- if .Unsubscribe}}
<p style="margin:0;font-size:12px;color:#57606a">askd mails you asks routed to you. <a href="{{.Unsubscribe}}" style="color:#57606a">Stop these emails</a>, or choose where askd tells you in the inbox's Settings.</p>
{{- end}}
</body></html>
`))

// mailBodies are the text/plain and text/html parts of c.
func mailBodies(c mailContent) (plain, html string, err error) {
	var b strings.Builder
	b.WriteString(c.Intro + "\n\n" + c.Text + "\n\n")
	switch {
	case len(c.Links) > 0:
		b.WriteString("Answer (each link opens a page that asks you to confirm):\n")
		for _, l := range c.Links {
			b.WriteString("  " + l.Label + ": " + l.URL + "\n")
		}
		b.WriteString("\n")
	case c.Viewer:
		b.WriteString("You read this ask as a viewer: answering is for approvers.\n\n")
	}
	b.WriteString("Open it in the inbox: " + c.Card + "\n")
	if c.Unsubscribe != "" {
		b.WriteString("\n-- \naskd mails you asks routed to you. Stop these emails: " + c.Unsubscribe + "\n")
	}
	var h bytes.Buffer
	if err := mailHTML.Execute(&h, c); err != nil {
		return "", "", err
	}
	return b.String(), h.String(), nil
}

// assemble is a MIME message of headers h and a multipart/alternative body
// of the plain and HTML parts, quoted-printable, with CRLF line ends.
func assemble(h []string, plain, html string) ([]byte, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	boundary := "askd-" + strings.ToLower(rand.Text())
	if err := mw.SetBoundary(boundary); err != nil {
		return nil, err
	}
	for _, p := range []struct{ typ, text string }{{"text/plain", plain}, {"text/html", html}} {
		pw, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {p.typ + "; charset=utf-8"},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		if err != nil {
			return nil, err
		}
		qw := quotedprintable.NewWriter(pw)
		if _, err := qw.Write([]byte(strings.ReplaceAll(p.text, "\n", "\r\n"))); err != nil {
			return nil, err
		}
		if err := qw.Close(); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for _, line := range h {
		out.WriteString(line + "\r\n")
	}
	out.WriteString("MIME-Version: 1.0\r\n")
	out.WriteString(`Content-Type: multipart/alternative; boundary="` + boundary + "\"\r\n\r\n")
	out.Write(body.Bytes())
	return out.Bytes(), nil
}
