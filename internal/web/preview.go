package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/response"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// markdown renders option previews. Raw HTML in the source is dropped
// (goldmark's default without html.WithUnsafe), and the output is sanitized
// again by previewPolicy.
var markdown = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough))

// previewPolicy allows text formatting only: no links (agent text is never
// clickable), no images (nothing fetched), no styles, no scripts, no forms.
// Disallowed elements are dropped and their text kept.
var previewPolicy = func() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowElements("p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6",
		"strong", "b", "em", "i", "del", "s", "code", "pre", "kbd", "blockquote",
		"ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td", "span")
	p.AllowAttrs("align").Matching(bluemonday.Paragraph).OnElements("th", "td")
	p.AllowAttrs("class").Matching(bluemonday.SpaceSeparatedTokens).OnElements("code")
	p.AllowAttrs("start").Matching(bluemonday.Integer).OnElements("ol")
	return p
}()

// RenderMarkdown renders a Markdown preview to sanitized HTML: formatting
// only, without links, images, scripts or styles.
func RenderMarkdown(src string) string {
	var buf bytes.Buffer
	if err := markdown.Convert([]byte(src), &buf); err != nil {
		buf.Reset()
		buf.WriteString("<pre>")
		buf.WriteString(bluemonday.StrictPolicy().Sanitize(src))
		buf.WriteString("</pre>")
	}
	return previewPolicy.Sanitize(buf.String())
}

// previewAsk returns the question ask id names, for the person signed in.
func (h *Handler) previewAsk(r *http.Request) (*askd.Ask, error) {
	c, err := h.human(r)
	if err != nil {
		return nil, err
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return nil, askd.Errorf(askd.EINVALID, "id: not an ask id")
	}
	return h.svc.Get(r.Context(), c, id)
}

// previews answers GET /inbox/previews/{id}: the ask's option previews,
// one list per question, one entry per option ("" where there is none). In
// Markdown mode each is sanitized HTML for the page to show; in HTML mode
// the page shows each in a sandboxed frame loading previewDoc, and the
// entries only say which options have one.
func (h *Handler) previews(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w, pageCSP)
	a, err := h.previewAsk(r)
	if err != nil {
		writeJSONError(w, err)
		return
	}
	htmlMode := h.svc.Config().PreviewHTML
	out := struct {
		Format   string     `json:"format"`
		Previews [][]string `json:"previews"`
	}{Format: "markdown", Previews: [][]string{}}
	if htmlMode {
		out.Format = "html"
	}
	for _, q := range a.Questions {
		row := make([]string, len(q.Options))
		for i, o := range q.Options {
			switch {
			case o.Preview == "":
			case htmlMode:
				row[i] = "frame"
			default:
				row[i] = RenderMarkdown(o.Preview)
			}
		}
		out.Previews = append(out.Previews, row)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "private, max-age=3600") // an ask's questions never change
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	enc.Encode(out)
}

// previewCSP is the policy of an HTML preview document: no script at all,
// nothing loaded from anywhere but inline styles and data: images, and the
// document sandboxed even if opened outside its frame.
const previewCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'self'; sandbox"

// previewDoc answers GET /inbox/previews/{id}/{q}/{o}: one option's preview
// as a document for a sandboxed frame. HTML previews are served as given,
// under previewCSP; Markdown ones are rendered and sanitized first.
func (h *Handler) previewDoc(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w, previewCSP)
	a, err := h.previewAsk(r)
	if err != nil {
		http.Error(w, askd.ErrorMessage(err), response.Status(askd.ErrorCode(err)))
		return
	}
	qi, err1 := strconv.Atoi(r.PathValue("q"))
	oi, err2 := strconv.Atoi(r.PathValue("o"))
	if err1 != nil || err2 != nil || qi < 0 || qi >= len(a.Questions) || oi < 0 || oi >= len(a.Questions[qi].Options) {
		http.Error(w, errNoPreview.Error(), http.StatusNotFound)
		return
	}
	src := a.Questions[qi].Options[oi].Preview
	if !h.svc.Config().PreviewHTML {
		src = RenderMarkdown(src)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "private, max-age=3600")
	var b bytes.Buffer
	b.WriteString(`<!doctype html><meta charset="utf-8"><meta name="color-scheme" content="light dark">` +
		`<style>body{font:14px/1.5 system-ui,sans-serif;margin:12px}pre{white-space:pre-wrap}</style>`)
	b.WriteString(src)
	writeMaybeGzip(w, r, b.Bytes())
}

func writeJSONError(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(response.Status(askd.ErrorCode(err)))
	json.NewEncoder(w).Encode(map[string]string{"error": askd.ErrorMessage(err), "code": askd.ErrorCode(err)})
}
