package httpapi

import (
	"bytes"
	"html/template"
	"net/http"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/response"
)

// # Unsubscribe links: GET and POST /unsubscribe/{code}
//
// Every mail to a person carries List-Unsubscribe: <public-url>/unsubscribe/
// <code> and List-Unsubscribe-Post: List-Unsubscribe=One-Click (RFC 8058):
// a mail client's "Unsubscribe" POSTs List-Unsubscribe=One-Click to the
// link, which records the person's choice of no email (app.Unsubscribe;
// their other channels stay, and later sign-ins keep it). GET, what a
// person opening the link, a scanner or a preview does, changes nothing:
// it shows a page whose one button sends that POST. Like an answer link's
// page: no cookie, no script, the code the only credential, unknown codes
// counted against the client's address.

// unsubscribe serves GET and POST /unsubscribe/{code}.
func (s *Server) unsubscribe(w http.ResponseWriter, r *http.Request) {
	setLinkHeaders(w)
	addr := clientAddr(r)
	if err := s.linkThrottled(w, r, addr); err != nil {
		s.unsubscribePage(w, http.StatusTooManyRequests, unsubscribeView{Heading: "Too many unknown links", Says: askd.ErrorMessage(err)})
		return
	}
	code := r.PathValue("code")
	person, err := s.app.OpenUnsubscribe(r.Context(), code)
	if askd.ErrorCode(err) == askd.ENOTFOUND {
		s.throttle.failed(addr)
		noteFailedAuth(r)
		if r.ContentLength != 0 {
			closeUnread(w)
		}
		s.unsubscribePage(w, http.StatusNotFound, unsubscribeView{Heading: "Unknown link", Says: askd.ErrorMessage(err) + " Nothing was changed."})
		return
	}
	if err != nil {
		s.unsubscribeError(w, r, err)
		return
	}
	if r.Method != http.MethodPost {
		s.unsubscribePage(w, http.StatusOK, unsubscribeView{Heading: "Stop askd's email?", Person: person, Open: true,
			Says: "askd mails " + person + " the asks routed to them. The button stops that email; other notifications stay as they are."})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if r.PostFormValue("List-Unsubscribe") != "One-Click" {
		s.unsubscribePage(w, http.StatusBadRequest, unsubscribeView{Heading: "Nothing was changed", Person: person, Open: true,
			Says: "Confirm with the page's button: the request must carry List-Unsubscribe=One-Click."})
		return
	}
	if person, err = s.app.Unsubscribe(r.Context(), code); err != nil {
		s.unsubscribeError(w, r, err)
		return
	}
	s.unsubscribePage(w, http.StatusOK, unsubscribeView{Heading: "No more email", Person: person,
		Says: "askd sends " + person + " no more email. To get it again, set an address in the inbox's Settings."})
}

// unsubscribeError shows err (the database unreachable) with its status.
func (s *Server) unsubscribeError(w http.ResponseWriter, r *http.Request, err error) {
	code := askd.ErrorCode(err)
	if code == askd.EINTERNAL {
		s.log.Error("request failed", "method", r.Method, "route", "/unsubscribe/{code}", "err", err)
	}
	s.unsubscribePage(w, response.Status(code), unsubscribeView{Heading: "Nothing was changed", Says: askd.ErrorMessage(err)})
}

// unsubscribeView is what the page shows.
type unsubscribeView struct {
	Heading, Says, Person string
	Open                  bool // the button
}

func (s *Server) unsubscribePage(w http.ResponseWriter, status int, v unsubscribeView) {
	var b bytes.Buffer
	if err := unsubscribeTemplate.Execute(&b, v); err != nil {
		s.log.Error("unsubscribe page", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// unsubscribeTemplate is the page, styled as an answer link's.
var unsubscribeTemplate = template.Must(template.New("unsubscribe").Parse(`<!doctype html>
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
<p class="from">askd · email{{with .Person}} to {{.}}{{end}}</p>
<h1>{{.Heading}}</h1>
<p>{{.Says}}</p>
{{if .Open}}<form method="post">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<button type="submit">Stop email</button>
</form>{{end}}
<p class="fine"><a href="/?view=settings">Settings in the inbox</a></p>
</main>
</body>
</html>
`))
