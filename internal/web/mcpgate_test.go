package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/chromedp/chromedp"
)

// gateAsk is the approval an MCP gate makes of a call to tool of the MCP
// server named server (SPEC §14): tool_name mcp__server__tool, the
// arguments (a JSON object, in its order) as payload, source the server.
func gateAsk(server, tool, title, details, args string) *askd.AskInput {
	return &askd.AskInput{Kind: askd.KindApproval, Title: title, Details: details, Payload: json.RawMessage(args),
		ToolName: "mcp__" + server + "__" + tool, Source: server}
}

// texts is the text of every element sel matches in the page, in order.
func texts(p *tab, sel string) []string {
	p.t.Helper()
	q, _ := json.Marshal(sel)
	return eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll(%s)].map(e => e.textContent)`, q))
}

// TestMCPGateCard: an approval an MCP gate asks shows which tool through
// which server ("write_file through filesystem"), what it writes to as its
// headline, and the arguments one by one, a file's content as its lines;
// the exact JSON is folded below. The tool-wide rule is offered for
// mcp__filesystem__write_file in those words, and made when ticked; the
// settled ask's record says the same.
func TestMCPGateCard(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	content := "# To do\n\n- ship the gate\n- <b>write</b> the docs\n\tindented, and a CRLF\r\nlast line"
	a := createFor(t, srv, "desk", gateAsk("filesystem", "write_file", "Allow mcp__filesystem__write_file: notes/todo.md", "",
		fmt.Sprintf(`{"path":"notes/todo.md","content":%s,"mode":420,"backup":false}`, jsonText(content))), 0)
	c := card(a.ID)
	p := openInbox(t, srv, "/")
	p.waitFor(fmt.Sprintf(`!!document.querySelector('%s .args')`, c))

	if got := p.text(c + " .tool-head .tool-name"); got != "write_file" {
		t.Errorf("tool %q, want write_file", got)
	}
	if got := eval[string](p, fmt.Sprintf(`document.querySelector('%s .tool-head .tool-name').title`, c)); got != "mcp__filesystem__write_file" {
		t.Errorf("the tool's full name %q", got)
	}
	if got := p.text(c + " .tool-head .through"); got != "through filesystem" {
		t.Errorf("server %q, want through filesystem", got)
	}
	if got := p.text(c + " .tool-head .tool-target"); got != "notes/todo.md" {
		t.Errorf("headline %q, want the path", got)
	}
	if got := p.text(c + " .meta .kind"); got != "Permission" {
		t.Errorf("kind chip %q", got)
	}
	// The title says what the head says: not shown again.
	if n := eval[int](p, fmt.Sprintf(`document.querySelectorAll('%s .card-body > .subtitle').length`, c)); n != 0 {
		t.Errorf("%d subtitles", n)
	}
	// The arguments, in their order: short ones on a line, the content as
	// its lines (a CRLF as a line break), its markup as text.
	if got, want := texts(p, c+" .args dt"), []string{"path", "content · 6 lines", "mode", "backup"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("argument names %q, want %q", got, want)
	}
	if got, want := texts(p, c+" .args dd.arg-value"), []string{"notes/todo.md", "420", "false"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("short values %q, want %q", got, want)
	}
	if got, want := p.text(c+" .args dd.arg-long pre.arg-text"), strings.ReplaceAll(content, "\r\n", "\n"); got != want {
		t.Errorf("content shown as %q, want %q", got, want)
	}
	if n := eval[int](p, fmt.Sprintf(`document.querySelectorAll('%s .args b, %s .args .esc').length`, c, c)); n != 0 {
		t.Errorf("%d elements made of the content's text", n)
	}
	// The exact arguments, folded.
	if open := eval[bool](p, fmt.Sprintf(`document.querySelector('%s .args-box details.input-box').open`, c)); open {
		t.Error("the arguments' JSON is open, though the list says all of it")
	}
	if got := eval[string](p, fmt.Sprintf(`document.querySelector('%s .args-box pre.payload').textContent`, c)); !strings.Contains(got, `"content": "# To do\n\n- ship`) {
		t.Errorf("the arguments' JSON %q", got)
	}

	// Always allow (and Reject…'s Always deny) offers the tool, through
	// its server, and makes the rule for mcp__filesystem__write_file.
	for _, r := range []struct{ sel, want string }{
		{c + " .card-body > .rule-choice .rule-opt label", "Always allow write_file through filesystem in this session (any arguments)"},
		{c + " .reject-pane .rule-choice .rule-opt label", "Always deny write_file through filesystem in this session (any arguments)"},
	} {
		if got := texts(p, r.sel); len(got) != 1 || got[0] != r.want {
			t.Errorf("rule choices %q, want %q", got, r.want)
		}
	}
	p.do(chromedp.Click(chromedp.CSS(c + ` .rule-box[data-match="tool"]`)))
	p.steady(button(a.ID, "Approve"))
	p.do(chromedp.Click(button(a.ID, "Approve")))
	// The card stays until the rule is made (answerWithRule).
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') === null`, c))
	got, err := srv.Human().Show(context.Background(), a.ID)
	if err != nil || got.Answer == nil || got.Answer.Decision != askd.DecisionApproved {
		t.Fatalf("Approve gave %+v (%v)", got, err)
	}
	rs, err := srv.Human().Rules(context.Background(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Match != askd.MatchTool || rs[0].Tool != "mcp__filesystem__write_file" || rs[0].Effect != askd.EffectAllow || rs[0].Session != "desk" {
		t.Fatalf("rules made %+v, want one: allow mcp__filesystem__write_file in desk", rs)
	}

	// The record in Recent says the tool through its server too.
	recent := fmt.Sprintf(`#recent .recent-item[data-id="%d"]`, a.ID)
	p.waitFor(fmt.Sprintf(`!!document.querySelector('%s')`, recent))
	eval[bool](p, fmt.Sprintf(`document.querySelector('%s details.record').open = true`, recent))
	p.waitFor(fmt.Sprintf(`!!document.querySelector('%s .record-body .rec-title .through')`, recent))
	if got := p.text(recent + " .record-body .rec-title"); got != "write_file through filesystem notes/todo.md" {
		t.Errorf("the record says %q", got)
	}
}

// Elements the page makes to show a gate's text (SPEC §14), by tag and
// class: any other element in those places was made of the text.
const gateElements = `new Set(['H2 title tool-head gate-head', 'BDI tool-name', 'SPAN through', 'BDI tool-source', 'CODE tool-target',
	'BDI ', 'SPAN esc', 'P subtitle', 'DIV args-box', 'DL args', 'DT arg-name', 'DD arg-value', 'DD arg-long', 'SPAN muted',
	'PRE code arg-text', 'DETAILS input-box', 'SUMMARY ', 'PRE code payload', 'H2 title'])`

// TestMCPGateTextIsInert: an MCP server's name, tool name, the title and
// the arguments of its call, holding markup, links, control characters,
// bidi controls and zero-width characters, show as text on the card, in
// the rule offered and in the details: no element is made of them, none is
// a link, nothing runs, and every hidden character shows as its escape.
func TestMCPGateTextIsInert(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	// A server name that is markup and a link, in the tool's name too.
	server := `<img src=x onerror=window.__xss=1> https://evil.example`
	tool := `<script>window.__xss=1</script>[run](https://evil.example/x)`
	args := `{` + jsonText(xssImg) + `:"https://evil.example/steal?x=1",` +
		`"href":"javascript:window.__xss=1","md":"[click](https://evil.example) <a href=\"https://evil.example\">here</a>",` +
		`"term":"\u001b[31mred\u001b[0m","name":"invoice\u202egpj.exe","zw":"zero\u200bwidth\ufeff",` +
		`"content":` + jsonText("<script>window.__xss=1</script>\r\nline \u202e2\u2066\n\tthird: \u001b]8;;https://evil.example\u0007link\u001b]8;;\u0007") + `,` +
		`"nested":{"svg":` + jsonText(xssSVG) + `,"bidi":"\u202e"}}`
	marked := createFor(t, srv, "s-markup", gateAsk(server, tool, "Allow "+xssImg+" https://evil.example \u202eexe.txt",
		xssMarkdown+"\n\nbidi \u202eabc\u200b", args), 0)
	// A server name with bidi and zero-width characters, which a tool name
	// may not hold: the tool's name is shown whole.
	bidi := createFor(t, srv, "s-bidi", &askd.AskInput{Kind: askd.KindApproval, Title: "Allow it", ToolName: "mcp__other__write",
		Source: "files\u202eeliF\u200b", Payload: json.RawMessage(`{"path":"a\u202etxt.exe"}`)}, 0)
	p := openInbox(t, srv, "/")
	p.waitFor(`document.querySelectorAll('#pending .card .args').length === 2`)
	p.waitFor(fmt.Sprintf(`!!document.querySelector('%s .details .md')`, card(marked.ID)))

	for _, c := range []struct {
		sel, want string
	}{
		{card(marked.ID) + " .tool-head .tool-name", tool},
		{card(marked.ID) + " .tool-head .through", "through " + server},
		{card(marked.ID) + " .tool-head .tool-target", "https://evil.example/steal?x=1"},
		{card(marked.ID) + " .card-body > .subtitle", "Allow " + xssImg + ` https://evil.example \u202eexe.txt`},
		{card(marked.ID) + " .card-body > .rule-choice .rule-opt label", "Always allow " + tool + " through " + server + " in this session (any arguments)"},
		{card(bidi.ID) + " .tool-head .tool-name", "mcp__other__write"},
		{card(bidi.ID) + " .tool-head .through", `through files\u202eeliF\u200b`},
		{card(bidi.ID) + " .tool-head .tool-target", `a\u202etxt.exe`},
	} {
		if got := p.text(c.sel); got != c.want {
			t.Errorf("%s shows %q, want %q", c.sel, got, c.want)
		}
	}
	if got, want := texts(p, card(marked.ID)+" .args dt"), []string{xssImg, "href", "md", "term", "name", "zw", "content · 3 lines", "nested"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("argument names %q, want %q", got, want)
	}
	if got, want := texts(p, card(marked.ID)+" .args dd.arg-value"), []string{"https://evil.example/steal?x=1", "javascript:window.__xss=1",
		`[click](https://evil.example) <a href="https://evil.example">here</a>`, `\x1b[31mred\x1b[0m`, `invoice\u202egpj.exe`, `zero\u200bwidth\ufeff`,
		`{"svg":"\"><svg onload=window.__xss=1>","bidi":"\u202e"}`}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("argument values %q\nwant %q", got, want)
	}
	if got, want := p.text(card(marked.ID)+" pre.arg-text"), "<script>window.__xss=1</script>\nline \\u202e2\\u2066\n\tthird: \\x1b]8;;https://evil.example\\x07link\\x1b]8;;\\x07"; got != want {
		t.Errorf("content shows %q, want %q", got, want)
	}
	// Each hidden character is marked as an escape, not only written as one.
	if got := texts(p, card(bidi.ID)+" .tool-head .esc"); fmt.Sprint(got) != fmt.Sprint([]string{`\u202e`, `\u200b`, `\u202e`}) {
		t.Errorf("escapes on the second card %q", got)
	}
	// The details (the gate's rendering of the arguments), Markdown made
	// safe on the server, show their hidden characters too.
	if got := p.text(card(marked.ID) + " .details .md"); !strings.Contains(got, `bidi \u202eabc\u200b`) {
		t.Errorf("details show %q", got)
	}

	for _, id := range []int64{marked.ID, bidi.ID} {
		c := card(id)
		// Nothing but what the page makes to show text.
		made := eval[[]string](p, fmt.Sprintf(`(known => [...document.querySelectorAll('%s .tool-head, %s .tool-head *, %s .card-body > .subtitle, %s .card-body > .subtitle *, %s .args-box, %s .args-box *, %s .rule-opt label span *')]
			.map(e => e.tagName + ' ' + e.className).filter(k => !known.has(k)))(%s)`, c, c, c, c, c, c, c, gateElements))
		if len(made) > 0 {
			t.Errorf("card %d: elements made of the text: %q", id, made)
		}
		if n := eval[int](p, fmt.Sprintf(`document.querySelectorAll('%s a, %s img, %s script, %s svg, %s iframe, %s form').length`, c, c, c, c, c, c)); n != 0 {
			t.Errorf("card %d: %d links, images, scripts, frames or forms", id, n)
		}
		if attrs := eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll('%s *')].flatMap(e => [...e.attributes].map(a => a.name)).filter(n => /^on|^href$|^src|^style$/.test(n))`, c)); len(attrs) > 0 {
			t.Errorf("card %d: attributes %q", id, attrs)
		}
		// No hidden character reaches the card's text as itself.
		if hidden := eval[string](p, fmt.Sprintf(`(document.querySelector('%s').textContent.match(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\u2028\u2029\ufeff]/gu) || []).map(c => 'U+' + c.codePointAt(0).toString(16)).join(' ')`, c)); hidden != "" {
			t.Errorf("card %d: hidden characters in its text: %s", id, hidden)
		}
	}
	// The arguments' JSON, opened, and the editor: the same JSON, its
	// hidden characters written as \u escapes.
	c := card(marked.ID)
	eval[bool](p, fmt.Sprintf(`document.querySelector('%s .args-box details').open = true`, c))
	if got := p.text(c + " pre.payload"); !strings.Contains(got, `"name": "invoice\u202egpj.exe"`) || !strings.Contains(got, `"term": "\u001b[31mred\u001b[0m"`) {
		t.Errorf("the arguments' JSON %q", got)
	}
	p.steady(button(marked.ID, "Edit…"))
	p.do(chromedp.Click(button(marked.ID, "Edit…")))
	if got := eval[string](p, fmt.Sprintf(`document.querySelector('%s textarea.json-editor').value`, c)); !strings.Contains(got, `"zw": "zero\u200bwidth\ufeff"`) {
		t.Errorf("the editor holds %q", got)
	}
	// Settled, its record in Recent shows the same text the same way.
	if _, err := srv.Human().Answer(context.Background(), marked.ID, &askd.Answer{Decision: askd.DecisionRejected}); err != nil {
		t.Fatal(err)
	}
	recent := fmt.Sprintf(`#recent .recent-item[data-id="%d"]`, marked.ID)
	p.waitFor(fmt.Sprintf(`!!document.querySelector('%s')`, recent))
	eval[bool](p, fmt.Sprintf(`document.querySelector('%s details.record').open = true`, recent))
	p.waitFor(fmt.Sprintf(`!!document.querySelector('%s .record-body .rec-details')`, recent))
	if got, want := p.text(recent+" .rec-title"), tool+" through "+server+" https://evil.example/steal?x=1"; got != want {
		t.Errorf("the record's title %q, want %q", got, want)
	}
	if got := p.text(recent + " .rec-details"); !strings.Contains(got, `bidi \u202eabc\u200b`) {
		t.Errorf("the record's details %q", got)
	}
	if n := eval[int](p, fmt.Sprintf(`document.querySelectorAll('%s a, %s img, %s script, %s svg, %s iframe').length`, recent, recent, recent, recent, recent)); n != 0 {
		t.Errorf("%d links, images, scripts or frames in the record", n)
	}
	if hidden := eval[string](p, fmt.Sprintf(`(document.querySelector('%s .record-body').textContent.match(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\u2028\u2029\ufeff]/gu) || []).map(c => 'U+' + c.codePointAt(0).toString(16)).join(' ')`, recent)); hidden != "" {
		t.Errorf("hidden characters in the record: %s", hidden)
	}
	// Kept sleep, as TestXSS's: an injected handler fires no event to
	// wait for; this moment lets one that slipped past the checks above
	// show in window.__xss or the CSP log.
	time.Sleep(300 * time.Millisecond)
	if v := eval[string](p, `String(window.__xss)`); v != "undefined" {
		t.Fatalf("the server's text ran: window.__xss = %s", v)
	}
	if v := eval[[]string](p, `window.__csp`); len(v) > 0 {
		t.Fatalf("CSP violations: %q", v)
	}
}
