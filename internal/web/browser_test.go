package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/askd-dev/askd/internal/web"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// One Chromium serves every browser test in the package; each test gets its
// own browser context (its own cookies and cache) in a new tab.
var shared struct {
	once   sync.Once
	ctx    context.Context
	err    error
	stop   func()
	tmpDir string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.stop != nil {
		shared.stop()
	}
	os.Exit(code)
}

func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser returns the shared browser's context, starting it on first use. No
// Chromium: the test is skipped, loudly, except under CI=true where it fails.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium not found on PATH; CI must install it (apt-get install chromium)")
		}
		fmt.Fprintln(os.Stderr, "SKIP: chromium not found on PATH; the inbox browser tests did not run (apt-get install chromium)")
		t.Skip("chromium not found on PATH: browser tests skipped (CI=true makes this a failure)")
	}
	shared.once.Do(func() {
		// The profile must outlive any one test, so it is not t.TempDir;
		// TestMain removes it.
		dir, err := os.MkdirTemp("", "askd-web-profile-")
		if err != nil {
			shared.err = err
			return
		}
		shared.tmpDir = dir
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(dir),
			chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-quic", true),
			chromedp.WindowSize(1280, 900))
		actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, bcancel := chromedp.NewContext(actx)
		shared.ctx = bctx
		shared.stop = func() { bcancel(); acancel(); os.RemoveAll(dir) }
		shared.err = chromedp.Do(bctx, chromedp.Navigate("about:blank"))
	})
	if shared.err != nil {
		t.Fatalf("start chromium: %v", shared.err)
	}
	return shared.ctx
}

// startServer starts askd with the inbox on 127.0.0.1:0.
func startServer(t *testing.T, cfg app.Config) *testserver.Server {
	t.Helper()
	return testserver.Start(t, testserver.Options{
		Config: cfg,
		Inbox:  func(svc *app.Service, _ string) http.Handler { return web.New(svc) },
	})
}

// tab is one page in its own browser context.
type tab struct {
	t   *testing.T
	ctx context.Context
	srv *testserver.Server
}

// newTab opens a tab in a fresh browser context, with a detector installed
// in every document before its scripts run: it records any CSP violation
// (proof that markup or a handler was injected) in window.__csp.
func newTab(t *testing.T, srv *testserver.Server) *tab {
	t.Helper()
	// No deadline on the tab itself: a test's steps add up to more than
	// any fixed figure on a busy machine. Each step has one (stepTimeout).
	ctx, cancel := chromedp.NewContext(browser(t), chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("new tab: %v", err)
	}
	// Tabs run side by side; each keeps its own focus as if in front.
	if _, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		t.Fatalf("focus emulation: %v", err)
	}
	_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.__csp = []; document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + (e.sample || '')), true);`,
	})
	if err != nil {
		t.Fatalf("install detector: %v", err)
	}
	// The page's console errors and exceptions go to the test log.
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				fmt.Fprintf(os.Stderr, "%s: browser console: %s\n", t.Name(), m.Text)
			}
		}
	}()
	return &tab{t: t, ctx: ctx, srv: srv}
}

// signIn opens a sign-in link for the human token named human and waits for
// the inbox at path.
func (p *tab) signIn(human, path string) {
	p.t.Helper()
	p.do(chromedp.Navigate(p.srv.SignInLink(p.t, human)))
	if path != "" && path != "/" {
		p.do(chromedp.Navigate(p.srv.URL + path))
	}
	p.do(chromedp.WaitVisible(chromedp.CSS("body.ready")))
}

// browserCookie returns the tab's sign-in cookie, failing the test when it
// has none.
func (p *tab) browserCookie() *network.Cookie {
	p.t.Helper()
	res, err := chromedp.Call(p.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{p.srv.URL + "/"}})
	if err != nil {
		p.t.Fatalf("read cookies: %v", err)
	}
	for _, ck := range res.Cookies {
		if ck.Name == app.BrowserCookie {
			return ck
		}
	}
	p.t.Fatalf("no %s cookie among %d", app.BrowserCookie, len(res.Cookies))
	return nil
}

// open signs in as the test server's human and shows the inbox.
func openInbox(t *testing.T, srv *testserver.Server, path string) *tab {
	t.Helper()
	p := newTab(t, srv)
	p.signIn(srv.HumanName, path)
	return p
}

// stepTimeout bounds one browser step (an action, an evaluation, a polled
// condition): a deadline against a hung browser, generous for a busy machine.
const stepTimeout = 60 * time.Second

// step is the context of one browser step.
func (p *tab) step() (context.Context, context.CancelFunc) {
	return context.WithTimeout(p.ctx, stepTimeout)
}

func (p *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := p.step()
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

func eval[T any](p *tab, js string) T {
	p.t.Helper()
	ctx, cancel := p.step()
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// text is the text content of the element sel matches, read in one step in
// the page: a query by node id could race a re-render that replaces the node.
func (p *tab) text(sel string) string {
	p.t.Helper()
	q, _ := json.Marshal(sel)
	p.waitFor(fmt.Sprintf(`document.querySelector(%s) !== null`, q))
	ctx, cancel := p.step()
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[*string](fmt.Sprintf(`document.querySelector(%s)?.textContent ?? null`, q)))
	if err != nil {
		p.t.Fatalf("text of %s: %v", sel, err)
	}
	if v == nil {
		p.t.Fatalf("text of %s: no such element", sel)
	}
	return *v
}

// waitFor polls a JavaScript condition until it is true, for up to
// stepTimeout.
func (p *tab) waitFor(js string) {
	p.t.Helper()
	ctx, cancel := p.step()
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		p.t.Fatalf("waiting for %s: %v", js, err)
	}
}

// steady scrolls the element an XPath names into view and waits until its
// box stays put, so that a click aimed at it lands on it. Cards far down are
// laid out only once scrolled to (content-visibility), and those coming into
// view then take their real heights, moving what is near them.
func (p *tab) steady(xpath string) {
	p.t.Helper()
	q, _ := json.Marshal(xpath)
	p.waitFor(fmt.Sprintf(`(e => { if (!e) return false; e.scrollIntoView({ block: 'center' }); const r = e.getBoundingClientRect(); const box = [r.top, r.left, r.height].join(); const same = window.__steady === box; window.__steady = box; return same; })(document.evaluate(%s, document, null, 9, null).singleNodeValue)`, q))
}

func card(id int64) string { return fmt.Sprintf(`#pending .card[data-id="%d"]`, id) }

// option is an XPath to the option labelled label on ask id's card.
func option(id int64, label string) string {
	return fmt.Sprintf(`//article[@data-id="%d"]//*[contains(concat(" ", @class, " "), " opt ")][.//span[@class="opt-label" and starts-with(normalize-space(.), %s)]]`, id, xpathString(label))
}

func xpathString(s string) string {
	if !strings.Contains(s, `"`) {
		return `"` + s + `"`
	}
	parts := strings.Split(s, `"`)
	return `concat("` + strings.Join(parts, `", '"', "`) + `")`
}

// button is an XPath to the button of ask id's card that reads text (key
// hints aside).
func button(id int64, text string) string {
	q := xpathString(text)
	return fmt.Sprintf(`//article[@data-id="%d"]//button[normalize-space(.)=%s or normalize-space(text()[last()])=%s]`, id, q, q)
}

// on returns the tab reporting to t (a subtest).
func (p *tab) on(t *testing.T) *tab {
	c := *p
	c.t = t
	return &c
}

// result is what an agent's waiting call returned.
type result struct {
	ask *askd.Ask
	err error
}

// waitFor starts the agent's long poll on its ask in a goroutine.
func agentWaits(agent *client.Client, id int64) <-chan result {
	ch := make(chan result, 1)
	go func() {
		a, err := agent.Check(context.Background(), id, 10*time.Minute)
		ch <- result{a, err}
	}()
	return ch
}

func receive(t *testing.T, ch <-chan result) *askd.Ask {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("agent's call: %v", r.err)
		}
		return r.ask
	case <-time.After(2 * time.Minute):
		t.Fatal("the agent's waiting call did not return")
	}
	return nil
}

func create(t *testing.T, agent *client.Client, in *askd.AskInput) *askd.Ask {
	t.Helper()
	a, err := agent.Create(context.Background(), in, 0)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return a
}

// answerJSON is an answer as JSON, for exact comparison.
func answerJSON(t *testing.T, a *askd.Ask) string {
	t.Helper()
	if a.Answer == nil {
		return "null"
	}
	b, err := json.Marshal(a.Answer)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantAnswer(t *testing.T, a *askd.Ask, status askd.Status, want string) {
	t.Helper()
	if a.Status != status {
		t.Fatalf("status %s (%s), want %s", a.Status, a.CancelReason, status)
	}
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want: %v", err)
	}
	got := answerJSON(t, a)
	json.Unmarshal([]byte(got), &g)
	wb, _ := json.Marshal(w)
	gb, _ := json.Marshal(g)
	if string(wb) != string(gb) {
		t.Fatalf("agent received %s, want %s", gb, wb)
	}
}

func question(q, header string, multi bool, labels ...string) askd.Question {
	out := askd.Question{Question: q, Header: header, MultiSelect: multi}
	for _, l := range labels {
		label, desc, _ := strings.Cut(l, ": ")
		out.Options = append(out.Options, askd.Option{Label: label, Description: desc})
	}
	return out
}
