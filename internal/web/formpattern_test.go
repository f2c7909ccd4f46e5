package web_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// patternCases are patterns with a value each (JSON) where Go's regexp, the
// server's, and JavaScript's RegExp disagree, and some where they agree: '.'
// against \r, U+2028 and U+2029; \s and \S; \w and \b on non-ASCII letters
// and under (?i); ^ and $ with line breaks, in multi-line mode or not; a
// letter newer than Go's Unicode tables; case folding.
var patternCases = []struct{ pattern, value string }{
	{`^.$`, `"\r"`}, {`^.$`, `"\u2028"`}, {`^.$`, `"\u2029"`}, {`^.$`, `"\n"`}, {`^a.b$`, `"a\u0085b"`},
	{`^\s$`, `"\u000b"`}, {`^\s$`, `"\u00a0"`}, {`^\s$`, `"\u2003"`}, {`^\s$`, `"\ufeff"`}, {`^\S$`, `"\u00a0"`},
	{`^\w+$`, `"é"`}, {`^\w+$`, `"abc"`}, {`(?i)^\w$`, `"ſ"`}, {`(?i)^\w$`, `"\u212a"`}, {`^\W$`, `"é"`},
	{`\bé`, `"aé"`}, {`a\b`, `"aé"`}, {`(?i)\bk`, `"\u212ak"`}, {`(?i)^k$`, `"\u212a"`},
	{`^a$`, `"a\n"`}, {`(?m)^a$`, `"a\rb"`}, {`(?m)^b`, `"a\rb"`}, {`(?m)^a$`, `"a\u2028b"`}, {`(?m)^b$`, `"a\u2029b"`},
	{`(?m)a$`, `"a\nb"`}, {`(?s)^.$`, `"\n"`},
	{`^\p{L}$`, `"\u1c89"`}, {`^\d+$`, `"١٢"`}, {`(?i)^σ$`, `"ς"`}, {`(?i)^ß$`, `"ẞ"`},
}

// patternField is the schema of a text field with pattern pat.
func patternField(pat string) string {
	b, _ := json.Marshal(map[string]string{"type": "string", "pattern": pat})
	return string(b)
}

// TestFormPatternStaysResponsive: a pattern JavaScript's engine would
// backtrack on for hours with the default given (^(.+)+$ on 40 letters and a
// U+2028, which Go's '.' matches and JavaScript's does not: issue 38; three
// minutes at 34 letters, twice as long for each letter more) leaves the
// page free the moment Submit is pressed, and the server stores the answer.
func TestFormPatternStaysResponsive(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	value := strings.Repeat("a", 40) + "\u2028"
	f, _ := json.Marshal(map[string]any{"type": "string", "title": "Note", "pattern": `^(.+)+$`, "default": value})
	a := createForm(t, srv, "s-hostile", `{"type":"object","properties":{"note":`+string(f)+`}}`)
	p := openInbox(t, srv, "/")
	p.waitFor(fmt.Sprintf(`document.querySelector('%s .form-fields') !== null`, card(a.ID)))
	// DevTools has the click and then the evaluation done only when the
	// page's script is not running: a page busy matching answers when
	// done, or past the step's deadline, not now.
	ctx, cancel := p.step()
	err := chromedp.Do(ctx, chromedp.Click(button(a.ID, "Submit")))
	if err == nil {
		_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`document.body !== null`))
	}
	cancel()
	if err != nil {
		t.Fatalf("the page did not answer after Submit: %v", err)
	}
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') === null`, card(a.ID)))
	content, _ := json.Marshal(map[string]string{"note": value})
	wantAnswer(t, show(t, srv, a.ID), askd.StatusAnswered, `{"action":"accept","content":`+string(content)+`}`)
}

// TestFormPatternVerdicts: on patterns Go and JavaScript may read otherwise
// (patternCases), what the card says is what the server says
// (askd.FormSchema.Check): after Submit each value Go refuses has the
// server's words beside its field and no other field has any, nothing is
// stored, and what was typed stays; with those fields emptied, Submit
// stores the rest as typed. Values with a line break are left out: a
// one-line input cannot hold one (TestFormChecksMatchServer has them).
func TestFormPatternVerdicts(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	p := openInbox(t, srv, "/")
	type entry struct {
		name, pattern, value string // value: JSON
		typed                string // as Go reads the value
	}
	var cases []entry
	for _, c := range patternCases {
		var s string
		if err := json.Unmarshal([]byte(c.value), &s); err != nil {
			t.Fatalf("value %s: %v", c.value, err)
		}
		if !strings.ContainsAny(s, "\r\n") {
			cases = append(cases, entry{fmt.Sprintf("c%d", len(cases)), c.pattern, c.value, s})
		}
	}
	// At most ten fields to a form: the server names ten problems at most.
	for start := 0; start < len(cases); start += 10 {
		chunk := cases[start:min(start+10, len(cases))]
		t.Run(chunk[0].name, func(t *testing.T) {
			p := p.on(t)
			var props []string
			for _, c := range chunk {
				props = append(props, fmt.Sprintf("%q:%s", c.name, patternField(c.pattern)))
			}
			schema := `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
			s, err := askd.ParseFormSchema(json.RawMessage(schema))
			if err != nil {
				t.Fatal(err)
			}
			a := createForm(t, srv, "s-pattern-"+chunk[0].name, schema)
			p.waitFor(fmt.Sprintf(`document.querySelector('%s .form-fields') !== null`, card(a.ID)))

			// What the server says of each value, and what it stores of
			// those it takes.
			refused, kept := map[string]string{}, map[string]any{}
			for _, c := range chunk {
				if err := s.Check(map[string]any{c.name: c.typed}); err != nil {
					refused[c.name] = strings.TrimPrefix(askd.ErrorMessage(err), c.name+": ")
				} else {
					kept[c.name] = c.typed
				}
			}
			var set []string
			for _, c := range chunk {
				set = append(set, fmt.Sprintf(`[%q, %s]`, field(a.ID, c.name)+" input", c.value))
			}
			typed := `[` + strings.Join(set, ",") + `].every(([sel, v]) => { const e = document.querySelector(sel); e.value = v; e.dispatchEvent(new Event('input', { bubbles: true })); e.dispatchEvent(new Event('change', { bubbles: true })); return e.value === v })`
			if !eval[bool](p, typed) {
				t.Fatal("an input did not take its value as given")
			}
			// submit presses Enter in the first field and waits for the
			// card to leave, or for a refusal: the page's own (its hint)
			// or the server's (the card's error line). It reports
			// whether the card left.
			submit := func() bool {
				p.do(chromedp.Focus(chromedp.CSS(field(a.ID, chunk[0].name)+" input")), chromedp.KeyEvent(kb.Enter))
				p.waitFor(fmt.Sprintf(`(c => !c || c.querySelector('.submit-hint').textContent !== '' || !c.querySelector('.card-error').hidden)(document.querySelector('%s'))`, card(a.ID)))
				return eval[bool](p, fmt.Sprintf(`document.querySelector('%s') === null`, card(a.ID)))
			}
			left := submit()
			if len(refused) > 0 {
				if left {
					t.Fatalf("the card took values the server refuses: %q", refused)
				}
				if got := fieldErrors(p, a.ID); fmt.Sprint(got) != fmt.Sprint(refused) {
					t.Errorf("beside the fields %q (the card says %q)\nthe server says %q", got, p.text(card(a.ID)+" .card-error"), refused)
				}
				if cur := show(t, srv, a.ID); cur.Status != askd.StatusPending || cur.Answer != nil {
					t.Fatalf("after the server refused: %s %+v", cur.Status, cur.Answer)
				}
				for _, c := range chunk {
					if got := eval[string](p, fmt.Sprintf(`document.querySelector('%s input').value`, field(a.ID, c.name))); got != c.typed {
						t.Errorf("%s: what was typed is now %q", c.name, got)
					}
				}
				for name := range refused {
					setValue(p, field(a.ID, name)+" input", "")
				}
				left = submit()
			}
			if !left {
				t.Fatalf("the card did not send values the server takes: beside the fields %q, hint %q", fieldErrors(p, a.ID), p.text(card(a.ID)+" .submit-hint"))
			}
			want := map[string]any{"action": "accept"}
			if len(kept) > 0 {
				want["content"] = kept
			}
			w, _ := json.Marshal(want)
			wantAnswer(t, show(t, srv, a.ID), askd.StatusAnswered, string(w))
		})
	}
}
