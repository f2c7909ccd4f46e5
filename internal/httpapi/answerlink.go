package httpapi

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"net/url"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/response"
)

// # Answer links: GET and POST /a/{code}
//
// A notification's button is a signed answer link (app/answerlinks.go).
// GET shows a one-tap confirm page: the ask, the answer the link gives, and
// a button; it never answers, so link scanners and chat previews that fetch
// it change nothing. POST, the page's button or ntfy's http action, with the
// form body confirm=1, answers and shows the result. There is no cookie and
// no sign-in: the code in the path is the only credential, so a forged
// cross-site POST needs the code, with which one may as well answer; SameSite
// and Origin have nothing to protect. A link that does not work (unknown,
// used, expired, for an older revision, its ask settled) shows why, with a
// 4xx status, and changes nothing. Unknown codes count against the client's
// address in the throttle of failed authentications, like wrong sign-in
// codes, and an unknown code's POST is refused before its body is read.
//
// The page is server-rendered html/template, with no script at all, agent
// text only as escaped text, and a strict Content-Security-Policy (nothing
// loads; the one inline stylesheet is allowed by its hash; forms post only
// here). Referrer-Policy: no-referrer keeps the code out of the Referer of
// the inbox link on the page, and Cache-Control: no-store out of caches.

// linkStatus is the HTTP status of a link's page by its state.
var linkStatus = map[app.LinkState]int{
	app.LinkOpen:    http.StatusOK,
	app.LinkSettled: http.StatusConflict,
	app.LinkChanged: http.StatusConflict,
	app.LinkExpired: http.StatusGone,
	app.LinkUnknown: http.StatusNotFound,
}

// linkHeadings are the pages' headings by state.
var linkHeadings = map[app.LinkState]string{
	app.LinkSettled: "This ask is settled",
	app.LinkChanged: "This ask has changed",
	app.LinkExpired: "This link has expired",
	app.LinkUnknown: "Unknown link",
}

// setLinkHeaders sets the headers of a page a code in a link opens (an
// answer link's, an unsubscribe link's): no script but the page's own
// (linkCSP), no referrer, no cache, no frame, no index.
func setLinkHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", linkCSP)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Robots-Tag", "noindex, nofollow")
}

// linkThrottled returns, when the client at addr has tried too many
// unknown codes, the error its page says, the connection closed unread and
// Retry-After set; nil when it may go on.
func (s *Server) linkThrottled(w http.ResponseWriter, r *http.Request, addr string) error {
	after, over := s.throttle.refused(addr)
	if !over {
		return nil
	}
	noteFailedAuth(r)
	closeUnread(w)
	err := errThrottled(after)
	retryAfter(w, err)
	return err
}

// viaLink is the history note of an answer given through a link's page or
// ntfy's button.
const viaLink = "via link"

// answerLink serves GET and POST /a/{code}.
func (s *Server) answerLink(w http.ResponseWriter, r *http.Request) {
	setLinkHeaders(w)
	addr := clientAddr(r)
	if err := s.linkThrottled(w, r, addr); err != nil {
		s.linkPage(w, http.StatusTooManyRequests, &linkPage{Heading: "Too many unknown links", Says: askd.ErrorMessage(err)})
		return
	}
	code := r.PathValue("code")
	v, err := s.app.OpenAnswerLink(r.Context(), code)
	if err != nil {
		s.linkError(w, r, err)
		return
	}
	if v.State == app.LinkUnknown {
		s.throttle.failed(addr)
		noteFailedAuth(r)
		if r.ContentLength != 0 {
			closeUnread(w)
		}
	}
	if v.Ask != nil {
		noteAsk(r.Context(), v.Ask.ID)
	}
	if v.State == app.LinkSettled {
		countHeader(w, v.Ask) // used: its approval counted already (quorum)
	}
	if r.Method != http.MethodPost || v.State != app.LinkOpen {
		s.linkPage(w, linkStatus[v.State], pageOf(v))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if r.PostFormValue("confirm") != "1" {
		p := pageOf(v)
		p.Heading, p.Says = "Nothing was answered", "Confirm with the page's button: the request must carry confirm=1."
		s.linkPage(w, http.StatusBadRequest, p)
		return
	}
	if v, err = s.app.AnswerByLink(r.Context(), code, viaLink); err != nil {
		s.linkError(w, r, err)
		return
	}
	status := linkStatus[v.State]
	if v.Answered {
		status = http.StatusOK
	}
	if v.State == app.LinkSettled {
		countHeader(w, v.Ask) // answered, or counted toward a quorum
	}
	s.linkPage(w, status, pageOf(v))
}

// linkError shows err (a gate's refusal, the database unreachable) on the
// link's page, with its status from the one table.
func (s *Server) linkError(w http.ResponseWriter, r *http.Request, err error) {
	if e := (*askd.Error)(nil); errors.As(err, &e) && e.Ask != nil {
		countHeader(w, e.Ask) // its person approved it already (quorum)
	}
	code := askd.ErrorCode(err)
	if code == askd.EINTERNAL {
		s.log.Error("request failed", "method", r.Method, "route", "/a/{code}", "err", err)
	}
	s.linkPage(w, response.Status(code), &linkPage{Heading: "Nothing was answered", Says: askd.ErrorMessage(err)})
}

// linkPage is what the page template shows.
type linkPage struct {
	Heading, Says string
	Ask           *askd.Ask
	Field         string        // a form's one field: its title, and description
	Options       []askd.Option // the ask's, its only question's, or its form's one field's choices
	Payload       string        // an approval's, indented
	Open          bool          // the confirm button
	Label         string        // the link's answer
	Human         string
	Expires       string
}

// pageOf is the page of a link's view.
func pageOf(v *app.LinkView) *linkPage {
	p := &linkPage{Heading: linkHeadings[v.State], Says: v.Says(), Ask: v.Ask}
	if v.Ask == nil {
		return p
	}
	a := v.Ask
	p.Options = a.Options
	if a.Kind == askd.KindQuestion && len(a.Questions) > 0 {
		p.Options = a.Questions[0].Options
	}
	if a.Kind == askd.KindForm {
		p.Field, p.Options = formChoices(a)
	}
	if len(a.Payload) > 0 {
		var b bytes.Buffer
		if json.Indent(&b, a.Payload, "", "  ") == nil {
			p.Payload = b.String()
		} else {
			p.Payload = string(a.Payload)
		}
	}
	l := v.Link
	p.Label, p.Human = l.Label, l.Human
	switch {
	case v.Answered:
		p.Heading = "Answered: " + l.Label
	case v.State == app.LinkOpen:
		p.Heading, p.Open = "Answer: "+l.Label+"?", true
		p.Expires = l.ExpiresAt.UTC().Format("2 Jan 2006 15:04 MST")
	}
	return p
}

// formChoices are a form ask's one single-select field, in words ("Title:
// description"), and its choices by their titles (the value when untitled),
// the default marked: what its links choose from. None for other forms,
// which have no links.
func formChoices(a *askd.Ask) (string, []askd.Option) {
	s, err := askd.ParseFormSchema(a.Schema)
	if err != nil || len(s.Fields) != 1 || s.Fields[0].Type != askd.FieldEnum {
		return "", nil
	}
	f := s.Fields[0]
	field := cmp.Or(f.Title, f.Name)
	if f.Description != "" {
		field += ": " + f.Description
	}
	out := make([]askd.Option, len(f.Options))
	for i, o := range f.Options {
		out[i] = askd.Option{Label: cmp.Or(o.Title, o.Const)}
		if f.Default == o.Const {
			out[i].Description = "the default"
		}
	}
	return field, out
}

func (s *Server) linkPage(w http.ResponseWriter, status int, p *linkPage) {
	var b bytes.Buffer
	if err := linkTemplate.Execute(&b, p); err != nil {
		s.log.Error("answer link page", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// headerCount is the response header that carries, for an approval still
// gathering approvals (SPEC §11), its count so far ("1 of 2 approvals, by
// alice; it needs 1 more."), percent-encoded as a URL path is (people's
// names may be any letters; a header is bytes): the service worker tells a
// tap that counted, or one that did not count again, by it (sw.js).
const headerCount = "Askd-Approvals"

// countHeader sets headerCount for a, when it is a pending approval with
// approvals counted.
func countHeader(w http.ResponseWriter, a *askd.Ask) {
	if a.Pending() && len(a.Approvals) > 0 {
		w.Header().Set(headerCount, url.PathEscape(app.QuorumText(a)))
	}
}

// linkStyle is the page's one stylesheet, inline and allowed by its hash.
const linkStyle = `
:root { color-scheme: light dark; font: 16px/1.45 system-ui, sans-serif; }
body { margin: 0; padding: 1rem; }
main { max-width: 36rem; margin: 0 auto; }
.from { color: GrayText; font-size: .9rem; margin: 0; }
h1 { font-size: 1.4rem; margin: .3rem 0 1rem; overflow-wrap: anywhere; }
.ask { border: 1px solid GrayText; border-radius: .5rem; padding: .75rem 1rem; margin-bottom: 1rem; }
.ask p, .ask li { overflow-wrap: anywhere; white-space: pre-wrap; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; font-size: .85rem; max-height: 20rem; overflow: auto; }
button { font: inherit; font-size: 1.15rem; padding: .8rem 1.2rem; width: 100%; border-radius: .5rem; cursor: pointer; }
.fine { color: GrayText; font-size: .85rem; }
`

// linkCSP allows nothing but the inline stylesheet and posting the form
// here: no script, no image, no frame, no other origin.
var linkCSP = func() string {
	sum := sha256.Sum256([]byte(linkStyle))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; " +
		"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
}()

// linkTemplate is the page. Its first line says whose ask it is, and the
// MCP server it came through (an MCP gate's approval, askd.Ask.Through) or
// asks for (a form).
var linkTemplate = template.Must(template.New("link").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>{{.Heading}} · askd</title>
<style>` + linkStyle + `</style>
</head>
<body>
<main>
{{with .Ask}}<p class="from">askd · {{.Kind}} #{{.ID}} from {{.Agent}} / {{.Session}}{{with .Through}} · {{.}}{{else}}{{with .Source}} · asked by {{.}}{{end}}{{end}}</p>{{end}}
<h1>{{.Heading}}</h1>
{{with .Ask}}<section class="ask">
<p>{{if eq .Kind "form"}}{{.Title}}{{else}}{{.Summary}}{{end}}</p>
{{with $.Field}}<p>{{.}}</p>{{end}}
{{with $.Options}}<ul>{{range .}}<li>{{.Label}}{{with .Description}}: {{.}}{{end}}</li>{{end}}</ul>{{end}}
{{with .Details}}<pre>{{.}}</pre>{{end}}
{{with $.Payload}}<pre>{{.}}</pre>{{end}}
</section>{{end}}
<p>{{.Says}}</p>
{{if .Open}}<form method="post">
<input type="hidden" name="confirm" value="1">
<button type="submit">{{.Label}}</button>
</form>
<p class="fine">You answer as {{.Human}}. This link works once, until {{.Expires}}.</p>{{end}}
{{with .Ask}}<p class="fine"><a href="/?ask={{.ID}}">Open the ask in the inbox</a></p>{{end}}
</main>
</body>
</html>
`))
