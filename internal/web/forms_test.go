package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// everyField is a form schema with a field of every kind there is (SPEC
// §9), some required, some with defaults, titled and not.
const everyField = `{"type":"object","properties":{` +
	`"name":{"type":"string","title":"Full name","description":"As on the badge","minLength":2,"maxLength":40},` +
	`"email":{"type":"string","format":"email","default":"a@example.com"},` +
	`"site":{"type":"string","title":"Website","format":"uri"},` +
	`"day":{"type":"string","title":"Start date","format":"date","default":"2026-12-31"},` +
	`"at":{"type":"string","title":"Meeting","format":"date-time","default":"2026-12-31T09:30:00Z"},` +
	`"code":{"type":"string","title":"Code","pattern":"^[A-Z]{3}$"},` +
	`"integer":{"type":"integer","minimum":1,"maximum":100,"default":42},` +
	`"ratio":{"type":"number","title":"Ratio","minimum":0,"maximum":1000},` +
	`"check":{"type":"boolean","title":"Send a copy","default":true},` +
	`"color":{"type":"string","enum":["red","green"],"enumNames":["Red","Green"],"default":"green"},` +
	`"size":{"type":"string","title":"Size","oneOf":[{"const":"s","title":"Small"},{"const":"m","title":"Medium"},{"const":"l","title":"Large"}]},` +
	`"region":{"type":"string","title":"Region","enum":["eu-west-1","eu-central-1","us-east-1","us-west-2","ap-south-1","sa-east-1"],"default":"us-east-1"},` +
	`"pets":{"type":"array","title":"Pets","items":{"anyOf":[{"const":"cat","title":"Cat"},{"const":"dog","title":"Dog"},{"const":"fish","title":"Fish"}]},"minItems":1,"maxItems":2,"default":["dog"]},` +
	`"tags":{"type":"array","items":{"enum":["a","b"]}}` +
	`},"required":["name","integer","pets"]}`

// everyFieldOrder is everyField's fields in the order given.
var everyFieldOrder = []string{"name", "email", "site", "day", "at", "code", "integer", "ratio", "check", "color", "size", "region", "pets", "tags"}

const formMessage = "Please provide inputs for the following fields:\nsecond line of the message"

// createForm creates a form ask of schema in session, as the MCP server
// "everything" asks it.
func createForm(t *testing.T, srv *testserver.Server, session, schema string) *askd.Ask {
	t.Helper()
	return createFor(t, srv, session, &askd.AskInput{Kind: askd.KindForm, Title: formMessage, Source: "everything", Schema: json.RawMessage(schema)}, 0)
}

// field is the selector of the box of field name on ask id's card.
func field(id int64, name string) string {
	return fmt.Sprintf(`%s .field[data-field="%s"]`, card(id), name)
}

// fieldErrors reads the problems shown beside the fields of ask id's card:
// field name → words, for the fields showing one.
func fieldErrors(p *tab, id int64) map[string]string {
	p.t.Helper()
	return eval[map[string]string](p, fmt.Sprintf(`Object.fromEntries([...document.querySelectorAll('%s .field')].filter(f => !f.querySelector('.field-error').hidden).map(f => [f.dataset.field, f.querySelector('.field-error').textContent]))`, card(id)))
}

// setValue sets the value of the control sel matches as a person's typing
// would leave it, and says so (input and change events).
func setValue(p *tab, sel, value string) {
	p.t.Helper()
	q, _ := json.Marshal(sel)
	v, _ := json.Marshal(value)
	eval[bool](p, fmt.Sprintf(`(e => { e.value = %s; e.dispatchEvent(new Event('input', { bubbles: true })); e.dispatchEvent(new Event('change', { bubbles: true })); return true })(document.querySelector(%s))`, v, q))
}

// typeInto replaces the text of the input sel matches by typing s.
func typeInto(p *tab, sel, s string) {
	p.t.Helper()
	p.do(chromedp.Focus(chromedp.CSS(sel)))
	eval[bool](p, fmt.Sprintf(`document.querySelector(%q).select(), true`, sel))
	p.do(chromedp.KeyEvent(kb.Backspace))
	if s != "" {
		p.do(chromedp.SendKeys(chromedp.CSS(sel), s))
	}
}

func show(t *testing.T, srv *testserver.Server, id int64) *askd.Ask {
	t.Helper()
	a, err := srv.Human().Show(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return &a.Ask
}

// TestFormCardControls: every kind of field gets its own control, labelled
// by its title (else its name), described, marked when required, saying
// what it takes, and filled with its default; the message keeps its lines;
// the card says who asks and how long they have waited.
func TestFormCardControls(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	a := createForm(t, srv, "s-form", everyField)
	p := openInbox(t, srv, "/")
	p.waitFor(fmt.Sprintf(`document.querySelector('%s .form-fields') !== null`, card(a.ID)))

	type control struct {
		label, desc, hint string
		required          bool
		what              string // the control, as the page describes it below
	}
	// describe says what a field's control is: its tag, type and the
	// attributes that matter, its value, and for a group each choice.
	const describe = `(f => {
		const one = e => e.tagName === 'SELECT'
			? 'select[' + [...e.options].map(o => (o.selected ? '*' : '') + o.textContent).join('|') + ']'
			: e.type + (e.getAttribute('role') ? '/' + e.getAttribute('role') : '') +
				['min', 'max', 'step'].filter(k => e.hasAttribute(k)).map(k => ' ' + k + '=' + e.getAttribute(k)).join('') +
				(e.type === 'checkbox' || e.type === 'radio' ? (e.checked ? ' on' : ' off') : ' "' + e.value + '"');
		const group = f.querySelector('.choices');
		if (group) return [...group.querySelectorAll('label.choice')].map(l => l.textContent + ':' + one(l.querySelector('input'))).join(', ');
		return one(f.querySelector('input, select'));
	})`
	// The default meeting in the browser's local time, as its input writes
	// it (seconds left out when they are 0).
	local := eval[string](p, `(d => { const e = document.createElement('input'); e.type = 'datetime-local'; e.step = 1; e.value = d.getFullYear() + '-' + String(d.getMonth() + 1).padStart(2, '0') + '-' + String(d.getDate()).padStart(2, '0') + 'T' + [d.getHours(), d.getMinutes(), d.getSeconds()].map(n => String(n).padStart(2, '0')).join(':'); return e.value })(new Date('2026-12-31T09:30:00Z'))`)
	want := map[string]control{
		"name":    {"Full name", "As on the badge", "2 to 40 characters", true, `text ""`},
		"email":   {"email", "", "An e-mail address", false, `email "a@example.com"`},
		"site":    {"Website", "", "A URI, such as https://example.com/x", false, `url ""`},
		"day":     {"Start date", "", "", false, `date "2026-12-31"`},
		"at":      {"Meeting", "", "Your local time (UTC", false, `datetime-local step=1 "` + local + `"`},
		"code":    {"Code", "", "Matching ^[A-Z]{3}$", false, `text ""`},
		"integer": {"integer", "", "A whole number from 1 to 100", true, `number min=1 max=100 step=1 "42"`},
		"ratio":   {"Ratio", "", "A number from 0 to 1000", false, `number min=0 max=1000 step=any ""`},
		"check":   {"Send a copy", "", "", false, `checkbox/switch on`},
		"color":   {"color", "", "", false, `Red:radio off, Green:radio on`},
		"size":    {"Size", "", "", false, `Small:radio off, Medium:radio off, Large:radio off`},
		"region":  {"Region", "", "", false, `select[— none —|eu-west-1|eu-central-1|*us-east-1|us-west-2|ap-south-1|sa-east-1]`},
		"pets":    {"Pets", "", "Choose 1 to 2", true, `Cat:checkbox off, Dog:checkbox on, Fish:checkbox off`},
		"tags":    {"tags", "", "Choose any", false, `a:checkbox off, b:checkbox off`},
	}
	if got := eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll('%s .field')].map(f => f.dataset.field)`, card(a.ID))); fmt.Sprint(got) != fmt.Sprint(everyFieldOrder) {
		t.Errorf("fields in order %q, want %q", got, everyFieldOrder)
	}
	for _, name := range everyFieldOrder {
		w := want[name]
		f := field(a.ID, name)
		v := eval[[]string](p, fmt.Sprintf(`(f => [
			[...f.querySelector('.field-label').childNodes].filter(n => n.nodeType === 3 || !n.classList.contains('req')).map(n => n.textContent).join(''),
			f.querySelector('.field-desc')?.textContent ?? '',
			f.querySelector('.field-hint')?.textContent ?? '',
			String(f.querySelector('.req') !== null),
			%s(f),
		])(document.querySelector('%s'))`, describe, f))
		if v[0] != w.label || v[1] != w.desc || !strings.HasPrefix(v[2], w.hint) || (w.hint == "" && v[2] != "") || v[3] != fmt.Sprint(w.required) || v[4] != w.what {
			t.Errorf("field %s: label %q, description %q, hint %q, required %s, control %s\nwant %q, %q, %q…, %v, %s", name, v[0], v[1], v[2], v[3], v[4], w.label, w.desc, w.hint, w.required, w.what)
		}
	}
	// A <label> names every control: its own, or its group's legend.
	if n := eval[int](p, fmt.Sprintf(`[...document.querySelectorAll('%s .form-fields input, %s .form-fields select')].filter(e => !e.labels.length).length`, card(a.ID), card(a.ID))); n != 0 {
		t.Errorf("%d controls without a label", n)
	}

	// The message keeps its lines, as text; who asks, and for how long.
	msg := card(a.ID) + " .form-message"
	if got := p.text(msg); got != formMessage {
		t.Errorf("message %q", got)
	}
	if ws := eval[string](p, fmt.Sprintf(`getComputedStyle(document.querySelector('%s')).whiteSpace`, msg)); ws != "pre-wrap" {
		t.Errorf("message white-space %q: its lines would run together", ws)
	}
	if got := p.text(card(a.ID) + " .form-from span"); got != "asked by everything through s-form" {
		t.Errorf("from %q", got)
	}
	if got := p.text(card(a.ID) + " .waited"); !regexp.MustCompile(`^0:\d\d$`).MatchString(got) {
		t.Errorf("waited %q", got)
	}
	if p.text(card(a.ID)+" .meta .kind") != "Form" {
		t.Errorf("kind chip %q", p.text(card(a.ID)+" .meta .kind"))
	}
	// Past a minute, it says the MCP server may have stopped waiting.
	if eval[bool](p, fmt.Sprintf(`getComputedStyle(document.querySelector('%s .wait-note')).display !== 'none'`, card(a.ID))) {
		t.Error("the may-have-stopped note shows at once")
	}
	eval[bool](p, fmt.Sprintf(`askdClock.set(%d), true`, a.CreatedAt.Add(75*time.Second).UnixMilli()))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s .waited').textContent === '1:15'`, card(a.ID)))
	if !eval[bool](p, fmt.Sprintf(`getComputedStyle(document.querySelector('%s .wait-note')).display !== 'none'`, card(a.ID))) {
		t.Error("after 75 s the card does not say the MCP server may have stopped waiting")
	}
	// Clear empties the optional choice that has a default.
	if got := visibleButtons(p, a.ID); fmt.Sprint(got) != "[Clear Submit Decline]" {
		t.Errorf("buttons %q", got)
	}
	if n := eval[int](p, `document.querySelectorAll('main a').length`); n != 0 {
		t.Errorf("%d links in the page", n)
	}
	if m := leaked.FindAllString(eval[string](p, pageWords), -1); m != nil {
		t.Errorf("the page shows %q", m)
	}

	// Tab goes through the fields in the form's order, then Submit and
	// Decline.
	p.do(chromedp.Focus(chromedp.CSS(field(a.ID, "name") + " input")))
	var order []string
	for range 60 {
		at := eval[string](p, `(e => e.closest('.field')?.dataset.field ?? e.textContent)(document.activeElement)`)
		if len(order) == 0 || order[len(order)-1] != at {
			order = append(order, at)
		}
		if at == "Decline" {
			break
		}
		p.do(chromedp.KeyEvent(kb.Tab))
	}
	if want := append(append([]string{}, everyFieldOrder...), "Submit", "Decline"); fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("Tab order %q\nwant %q", order, want)
	}
}

// TestFormRefusesBadValues: a value the server would refuse is shown beside
// its field in the server's own words, and nothing is sent; what the page
// cannot check, the server refuses, and its words go beside the field too.
func TestFormRefusesBadValues(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	a := createForm(t, srv, "s-bad", everyField)
	p := openInbox(t, srv, "/")
	p.waitFor(fmt.Sprintf(`document.querySelector('%s .form-fields') !== null`, card(a.ID)))
	in := func(name string) string { return field(a.ID, name) + " input" }
	typeInto(p, in("name"), "A")
	typeInto(p, in("email"), "nope")
	typeInto(p, in("integer"), "142")
	typeInto(p, in("ratio"), "2.5")
	typeInto(p, in("code"), "abc")
	p.do(chromedp.Click(chromedp.CSS(field(a.ID, "pets") + ` input[value="1"]`))) // Dog off: none chosen
	// Leaving a field checks it at once.
	p.waitFor(fmt.Sprintf(`!document.querySelector('%s .field-error').hidden`, field(a.ID, "name")))
	p.do(chromedp.Focus(chromedp.CSS(in("code"))), chromedp.KeyEvent(kb.Enter))
	p.waitFor(fmt.Sprintf(`!document.querySelector('%s .field-error').hidden`, field(a.ID, "pets")))

	// The server's words for the same content, but for the pattern's: the
	// page leaves a pattern to the server (TestFormPatternVerdicts).
	content := map[string]any{"name": "A", "email": "nope", "day": "2026-12-31", "at": "2026-12-31T09:30:00Z", "code": "abc",
		"integer": 142.0, "ratio": 2.5, "check": true, "color": "green", "region": "us-east-1", "pets": []any{}}
	_, err := srv.Human().Answer(context.Background(), a.ID, &askd.Answer{Content: content})
	if askd.ErrorCode(err) != askd.EMISMATCH {
		t.Fatalf("the server took the bad answer: %v", err)
	}
	server := map[string]string{}
	for _, pr := range strings.Split(askd.ErrorMessage(err), "; ") {
		name, rule, _ := strings.Cut(pr, ": ")
		server[name] = rule
	}
	if server["code"] == "" {
		t.Errorf("the server took code %q", content["code"])
	}
	delete(server, "code")
	got := fieldErrors(p, a.ID)
	if len(server) != 4 || fmt.Sprint(got) != fmt.Sprint(server) {
		t.Errorf("beside the fields %q\nthe server says %q", got, server)
	}
	if f := eval[string](p, `document.activeElement.closest('.field')?.dataset.field ?? ''`); f != "name" {
		t.Errorf("focus on %q, want the first field to fix", f)
	}
	if got := p.text(card(a.ID) + " .form-actions .submit-hint"); got != "Fix 4 fields marked to submit" {
		t.Errorf("hint %q", got)
	}
	// Nor does Ctrl+Enter send it.
	p.do(chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	if cur := show(t, srv, a.ID); cur.Status != askd.StatusPending || cur.Answer != nil {
		t.Fatalf("after refused answers: %s %+v", cur.Status, cur.Answer)
	}
	// Fixing a field clears its problem as the person types.
	typeInto(p, in("name"), "Bot")
	p.waitFor(fmt.Sprintf(`document.querySelector('%s .field-error').hidden`, field(a.ID, "name")))

	// A pattern: the page lets the value through, the server refuses it,
	// and its words go beside the field.
	b := createForm(t, srv, "s-go-pattern", `{"type":"object","properties":{"word":{"type":"string","title":"One word","pattern":"^\\pL+$"},"n":{"type":"integer","maximum":5}}}`)
	p.waitFor(fmt.Sprintf(`document.querySelector('%s .form-fields') !== null`, card(b.ID)))
	typeInto(p, field(b.ID, "word")+" input", "abc1")
	p.do(chromedp.Click(button(b.ID, "Submit")))
	p.waitFor(fmt.Sprintf(`!document.querySelector('%s .field-error').hidden`, field(b.ID, "word")))
	if got := fieldErrors(p, b.ID); fmt.Sprint(got) != `map[word:"abc1" does not match the pattern ^\pL+$]` {
		t.Errorf("the server's refusal shows as %q", got)
	}
	if got := p.text(card(b.ID) + " .card-error"); got != "Not sent: askd refused the fields marked above." {
		t.Errorf("card error %q", got)
	}
	if cur := show(t, srv, b.ID); cur.Status != askd.StatusPending || cur.Answer != nil {
		t.Fatalf("after the server refused: %s %+v", cur.Status, cur.Answer)
	}
}

// TestFormAnswerReachesStore: what the person enters is what the store
// holds (numbers as numbers, choices as their const values, defaults as
// given), and Recent and History say it by field title.
func TestFormAnswerReachesStore(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	a := createForm(t, srv, "s-good", everyField)
	p := openInbox(t, srv, "/")
	p.waitFor(fmt.Sprintf(`document.querySelector('%s .form-fields') !== null`, card(a.ID)))
	in := func(name string) string { return field(a.ID, name) + " input" }
	typeInto(p, in("name"), "Release Bot")
	typeInto(p, in("site"), "https://example.com/x")
	typeInto(p, in("integer"), "7")
	typeInto(p, in("ratio"), "2.5")
	typeInto(p, in("code"), "ABC")
	p.do(chromedp.Click(chromedp.CSS(in("check"))))
	p.do(chromedp.Click(chromedp.CSS(field(a.ID, "color") + ` input[value="0"]`)))
	p.do(chromedp.Click(chromedp.CSS(field(a.ID, "size") + ` input[value="2"]`)))
	p.do(chromedp.Click(chromedp.CSS(field(a.ID, "pets") + ` input[value="0"]`)))
	setValue(p, field(a.ID, "region")+" select", "1")
	// The meeting moved, in the browser's local time; sent with its offset.
	setValue(p, in("at"), "2027-01-02T03:04")
	offset := eval[int](p, `0 - new Date('2027-01-02T03:04:00').getTimezoneOffset()`)
	at := "2027-01-02T03:04:00Z"
	if offset != 0 {
		sign := "+"
		if offset < 0 {
			sign, offset = "-", -offset
		}
		at = fmt.Sprintf("2027-01-02T03:04:00%s%02d:%02d", sign, offset/60, offset%60)
	}
	// Enter in a field submits.
	p.do(chromedp.Focus(chromedp.CSS(in("code"))), chromedp.KeyEvent(kb.Enter))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') === null`, card(a.ID)))
	got := show(t, srv, a.ID)
	wantAnswer(t, got, askd.StatusAnswered, `{"action":"accept","content":{"name":"Release Bot","email":"a@example.com","site":"https://example.com/x",`+
		`"day":"2026-12-31","at":"`+at+`","code":"ABC","integer":7,"ratio":2.5,"check":false,"color":"red","size":"l","region":"eu-central-1","pets":["cat","dog"]}}`)
	if _, ok := got.Answer.Content["integer"].(float64); !ok {
		t.Errorf("integer stored as %T", got.Answer.Content["integer"])
	}
	if got.SettledBy != srv.HumanName {
		t.Errorf("settled by %q", got.SettledBy)
	}

	// Recent says what was entered, by field title.
	row := fmt.Sprintf(`#recent .recent-item[data-id="%d"]`, a.ID)
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') !== null`, row))
	if got := p.text(row + " .what"); !strings.HasPrefix(got, "submitted: Full name: Release Bot · email: a@example.com · Website: https://example.com/x") ||
		!strings.Contains(got, "Send a copy: no · color: Red · Size: Large · Region: eu-central-1 · Pets: Cat, Dog") {
		t.Errorf("Recent says %q", got)
	}
	// History's record: the message, who asked, each field and its value.
	p.do(chromedp.Click(chromedp.CSS(`#views .view-link[data-view="history"]`)))
	rec := fmt.Sprintf(`#history .recent-item[data-id="%d"]`, a.ID)
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') !== null`, rec))
	eval[bool](p, fmt.Sprintf(`document.querySelector('%s details.record').open = true`, rec))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s .rec-form') !== null`, rec))
	pairs := eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll('%s .rec-form dt')].map(dt => dt.textContent + '=' + dt.nextElementSibling.textContent)`, rec))
	if want := "[Full name=Release Bot email=a@example.com Website=https://example.com/x Start date=2026-12-31 Meeting=" + at +
		" Code=ABC integer=7 Ratio=2.5 Send a copy=no color=Red Size=Large Region=eu-central-1 Pets=Cat, Dog tags=—]"; fmt.Sprint(pairs) != want {
		t.Errorf("record %q\nwant %s", pairs, want)
	}
	if got := p.text(rec + " .record-body"); !strings.Contains(got, "asked by everything through s-good") || !strings.Contains(got, formMessage) {
		t.Errorf("record %q", got)
	}
	// The History view filters by the kind.
	p.do(chromedp.SetValue(chromedp.CSS(`#history-filters select[name=kind]`), "form"))
	eval[bool](p, `document.querySelector('#history-filters select[name=kind]').dispatchEvent(new Event('input', { bubbles: true }))`)
	p.waitFor(`location.search.includes('kind=form') && document.querySelectorAll('#history .recent-item').length === 1`)
}

// TestFormDecline: Decline settles the form as the person's answer, with
// action decline; Ctrl+Enter submits; an empty optional form sends {}.
func TestFormDecline(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	a := createForm(t, srv, "s-decline", everyField)
	b := createForm(t, srv, "s-empty", `{"type":"object","properties":{"note":{"type":"string"},"n":{"type":"number"}}}`)
	p := openInbox(t, srv, "/")
	p.waitFor(fmt.Sprintf(`document.querySelector('%s .form-fields') !== null`, card(a.ID)))
	p.do(chromedp.Click(button(a.ID, "Decline")))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') === null`, card(a.ID)))
	got := show(t, srv, a.ID)
	wantAnswer(t, got, askd.StatusAnswered, `{"action":"decline"}`)
	if got.SettledBy != srv.HumanName {
		t.Errorf("settled by %q", got.SettledBy)
	}
	row := fmt.Sprintf(`#recent .recent-item[data-id="%d"]`, a.ID)
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') !== null`, row))
	if got := p.text(row + " .what"); got != "declined" {
		t.Errorf("Recent says %q", got)
	}

	p.do(chromedp.Focus(chromedp.CSS(field(b.ID, "note")+" input")), chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') === null`, card(b.ID)))
	wantAnswer(t, show(t, srv, b.ID), askd.StatusAnswered, `{"action":"accept"}`)
}

// TestFormURL: url mode shows the whole address as text, never a link,
// with its host set apart; Copy; Done answers the MCP server accept and
// Decline decline.
func TestFormURL(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	caller := askd.Caller{Name: srv.AgentName, Role: askd.RoleAgent, Session: "s-url"}
	const addr = "https://github.com@evil.example/login/device?user_code=WDJB-MJHT&next=%2Fsettings#top"
	res := make(chan app.ElicitResult, 1)
	go func() {
		r, err := srv.App.Elicit(context.Background(), caller, &app.Elicitation{Server: "github", Message: "Sign in to continue", Mode: "url", URL: addr})
		if err != nil {
			t.Error(err)
		}
		res <- r
	}()
	a := srv.Pending(t, "s-url", 1)[0]
	plain := createFor(t, srv, "s-url-plain", &askd.AskInput{Kind: askd.KindForm, Title: "Open the dashboard", Source: "grafana", URL: "http://10.0.0.7:3000/d/abc"}, 0)
	p := openInbox(t, srv, "/")
	p.waitFor(fmt.Sprintf(`document.querySelector('%s .url-text') !== null`, card(a.ID)))

	if got := p.text(card(a.ID) + " .url-text"); got != addr {
		t.Errorf("address shown %q", got)
	}
	if got := p.text(card(a.ID) + " .url-host"); got != "host: evil.examplewhat comes before the @ is not the host" {
		t.Errorf("host line %q: the host the address really opens must stand apart", got)
	}
	if got := p.text(card(plain.ID) + " .url-host"); got != "host: 10.0.0.7:3000http: not encrypted" {
		t.Errorf("plain http host line %q", got)
	}
	// Not a link anywhere: no <a>, nothing holding the address as a target.
	if n := eval[int](p, `document.querySelectorAll('main a, main [href], main [src], main [action]').length + [...document.querySelectorAll('main *')].filter(e => [...e.attributes].some(x => x.value.includes('evil.example'))).length`); n != 0 {
		t.Errorf("%d elements make the address a link", n)
	}
	if got := visibleButtons(p, a.ID); fmt.Sprint(got) != "[Copy Done Decline]" {
		t.Errorf("buttons %q", got)
	}
	p.do(chromedp.Click(button(a.ID, "Copy")))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s .copy-note').textContent !== ''`, card(a.ID)))
	if got := p.text(card(a.ID) + " .copy-note"); got != "Copied" && !strings.HasPrefix(got, "Selected: press") {
		t.Errorf("after Copy: %q", got)
	} else if got != "Copied" && eval[string](p, `getSelection().toString()`) != addr {
		t.Errorf("no clipboard, and the address is not selected either: %q", eval[string](p, `getSelection().toString()`))
	}

	// Done, by its key: the MCP server is answered accept.
	p.do(chromedp.Focus(chromedp.CSS(card(a.ID))), chromedp.KeyEvent("1"))
	select {
	case r := <-res:
		if r.Action != askd.FormAccept || r.Content != nil {
			t.Errorf("the MCP server was answered %+v", r)
		}
	case <-time.After(time.Minute):
		t.Fatal("Done did not answer the MCP server")
	}
	wantAnswer(t, show(t, srv, a.ID), askd.StatusAnswered, `{"action":"accept"}`)
	row := fmt.Sprintf(`#recent .recent-item[data-id="%d"]`, a.ID)
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') !== null`, row))
	if got := p.text(row + " .what"); got != "done" {
		t.Errorf("Recent says %q", got)
	}

	// The card above has left: wait for this one to stop moving.
	p.steady(button(plain.ID, "Decline"))
	p.do(chromedp.Click(button(plain.ID, "Decline")))
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') === null`, card(plain.ID)))
	wantAnswer(t, show(t, srv, plain.ID), askd.StatusAnswered, `{"action":"decline"}`)
}

// TestFormLive: a form answered on one page leaves the other's inbox at
// once; one withdrawn while a person fills it in says the agent stopped
// waiting, and so does its record.
func TestFormLive(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	a := createForm(t, srv, "s-live", everyField)
	p1 := openInbox(t, srv, "/")
	p2 := openInbox(t, srv, "/")
	for _, p := range []*tab{p1, p2} {
		p.waitFor(fmt.Sprintf(`document.querySelector('%s .form-fields') !== null`, card(a.ID)))
	}
	typeInto(p1, field(a.ID, "name")+" input", "Bot")
	p1.do(chromedp.Click(button(a.ID, "Submit")))
	p2.waitFor(fmt.Sprintf(`document.querySelector('%s') === null && document.querySelector('#recent .recent-item[data-id="%d"]') !== null`, card(a.ID), a.ID))
	if got := p2.text(fmt.Sprintf(`#recent .recent-item[data-id="%d"] .what`, a.ID)); !strings.HasPrefix(got, "submitted: Full name: Bot · ") {
		t.Errorf("the other page's Recent says %q", got)
	}

	// The MCP server's request goes away while the second person types.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := srv.App.Elicit(ctx, askd.Caller{Name: srv.AgentName, Role: askd.RoleAgent, Session: "s-gone"},
			&app.Elicitation{Server: "everything", Message: "Pick one", Schema: json.RawMessage(everyField)})
		done <- err
	}()
	b := srv.Pending(t, "s-gone", 1)[0]
	p2.waitFor(fmt.Sprintf(`document.querySelector('%s .form-fields') !== null`, card(b.ID)))
	typeInto(p2, field(b.ID, "name")+" input", "Half typed")
	cancel()
	<-done
	p2.waitFor(fmt.Sprintf(`document.querySelector('%s .banner-text')?.textContent === 'Withdrawn — the agent stopped waiting'`, card(b.ID)))
	// The first page was not typing in it: the card leaves.
	p1.waitFor(fmt.Sprintf(`document.querySelector('%s') === null && document.querySelector('#recent .recent-item[data-id="%d"]') !== null`, card(b.ID), b.ID))
	p1.do(chromedp.Click(chromedp.CSS(`#views .view-link[data-view="history"]`)))
	rec := fmt.Sprintf(`#history .recent-item[data-id="%d"]`, b.ID)
	p1.waitFor(fmt.Sprintf(`document.querySelector('%s') !== null`, rec))
	eval[bool](p1, fmt.Sprintf(`document.querySelector('%s details.record').open = true`, rec))
	p1.waitFor(fmt.Sprintf(`document.querySelector('%s .timeline') !== null`, rec))
	if got := p1.text(rec + " .record-outcome"); got != "Withdrawn — the agent stopped waiting" {
		t.Errorf("record says %q", got)
	}
	if got := p1.text(rec + " .timeline"); !strings.Contains(got, "Withdrawn by "+srv.AgentName+" — the agent stopped waiting") {
		t.Errorf("timeline %q", got)
	}
}

// TestFormChecksMatchServer: the page's checks say what the server says
// (askd.FormSchema.Check), word for word, for values of every rule but a
// pattern, which the page leaves to the server: where only the pattern
// refuses a value, the page says nothing and Submit gets the server's words
// (TestFormPatternVerdicts). Never does the page refuse what the server
// takes, on patterns JavaScript reads otherwise (patternCases) least of all.
func TestFormChecksMatchServer(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	p := openInbox(t, srv, "/")
	type check struct{ field, value string }
	var cases []check
	add := func(field string, values ...string) {
		for _, v := range values {
			cases = append(cases, check{field, v})
		}
	}
	add(`{"type":"string","minLength":2,"maxLength":3}`, `"A"`, `"Ab"`, `"é"`, `"😀"`, `"abcd"`, `"😀😀😀😀"`, `""`, `3`)
	add(`{"type":"string","format":"email"}`, `"a@example.com"`, `"nope"`, `"a@b"`, `"a b@c.d"`, `"<a@b.c>"`, `"Bot <a@b.c>"`,
		`"a..b@c.d"`, `".a@c.d"`, `"a.@c.d"`, `"\"a\"@c.d"`, `"a@[1.2.3.4]"`, `"a@[300.1.1.1]"`, `"a@[::1]"`, `"üser@exämple.de"`,
		`" a@b.c"`, `"a@b.c "`, `"a@b.c (x)"`, `"a@"`, `"@b.c"`, `"a@b..c"`, `"a@b.c."`, `"a+tag@x.io"`, `"a\tb@c.d"`,
		`"é\u00a0\u200b😀\u007f\u0001@x"`, `"a,b@c.d"`, `"a@b,c"`)
	add(`{"type":"string","format":"uri"}`, `"https://example.com/x"`, `"example.com"`, `"http://exa mple.com"`, `"mailto:a@b.c"`,
		`"urn:isbn:123"`, `"https://example.com/%zz"`, `"https://example.com/%41"`, `"https://[::1]:8080/"`, `"https://[::1"`,
		`"http://host:port/"`, `"http://host:80/"`, `"https://user:pa@ss@host/"`, `"https://ex{ample.com/"`, `"ftp://x/y#%zz"`,
		`"1http://x"`, `"://x"`, `"h:"`, `"https://例え.jp/"`, `"https://example.com/?q=a b"`, `"https://example.com/?q=%zz"`,
		`"mailto:%zz"`, `"https://ex%41mple.com/"`, `"https://ex%C3%A9.com/"`, `"https://[1.2.3.4]/"`, `"https://a[b/"`, `"x:/%zz"`)
	add(`{"type":"string","format":"date"}`, `"2026-12-31"`, `"2026-02-29"`, `"2028-02-29"`, `"2026-13-01"`, `"2026-1-01"`,
		`"26-01-01"`, `"2026-12-31T00:00:00Z"`, `"2026-00-10"`, `"2026-04-31"`, `"+02026-12-31"`)
	add(`{"type":"string","format":"date-time"}`, `"2026-12-31T09:30:00Z"`, `"2026-12-31T09:30:00+01:00"`, `"2026-12-31T09:30:00.123Z"`,
		`"2026-12-31T09:30:00,5Z"`, `"2026-12-31T9:30:00Z"`, `"2026-12-31 09:30:00Z"`, `"2026-12-31T09:30Z"`, `"2026-12-31T24:00:00Z"`,
		`"2026-12-31T09:30:60Z"`, `"2026-12-31t09:30:00z"`, `"2026-12-31T09:30:00+24:00"`, `"2026-12-31T09:30:00+25:00"`,
		`"2026-02-30T09:30:00Z"`, `"2026-12-31T09:30:00"`, `"2026-12-31T09:30:00.Z"`, `"2026-12-31T09:30:00-07:00"`)
	add(`{"type":"string","pattern":"^[A-Z]{3}$"}`, `"ABC"`, `"abc"`, `"ABCD"`)
	add(`{"type":"string","pattern":"(?i)^abc$"}`, `"ABC"`, `"abd"`)
	add(`{"type":"string","pattern":"colou?r"}`, `"the color"`, `"the colr"`)
	add(`{"type":"string","pattern":"^[a-z]+$","minLength":3,"format":"email"}`, `"a@"`, `"AB@C.D"`, `"abcd"`)
	for _, c := range patternCases {
		add(patternField(c.pattern), c.value)
	}
	add(`{"type":"string","minLength":5,"format":"email"}`, `"a@b"`)
	add(`{"type":"integer","minimum":1,"maximum":100}`, `142`, `0`, `2.5`, `1e21`, `1e-7`, `50`, `"7"`, `true`)
	add(`{"type":"number","minimum":-0.5,"maximum":1000}`, `1234567`, `-1`, `2.5`, `1000`, `1000.0001`, `123456`)
	add(`{"type":"number","minimum":0.00001}`, `0`, `0.0001`)
	add(`{"type":"number","maximum":1e100}`, `1e101`)
	add(`{"type":"boolean"}`, `true`, `"yes"`, `0`)
	add(`{"type":"string","enum":["red","green"],"enumNames":["Red","Green"]}`, `"green"`, `"blue"`, `"Red"`, `3`, `["red"]`)
	add(`{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]}`, `"s"`, `"Small"`, `"x\ny"`)
	add(`{"type":"array","items":{"anyOf":[{"const":"cat","title":"Cat"},{"const":"dog","title":"Dog"},{"const":"fish","title":"Fish"}]},"minItems":1,"maxItems":2}`,
		`["cat"]`, `["cat","cat"]`, `[]`, `["cat","dog","fish"]`, `"cat"`, `["cow"]`, `[1]`, `["dog","cow","cat"]`)
	add(`{"type":"array","items":{"enum":["a","b"]}}`, `[]`, `["b","a"]`, `["c"]`)

	fields := make([]json.RawMessage, len(cases))
	values := make([]json.RawMessage, len(cases))
	for i, c := range cases {
		fields[i], values[i] = json.RawMessage(c.field), json.RawMessage(c.value)
	}
	fj, _ := json.Marshal(fields)
	vj, _ := json.Marshal(values)
	page := checkInPage(p, string(fj), string(vj))
	for i, c := range cases {
		s, err := askd.ParseFormSchema(json.RawMessage(`{"type":"object","properties":{"f":` + c.field + `}}`))
		if err != nil {
			t.Fatalf("%s: %v", c.field, err)
		}
		var v any
		json.Unmarshal([]byte(c.value), &v)
		want := verdict(s.Fields[0], v)
		// The pattern aside, the field takes the value: then the page says
		// nothing and the server decides.
		unpatterned := s.Fields[0]
		unpatterned.Pattern = nil
		if page[i] != want && !(page[i] == "" && verdict(unpatterned, v) == "") {
			t.Errorf("%s with %s: the page says %q, the server %q", c.field, c.value, page[i], want)
		}
	}

	// A pattern in Go's syntax that JavaScript reads otherwise or not at
	// all: the page does not guess, the server decides.
	pats := []string{`^\pL+$`, `^\z`, `[[:alpha:]]+`, `(?U)a+`, `(?P<x>a)`}
	fields = fields[:0]
	values = values[:0]
	for _, pat := range pats {
		f, _ := json.Marshal(map[string]string{"type": "string", "pattern": pat})
		fields, values = append(fields, f), append(values, json.RawMessage(`"1"`))
	}
	fj, _ = json.Marshal(fields)
	vj, _ = json.Marshal(values)
	for i, got := range checkInPage(p, string(fj), string(vj)) {
		if got != "" {
			t.Errorf("pattern %s: the page refuses \"1\" itself: %q", pats[i], got)
		}
	}
}

// verdict is what the server says of v as field f's value ("" when it
// takes it).
func verdict(f askd.FormField, v any) string {
	if err := (&askd.FormSchema{Fields: []askd.FormField{f}}).Check(map[string]any{f.Name: v}); err != nil {
		return strings.TrimPrefix(askd.ErrorMessage(err), f.Name+": ")
	}
	return ""
}

// checkInPage runs the page's own check (formcheck.js) on each field
// (a JSON list of field schemas) with its value (a JSON list), and returns
// what it says of each.
func checkInPage(p *tab, fields, values string) []string {
	p.t.Helper()
	ctx, cancel := p.step()
	defer cancel()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](fmt.Sprintf(`import(document.querySelector('link[href$="/formcheck.js"]').href).then(m => {
		const values = %s;
		return %s.map((field, i) => m.problem(m.fieldsOf({ type: 'object', properties: { f: field } })[0], values[i]));
	})`, values, fields), chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatal(err)
	}
	return got
}
