package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/askd-dev/askd"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// detailsMarkdown renders the details of attention asks and approvals. Unlike
// option previews (designed content, where stray HTML is dropped), details
// are an agent's running prose about code, so two things differ: a line break
// stays a line break (plain text from a shell reads as it was written), and
// raw HTML is shown as the text it is ("returns Vec<String>" keeps its
// <String>), never dropped and never markup. The output goes through
// previewPolicy like a preview's.
var detailsMarkdown = goldmark.New(
	goldmark.WithExtensions(extension.Table, extension.Strikethrough),
	goldmark.WithRendererOptions(html.WithHardWraps(),
		renderer.WithNodeRenderers(util.Prioritized(rawHTMLAsText{}, 100))), // before the default (1000)
)

// rawHTMLAsText renders raw HTML, inline or as a block, as escaped text.
type rawHTMLAsText struct{}

func (rawHTMLAsText) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindRawHTML, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			segs := n.(*ast.RawHTML).Segments
			for i := range segs.Len() {
				seg := segs.At(i)
				w.Write(util.EscapeHTML(seg.Value(src)))
			}
		}
		return ast.WalkSkipChildren, nil
	})
	r.Register(ast.KindHTMLBlock, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		b := n.(*ast.HTMLBlock)
		var text []byte
		for i := range b.Lines().Len() {
			line := b.Lines().At(i)
			text = append(text, line.Value(src)...)
		}
		if b.HasClosure() {
			text = append(text, b.ClosureLine.Value(src)...)
		}
		w.WriteString("<p>")
		w.Write(bytes.ReplaceAll(util.EscapeHTML(bytes.TrimRight(text, "\n")), []byte("\n"), []byte("<br>\n")))
		w.WriteString("</p>\n")
		return ast.WalkSkipChildren, nil
	})
}

// RenderDetails renders an ask's details, Markdown, to sanitized HTML:
// formatting only, without links, images, scripts or styles; line breaks
// kept, raw HTML shown as text.
func RenderDetails(src string) string {
	var buf bytes.Buffer
	if err := detailsMarkdown.Convert([]byte(src), &buf); err != nil {
		buf.Reset()
		buf.WriteString("<pre>")
		buf.WriteString(bluemonday.StrictPolicy().Sanitize(src))
		buf.WriteString("</pre>")
	}
	return previewPolicy.Sanitize(buf.String())
}

// maxDetailsIDs bounds one details request; the page asks in batches.
const maxDetailsIDs = 50

// renderedDetails is one ask's details as the page shows them.
type renderedDetails struct {
	ID       int64  `json:"id"`
	Revision int    `json:"revision"` // of the ask whose details these are
	HTML     string `json:"html"`
}

// details answers GET /inbox/details?id=3&id=7: the details of those asks,
// rendered from Markdown and sanitized, each with the revision it belongs to
// (an attention ask's details change when a newer one replaces it). Asks the
// person cannot see, and asks without details, are left out.
func (h *Handler) details(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w, pageCSP)
	c, err := h.human(r)
	if err != nil {
		writeJSONError(w, err)
		return
	}
	ids := r.URL.Query()["id"]
	if len(ids) == 0 || len(ids) > maxDetailsIDs {
		writeJSONError(w, askd.Errorf(askd.EINVALID, "id: give 1 to %d ask ids", maxDetailsIDs))
		return
	}
	out := struct {
		Details []renderedDetails `json:"details"`
	}{Details: []renderedDetails{}}
	for _, s := range ids {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= 0 {
			writeJSONError(w, askd.Errorf(askd.EINVALID, "id: %q is not an ask id", s))
			return
		}
		a, err := h.svc.Get(r.Context(), c, id)
		if askd.ErrorCode(err) == askd.ENOTFOUND {
			continue
		}
		if err != nil {
			writeJSONError(w, err)
			return
		}
		if a.Details != "" {
			out.Details = append(out.Details, renderedDetails{ID: a.ID, Revision: a.Revision, HTML: RenderDetails(a.Details)})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(true)
	enc.Encode(out)
	writeMaybeGzip(w, r, b.Bytes())
}
