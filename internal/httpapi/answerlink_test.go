package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
)

// mintLinks creates a decision ask titled title in session s1 and mints its
// answer links as a notification would; it returns the ask and the links'
// URLs by label.
func mintLinks(t *testing.T, s *testserver.Server, title string) (*askd.Ask, map[string]string) {
	t.Helper()
	a, err := s.Agent("s1").Create(ctxT(t), &askd.AskInput{Kind: askd.KindDecision, Title: title,
		Options: []askd.Option{{Label: "Monday"}, {Label: "Friday", Description: "<b>risky</b>"}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	links, err := s.App.MintAnswerLinks(ctxT(t), a.ID, a.Revision, 0)
	if err != nil || len(links) != 2 {
		t.Fatalf("mint: %d links, %v", len(links), err)
	}
	urls := map[string]string{}
	for _, l := range links {
		urls[l.Label] = s.URL + "/a/" + l.Code
	}
	return a, urls
}

// linkPost POSTs form to an answer link and returns the status and page.
func linkPost(t *testing.T, rawURL, form string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctxT(t), http.MethodPost, rawURL, strings.NewReader(form))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return linkDo(t, req)
}

func linkGet(t *testing.T, rawURL string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctxT(t), http.MethodGet, rawURL, nil)
	return linkDo(t, req)
}

func linkDo(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The confirm page shows agent text as text; a POST without confirm=1
// answers nothing; of many taps on the links of one ask at once, on SQLite
// and PostgreSQL, exactly one answers and the rest see who did.
func TestAnswerLinkPage(t *testing.T) {
	eachStore(t, app.Config{NotifyAs: "alice"}, func(t *testing.T, s *testserver.Server) {
		a, urls := mintLinks(t, s, `<script>alert(1)</script> & "deploy"`)
		status, page := linkGet(t, urls["Friday"])
		if status != http.StatusOK || strings.Contains(page, "<script>alert") || strings.Contains(page, "<b>risky") ||
			!strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;deploy&#34;") || !strings.Contains(page, "&lt;b&gt;risky&lt;/b&gt;") {
			t.Fatalf("page: %d %s", status, page)
		}
		if strings.Contains(page, "<script") || strings.Contains(page, "javascript:") {
			t.Errorf("the page has script: %s", page)
		}

		for _, form := range []string{"", "confirm=0", "confirm=yes"} {
			if status, _ := linkPost(t, urls["Friday"], form); status != http.StatusBadRequest {
				t.Errorf("POST %q: %d, want 400", form, status)
			}
		}
		if got, hist := storedAsk(t, s, a.ID); got.Status != askd.StatusPending || len(hist) != 1 {
			t.Fatalf("after POSTs without confirm=1: %s, %d events", got.Status, len(hist))
		}

		var wg sync.WaitGroup
		var ok, conflict atomic.Int32
		start := make(chan struct{})
		for i := range 8 {
			u := urls[[]string{"Monday", "Friday"}[i%2]]
			wg.Go(func() {
				<-start
				switch status, _ := linkPost(t, u, "confirm=1"); status {
				case http.StatusOK:
					ok.Add(1)
				case http.StatusConflict:
					conflict.Add(1)
				default:
					t.Errorf("tap: %d", status)
				}
			})
		}
		close(start)
		wg.Wait()
		if ok.Load() != 1 || conflict.Load() != 7 {
			t.Fatalf("%d taps answered, %d saw a conflict; want 1 and 7", ok.Load(), conflict.Load())
		}
		got, hist := storedAsk(t, s, a.ID)
		answered := 0
		for _, e := range hist {
			if e.Action == askd.ActionAnswered {
				answered++
			}
		}
		if got.Status != askd.StatusAnswered || got.SettledBy != "alice" || answered != 1 {
			t.Fatalf("after the taps: %s by %q, %d answered events", got.Status, got.SettledBy, answered)
		}
	})
}

// gate is a before-tell gate that refuses while refuse is set.
type gate struct{ refuse atomic.Bool }

func (g *gate) Allow(context.Context, *app.GateRequest) (bool, string, error) {
	if g.refuse.Load() {
		return false, "Fridays are frozen", nil
	}
	return true, "", nil
}

// A link's answer is a person's like any other: the before-tell gate is
// asked, and its refusal (403) leaves the ask pending and the link working.
func TestAnswerLinkAsksTheGate(t *testing.T) {
	g := &gate{}
	g.refuse.Store(true)
	s := testserver.Start(t, testserver.Options{Config: app.Config{NotifyAs: "alice", BeforeTell: g}})
	a, urls := mintLinks(t, s, "Deploy on Monday or Friday?")
	status, page := linkPost(t, urls["Friday"], "confirm=1")
	if status != http.StatusForbidden || !strings.Contains(page, "the before-tell gate refused this answer: Fridays are frozen") {
		t.Fatalf("refused by the gate: %d %s", status, page)
	}
	if got, hist := storedAsk(t, s, a.ID); got.Status != askd.StatusPending || len(hist) != 1 {
		t.Fatalf("after the gate refused: %s, %d events", got.Status, len(hist))
	}
	g.refuse.Store(false)
	if status, page := linkPost(t, urls["Friday"], "confirm=1"); status != http.StatusOK || !strings.Contains(page, "Answered by alice via link: Friday.") {
		t.Fatalf("once the gate allows: %d %s", status, page)
	}
}

// Unknown codes count as failed authentications: after ten, the address is
// refused (429, Retry-After) before any code is looked at, a good one too.
// Revoking the notify-as human's token takes its links with it.
func TestAnswerLinkThrottleAndRevoke(t *testing.T) {
	s := testserver.Start(t, testserver.Options{Config: app.Config{NotifyAs: "alice"}})
	a, urls := mintLinks(t, s, "Deploy on Monday or Friday?")
	for i := range 10 {
		if status, _ := linkGet(t, s.URL+"/a/"+strings.Repeat("a", 25)+string(rune('a'+i))); status != http.StatusNotFound {
			t.Fatalf("unknown code %d: %d, want 404", i, status)
		}
	}
	req, _ := http.NewRequestWithContext(ctxT(t), http.MethodPost, urls["Monday"], strings.NewReader("confirm=1"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("after ten unknown codes: %s, Retry-After %q; want 429 with Retry-After", resp.Status, resp.Header.Get("Retry-After"))
	}
	if got, _ := storedAsk(t, s, a.ID); got.Status != askd.StatusPending {
		t.Fatalf("a throttled tap answered: %s", got.Status)
	}

	s2 := testserver.Start(t, testserver.Options{Config: app.Config{NotifyAs: "alice"}})
	a2, urls2 := mintLinks(t, s2, "Deploy?")
	if err := s2.Store.Update(ctxT(t), func(tx askd.Tx) error { return tx.Tokens.RevokeToken(ctxT(t), "alice") }); err != nil {
		t.Fatal(err)
	}
	if status, _ := linkPost(t, urls2["Monday"], "confirm=1"); status != http.StatusNotFound {
		t.Errorf("a revoked human's link: %d, want 404", status)
	}
	if got, _ := storedAsk(t, s2, a2.ID); got.Status != askd.StatusPending {
		t.Errorf("a revoked human's link answered: %s", got.Status)
	}
}

// A form's answer link, on SQLite and PostgreSQL: the confirm page shows the
// MCP server that asks, its whole message, the field and its choices, all
// as escaped text; confirming answers with exactly {field: const}, read back
// from the store; the same link again, and Decline's, only say how it was
// answered.
func TestFormAnswerLinkPage(t *testing.T) {
	eachStore(t, app.Config{NotifyAs: "alice"}, func(t *testing.T, s *testserver.Server) {
		a, err := s.Agent("s1").Create(ctxT(t), &askd.AskInput{Kind: askd.KindForm, Source: "<b>deployer</b>",
			Title: "Where should I deploy?\n<script>alert(1)</script> see https://evil.example/x",
			Schema: json.RawMessage(`{"type":"object","properties":{"env":{"type":"string","title":"Environment","description":"<i>the cluster</i>",` +
				`"oneOf":[{"const":"staging","title":"Staging"},{"const":"prod","title":"<b>Production</b>"}],"default":"staging"}}}`)}, 0)
		if err != nil {
			t.Fatal(err)
		}
		links, err := s.App.MintAnswerLinks(ctxT(t), a.ID, a.Revision, 0)
		if err != nil || len(links) != 3 {
			t.Fatalf("mint: %d links, %v", len(links), err)
		}
		urls := map[string]string{}
		for _, l := range links {
			urls[l.Label] = s.URL + "/a/" + l.Code
		}
		prod := urls["<b>Production</b>"]
		status, page := linkGet(t, prod)
		for _, want := range []string{"asked by &lt;b&gt;deployer&lt;/b&gt;", "Where should I deploy?\n&lt;script&gt;alert(1)&lt;/script&gt; see https://evil.example/x",
			"Environment: &lt;i&gt;the cluster&lt;/i&gt;", "<li>Staging: the default</li>", "<li>&lt;b&gt;Production&lt;/b&gt;</li>",
			"Answer: &lt;b&gt;Production&lt;/b&gt;?"} {
			if !strings.Contains(page, want) {
				t.Errorf("the page lacks %q", want)
			}
		}
		if status != http.StatusOK || strings.Contains(page, "<script") || strings.Contains(page, "<b>") || strings.Contains(page, `href="https://evil`) {
			t.Fatalf("page: %d %s", status, page)
		}
		if status, page := linkPost(t, prod, "confirm=1"); status != http.StatusOK || !strings.Contains(page, "Answered by alice via link: &lt;b&gt;Production&lt;/b&gt;.") {
			t.Fatalf("confirm: %d %s", status, page)
		}
		got, hist := storedAsk(t, s, a.ID)
		if want := (&askd.Answer{Action: askd.FormAccept, Content: map[string]any{"env": "prod"}}); !reflect.DeepEqual(got.Answer, want) || got.SettledBy != "alice" {
			t.Fatalf("stored %+v by %q, want %+v by alice", got.Answer, got.SettledBy, want)
		}
		for _, u := range []string{prod, urls["Decline"]} {
			if status, page := linkPost(t, u, "confirm=1"); status != http.StatusConflict || !strings.Contains(page, "Answered by alice via link: &lt;b&gt;Production&lt;/b&gt;.") {
				t.Errorf("after: %d %s", status, page)
			}
		}
		if again, hist2 := storedAsk(t, s, a.ID); !reflect.DeepEqual(again.Answer, got.Answer) || len(hist2) != len(hist) {
			t.Errorf("a used link changed the ask: %+v, %d events (were %d)", again.Answer, len(hist2), len(hist))
		}
	})
}

// An MCP gate's approval's answer link (SPEC §14): the confirm page names
// the server the call came through as every surface does, "through
// filesystem", never "asked by" (a form's words), as escaped text, and
// shows its arguments, with no markup of theirs; Allow approves.
func TestGateApprovalAnswerLinkPage(t *testing.T) {
	s := testserver.Start(t, testserver.Options{Config: app.Config{NotifyAs: "alice"}})
	a, err := s.Agent("s-gate").Create(ctxT(t), &askd.AskInput{Kind: askd.KindApproval, Title: "Allow mcp__files__write_file: notes/todo.md",
		ToolName: "mcp__files__write_file", Source: "<b>files</b>", Payload: json.RawMessage(`{"path":"notes/todo.md","content":"<script>alert(1)</script>"}`)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	links, err := s.App.MintAnswerLinks(ctxT(t), a.ID, a.Revision, 0)
	if err != nil || len(links) != 2 || links[0].Label != askd.TapAllow {
		t.Fatalf("mint: %+v, %v", links, err)
	}
	allow := s.URL + "/a/" + links[0].Code
	status, page := linkGet(t, allow)
	if want := "from " + s.AgentName + " / s-gate · through &lt;b&gt;files&lt;/b&gt;</p>"; !strings.Contains(page, want) {
		t.Errorf("the page lacks %q", want)
	}
	if status != http.StatusOK || strings.Contains(page, "asked by") || strings.Contains(page, "<b>") || strings.Contains(page, "<script") {
		t.Fatalf("page: %d %s", status, page)
	}
	if status, page := linkPost(t, allow, "confirm=1"); status != http.StatusOK {
		t.Fatalf("confirm: %d %s", status, page)
	}
	if got, _ := storedAsk(t, s, a.ID); got.Answer == nil || got.Answer.Decision != askd.DecisionApproved || got.SettledBy != "alice" {
		t.Errorf("stored %+v by %q, want approved by alice", got.Answer, got.SettledBy)
	}
}
