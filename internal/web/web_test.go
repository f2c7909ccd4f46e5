package web_test

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/web"
)

func TestRenderMarkdown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		want, not []string
	}{
		{"formatting kept", "# Title\n\n**bold** _em_ `code`\n\n- a\n- b\n\n| x | y |\n|---|---|\n| 1 | 2 |\n",
			[]string{"<h1>Title</h1>", "<strong>bold</strong>", "<em>em</em>", "<code>code</code>", "<li>a</li>", "<table>", "<td>1</td>"}, nil},
		{"code block keeps its language class", "```go\nfmt.Println()\n```", []string{`<code class="language-go">`}, nil},
		{"links lose their target, keep their text", "[docs](https://example.com) <https://example.com/x>",
			[]string{"docs"}, []string{"<a", "href"}},
		{"javascript links", "[x](javascript:alert(1))", []string{"x"}, []string{"<a", "javascript"}},
		{"raw html dropped", "<script>alert(1)</script><img src=x onerror=alert(1)><iframe src=x></iframe>",
			nil, []string{"<script", "<img", "<iframe", "onerror"}},
		{"images dropped", "![alt](https://example.com/a.png)", nil, []string{"<img", "example.com"}},
		{"styles dropped", "<style>body{}</style><p style=\"color:red\">x</p>", nil, []string{"<style", "style="}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := web.RenderMarkdown(tc.src)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("%q holds %q", got, n)
				}
			}
		})
	}
}

func TestRenderDetails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		want, not []string
	}{
		{"formatting kept", "**bold** `code`\n\n- a\n- b", []string{"<strong>bold</strong>", "<code>code</code>", "<li>a</li>"}, nil},
		{"a line break stays one", "first line\nsecond line", []string{"first line<br>", "second line"}, nil},
		{"raw html shown as text", "returns Vec<String> now", []string{"Vec&lt;String&gt; now"}, []string{"<String>"}},
		{"html blocks shown as text", "<div onclick=\"x()\">\nhi\n</div>\n\nafter", []string{"&lt;div onclick=", "<p>after</p>"}, []string{"<div"}},
		{"scripts and images are text, not markup", "<script>alert(1)</script><img src=x onerror=alert(1)>",
			[]string{"&lt;script&gt;", "&lt;img"}, []string{"<script", "<img"}},
		{"links lose their target, keep their text", "[docs](https://example.com) <https://example.com/x>", []string{"docs"}, []string{"<a", "href"}},
		{"javascript links", "[x](javascript:alert(1))", []string{"x"}, []string{"<a", "javascript"}},
		{"images dropped", "![alt](https://example.com/a.png)", nil, []string{"<img", "example.com"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := web.RenderDetails(tc.src)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("%q holds %q", got, n)
				}
			}
		})
	}
}

func TestDetailsEndpoint(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	agent := srv.Agent("d")
	first, err := agent.Create(context.Background(), &askd.AskInput{Kind: askd.KindBlocked, Title: "t", Details: "**one** <b>"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	bare, err := agent.Create(context.Background(), &askd.AskInput{Kind: askd.KindApproval, Title: "no details"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	cookie := srv.BrowserCookie(t, srv.HumanName).Value
	path := fmt.Sprintf("/inbox/details?id=%d&id=%d&id=999", first.ID, bare.ID)
	if resp := get(t, srv.URL+path, ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a cookie: %d", resp.StatusCode)
	}
	if resp := get(t, srv.URL+path, srv.AgentToken); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a token as the cookie: %d", resp.StatusCode)
	}
	read := func(path string) (int, string) {
		resp := get(t, srv.URL+path, cookie)
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(body))
	}
	// Only asks with details, each with its revision; unknown ids left out.
	want := fmt.Sprintf(`{"details":[{"id":%d,"revision":1,"html":"\u003cp\u003e\u003cstrong\u003eone\u003c/strong\u003e \u0026lt;b\u0026gt;\u003c/p\u003e\n"}]}`, first.ID)
	if code, body := read(path); code != http.StatusOK || body != want {
		t.Errorf("got %d %s\nwant %s", code, body, want)
	}
	// A newer ask replaces the first: new details, a new revision.
	if _, err := agent.Create(context.Background(), &askd.AskInput{Kind: askd.KindBlocked, Title: "t", Details: "_two_"}, 0); err != nil {
		t.Fatal(err)
	}
	if code, body := read(fmt.Sprintf("/inbox/details?id=%d", first.ID)); code != http.StatusOK || !strings.Contains(body, `"revision":2`) || !strings.Contains(body, `\u003cem\u003etwo`) {
		t.Errorf("after the replacement: %d %s", code, body)
	}
	for _, bad := range []string{"/inbox/details", "/inbox/details?id=x", "/inbox/details?id=0", "/inbox/details?" + strings.Repeat("id=1&", 51)} {
		if code, body := read(bad); code != http.StatusBadRequest || !strings.Contains(body, `"id:`) {
			t.Errorf("%s: %d %s", bad, code, body)
		}
	}
}

var needCSP = []string{"script-src 'self'", "object-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "default-src 'none'"}

func checkPageCSP(t *testing.T, what string, resp *http.Response) {
	t.Helper()
	csp := resp.Header.Get("Content-Security-Policy")
	for _, d := range needCSP {
		if !strings.Contains(csp, d) {
			t.Errorf("%s: CSP %q lacks %s", what, csp, d)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("%s: CSP %q allows unsafe code", what, csp)
	}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("%s: no nosniff", what)
	}
}

func TestPages(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	cookie := srv.BrowserCookie(t, srv.HumanName).Value

	t.Run("not signed in goes to the sign-in page", func(t *testing.T) {
		resp := get(t, srv.URL+"/?session=x", "")
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/signin.html" {
			t.Fatalf("got %d to %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		checkPageCSP(t, "redirect", resp)
	})
	t.Run("a token as the cookie cannot open the inbox", func(t *testing.T) {
		for _, token := range []string{srv.AgentToken, srv.HumanToken} {
			resp := get(t, srv.URL+"/", token)
			if resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("a token as the cookie got %d", resp.StatusCode)
			}
		}
	})
	t.Run("sign-in page shows only known messages", func(t *testing.T) {
		resp := get(t, srv.URL+"/signin.html?error=agent", "")
		body, _ := io.ReadAll(resp.Body)
		checkPageCSP(t, "signin.html", resp)
		if !strings.Contains(string(body), "agent token") || !strings.Contains(string(body), `name="token"`) {
			t.Errorf("sign-in page: %s", body)
		}
		resp = get(t, srv.URL+"/signin.html?error=%3Cscript%3E", "")
		body, _ = io.ReadAll(resp.Body)
		if strings.Contains(string(body), "<script>") || strings.Contains(string(body), `class="error"`) {
			t.Errorf("unknown error code echoed: %s", body)
		}
	})
	t.Run("inbox page", func(t *testing.T) {
		resp := get(t, srv.URL+"/", cookie)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `id="pending"`) {
			t.Fatalf("got %d: %s", resp.StatusCode, body)
		}
		checkPageCSP(t, "index", resp)
		if regexp.MustCompile(`<script(?:[^>]*)>[^<]`).Match(body) || regexp.MustCompile(`\son[a-z]+=`).Match(body) || strings.Contains(string(body), "style=") {
			t.Errorf("the page has inline script, handlers or styles")
		}
		for _, u := range regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllSubmatch(body, -1) {
			if s := string(u[1]); !strings.HasPrefix(s, "/") {
				t.Errorf("the page refers to %q, not to this server", s)
			}
		}
	})
	t.Run("unknown paths", func(t *testing.T) {
		resp := get(t, srv.URL+"/nope", cookie)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("got %d", resp.StatusCode)
		}
		checkPageCSP(t, "404", resp)
	})
}

func TestAssets(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	resp := get(t, srv.URL+"/", srv.BrowserCookie(t, srv.HumanName).Value)
	body, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`/assets/([0-9a-f]+)/app\.js`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("no versioned app.js in %s", body)
	}
	version := string(m[1])
	for _, name := range []string{"app.js", "cards.js", "app.css", "icon.svg"} {
		url := srv.URL + "/assets/" + version + "/" + name
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(resp.Body)
		if err != nil || resp.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s: not gzip-encoded (%v)", name, err)
		}
		plain, _ := io.ReadAll(zr)
		resp.Body.Close()
		if len(plain) == 0 {
			t.Errorf("%s: empty", name)
		}
		if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
			t.Errorf("%s: Cache-Control %q", name, cc)
		}
		if name == "app.js" && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") {
			t.Errorf("app.js served as %q", resp.Header.Get("Content-Type"))
		}
		etag := resp.Header.Get("ETag")
		req.Header.Set("If-None-Match", etag)
		resp, err = http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if etag == "" || resp.StatusCode != http.StatusNotModified {
			t.Errorf("%s: revalidation with ETag %q gave %d", name, etag, resp.StatusCode)
		}
	}
	// An unversioned or old-version URL revalidates.
	if cc := get(t, srv.URL+"/assets/app.css", "").Header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("unversioned asset Cache-Control %q", cc)
	}
}

func TestPreviewsEndpoint(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	a, err := srv.Agent("p").Create(context.Background(), &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{{
		Question: "Layout?", Header: "Layout", Options: []askd.Option{
			{Label: "A", Preview: "**bold** <script>x()</script>"}, {Label: "B"},
		}}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	path := "/inbox/previews/" + strconv.FormatInt(a.ID, 10)
	cookie := srv.BrowserCookie(t, srv.HumanName).Value
	if resp := get(t, srv.URL+path, ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a cookie: %d", resp.StatusCode)
	}
	if resp := get(t, srv.URL+path, srv.AgentToken); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a token as the cookie: %d", resp.StatusCode)
	}
	resp := get(t, srv.URL+path, cookie)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `\u003cstrong\u003ebold\u003c/strong\u003e`) || strings.Contains(string(body), "script") || !strings.Contains(string(body), `""`) {
		t.Errorf("previews: %d %s", resp.StatusCode, body)
	}
	doc := get(t, srv.URL+path+"/0/0", cookie)
	csp := doc.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "sandbox") || strings.Contains(csp, "script-src") || !strings.Contains(csp, "frame-ancestors 'self'") {
		t.Errorf("preview document CSP %q", csp)
	}
	if resp := get(t, srv.URL+path+"/0/9", cookie); resp.StatusCode != http.StatusNotFound {
		t.Errorf("no such option: %d", resp.StatusCode)
	}
}
