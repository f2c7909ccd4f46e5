package tell_test

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/tell"
	"github.com/askd-dev/askd/internal/testserver"
)

// Notifications of form asks (SPEC §9), read on every channel as its
// receiver reads them (receivers_test.go): the source and the message's
// first line as text, a link to the card, and buttons only for a form of
// one single-select field, each an answer link giving exactly {field:
// const}.

// choiceSchema is a form schema of one single-select field, env, titled
// Environment, of the choices given as const, title pairs; def is the
// default ("" for none).
func choiceSchema(def string, pairs ...string) json.RawMessage {
	var choices []map[string]string
	for i := 0; i < len(pairs); i += 2 {
		choices = append(choices, map[string]string{"const": pairs[i], "title": pairs[i+1]})
	}
	env := map[string]any{"type": "string", "title": "Environment", "oneOf": choices}
	if def != "" {
		env["default"] = def
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{"env": env}, "required": []string{"env"}})
	return b
}

// notes is one ask's notification on every channel, as read.
type notes struct {
	ntfy    ntfyNote
	ntfyRaw http.Header
	slack   slackNote
	push    pushNote
	webhook map[string]any
}

// formNotesOf is notesOf form ask id, and fails the test unless the
// webhook says it is a form.
func (c *channels) formNotesOf(t *testing.T, id int64) notes {
	t.Helper()
	n := c.notesOf(t, id)
	if n.webhook["kind"] != "form" {
		t.Errorf("webhook notification %v, not of a form", n.webhook)
	}
	return n
}

// notesOf waits for ask id's notifications, and fails the test unless
// every link in them is askd's (the inbox, or an answer link: ntfy's and
// push's buttons POST to one) and no receiver makes a link of agent text,
// renders it as Markdown, or reads a mention in it.
func (c *channels) notesOf(t *testing.T, id int64) notes {
	t.Helper()
	inbox := c.URL + "/?ask=" + itoa(id)
	answerLink := func(u string) bool { return strings.HasPrefix(u, c.URL+"/a/") }
	var n notes
	n.ntfy = c.ntfyOf(t, id)
	for _, r := range c.ntfy.got() {
		if r.header.Get("Click") == inbox {
			n.ntfyRaw = r.header
		}
	}
	n.slack, n.push, n.webhook = c.slackOf(t, id), c.pushOf(t, id), c.webhookOf(t, id)

	if links := linksIn(n.ntfy.Title + "\n" + n.ntfy.Message); len(links) > 0 || n.ntfy.Click != inbox {
		t.Errorf("ntfy links %q in %q, Click %q", links, n.ntfy.Message, n.ntfy.Click)
	}
	for _, h := range []string{"Markdown", "X-Markdown", "Md"} {
		if v := n.ntfyRaw.Get(h); v != "" {
			t.Errorf("ntfy header %s: %q: the message would be read as Markdown", h, v)
		}
	}
	for _, b := range n.ntfy.Actions {
		if b.Action != "http" || b.Method != http.MethodPost || !answerLink(b.URL) || b.Body != "confirm=1" || !b.Clear {
			t.Errorf("ntfy button %q: %+v, want an http POST of confirm=1 to an answer link", b.Label, b)
		}
	}
	if len(n.slack.Mentions) > 0 {
		t.Errorf("Slack reads mentions %q", n.slack.Mentions)
	}
	for _, l := range n.slack.Links {
		if !answerLink(l) && l != inbox {
			t.Errorf("Slack links %q, not askd's", l)
		}
	}
	if links := linksIn(n.push.Title + "\n" + n.push.Body); len(links) > 0 || n.push.Open != inbox {
		t.Errorf("push links %q in %q, opens %q", links, n.push.Body, n.push.Open)
	}
	for _, b := range n.push.Actions {
		if !answerLink(b.Target) {
			t.Errorf("push action %q posts to %q, not an answer link", b.Title, b.Target)
		}
	}
	if n.webhook["link"] != inbox {
		t.Errorf("webhook notification %v", n.webhook)
	}
	return n
}

// labels are the buttons' labels of each channel: ntfy's actions, Slack's
// answer buttons (not the inbox's), push's actions.
func (n notes) labels() (ntfy, slack, push []string) {
	for _, b := range n.ntfy.Actions {
		ntfy = append(ntfy, b.Label)
	}
	for _, b := range n.slack.Buttons {
		if b.ActionID != "askd-open" {
			slack = append(slack, b.Text.Text)
		}
	}
	for _, b := range n.push.Actions {
		push = append(push, b.Title)
	}
	return ntfy, slack, push
}

// Which forms get which buttons, where, and what every channel shows of
// them: the source and the message's first line, defanged; a form of one
// single-select field its choices (ntfy: with Decline while there is room
// for it within three, else the choices alone, else none; Web Push: two
// choices alone or none; Slack: every choice and Decline); every other form
// none; a url-mode form its link's host as text, never the link.
func TestFormNotificationButtons(t *testing.T) {
	c := startChannels(t)
	two := choiceSchema("prod", "staging", "Staging", "prod", "Production")
	three := choiceSchema("", "a", "A", "b", "B", "c", "C")
	four := choiceSchema("", "a", "A", "b", "B", "c", "C", "d", "D")
	seven := choiceSchema("", "1", "1", "2", "2", "3", "3", "4", "4", "5", "5", "6", "6", "7", "7")
	tests := []struct {
		name              string
		in                askd.AskInput
		ntfy, slack, push []string
		message           string   // ntfy's, exactly
		hides             []string // what no channel shows
	}{
		{name: "one field of two choices",
			in:   askd.AskInput{Title: "Where should I deploy? Notes at https://evil.example/notes", Source: "deploy.example.com", Schema: two},
			ntfy: []string{"Staging", "Production", "Decline"}, slack: []string{"Staging", "Production", "Decline"}, push: []string{"Staging", "Production"},
			message: "deploy[.]example[.]com asks: Where should I deploy? Notes at https[:]//evil[.]example/notes\nEnvironment\n• Staging\n• Production (default)"},
		{name: "three choices: Decline does not fit ntfy",
			in:   askd.AskInput{Title: "Which?", Source: "s", Schema: three},
			ntfy: []string{"A", "B", "C"}, slack: []string{"A", "B", "C", "Decline"}, push: nil,
			message: "s asks: Which?\nEnvironment\n• A\n• B\n• C"},
		{name: "four choices: none on ntfy",
			in:   askd.AskInput{Title: "Which?", Source: "s", Schema: four},
			ntfy: nil, slack: []string{"A", "B", "C", "D", "Decline"}, push: nil,
			message: "s asks: Which?\nEnvironment\n• A\n• B\n• C\n• D"},
		{name: "seven choices: more than a decision may have",
			in:      askd.AskInput{Title: "Which?", Source: "s", Schema: seven},
			message: "s asks: Which?\nEnvironment\n• 1\n• 2\n• 3\n• 4\n• 5\n• 6\n• 7"},
		{name: "several fields",
			in: askd.AskInput{Title: "Release details", Source: "release", Schema: json.RawMessage(
				`{"type":"object","properties":{"version":{"type":"string","title":"Version"},"env":{"type":"string","enum":["a","b"]}}}`)},
			message: "release asks: Release details\nA form to fill in, in the inbox: Version, env"},
		{name: "one boolean",
			in:      askd.AskInput{Title: "Sure?", Source: "s", Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean","title":"OK"}}}`)},
			message: "s asks: Sure?\nA form to fill in, in the inbox: OK"},
		{name: "a message of several lines shows its first, so it counts as cut",
			in:      askd.AskInput{Title: "Where should I deploy?\nThe old one goes: https://evil.example/more", Source: "deployer", Schema: two},
			slack:   []string{"Staging", "Production", "Decline"}, // Slack's buttons open the confirm page, which shows it all
			message: "deployer asks: Where should I deploy? …\nEnvironment\n• Staging\n• Production (default)", hides: []string{"old one", "more"}},
		{name: "url mode",
			in:      askd.AskInput{Title: "Sign in to continue", Source: "github", URL: "https://login.evil.example/oauth?next=https://evil.example/x"},
			message: "github asks: Sign in to continue\nIt opens a link: login[.]evil[.]example", hides: []string{"oauth", "next"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.Kind = askd.KindForm
			a, err := c.Agent("s-form").Create(t.Context(), &in, 0)
			if err != nil {
				t.Fatal(err)
			}
			n := c.formNotesOf(t, a.ID)
			ntfy, slack, push := n.labels()
			if !slices.Equal(ntfy, tt.ntfy) || !slices.Equal(slack, tt.slack) || !slices.Equal(push, tt.push) {
				t.Errorf("buttons: ntfy %q, Slack %q, push %q; want %q, %q, %q", ntfy, slack, push, tt.ntfy, tt.slack, tt.push)
			}
			if n.ntfy.Message != tt.message || n.ntfy.Title != "askd: form from s-form" || n.ntfy.Priority != "4" || n.ntfy.Tags != "clipboard,form" {
				t.Errorf("ntfy: Title %q, Priority %q, Tags %q, message %q; want message %q", n.ntfy.Title, n.ntfy.Priority, n.ntfy.Tags, n.ntfy.Message, tt.message)
			}
			if n.push.Body != tt.message {
				t.Errorf("push body %q, want %q", n.push.Body, tt.message)
			}
			if shown := strings.Join(n.slack.Texts, "\n"); !strings.Contains(shown, tt.message) {
				t.Errorf("Slack shows %q, not %q", shown, tt.message)
			}
			for _, s := range tt.hides {
				for _, where := range []string{n.ntfy.Message, strings.Join(n.slack.Texts, "\n"), n.push.Body} {
					if strings.Contains(where, s) {
						t.Errorf("a notification shows %q: %q", s, where)
					}
				}
			}
			line, _, _ := strings.Cut(tt.in.Title, "\n")
			if n.webhook["title"] != line || n.webhook["source"] != tt.in.Source {
				t.Errorf("webhook title %q, source %q; want %q, %q", n.webhook["title"], n.webhook["source"], line, tt.in.Source)
			}
		})
	}
}

// Pressing a form's button answers the MCP server that asked through the
// Elicitation hook with exactly {field: const}, stored as alice's answer via
// link; every other button of the notification (the same again, another
// channel's, Decline) then only says how it was answered, and changes
// nothing. A second form's Decline declines it.
func TestFormButtonAnswersTheHook(t *testing.T) {
	c := startChannels(t)
	hookBody, _ := json.Marshal(map[string]any{"hook_event_name": "Elicitation", "session_id": "s-hook", "mcp_server_name": "deployer",
		"message": "Where should I deploy?", "mode": "form", "requested_schema": choiceSchema("", "staging", "Staging", "prod", "Production")})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, c.URL+"/hooks/claude", strings.NewReader(string(hookBody)))
	req.Header.Set("Authorization", "Bearer "+c.AgentToken)
	req.Header.Set("Content-Type", "application/json")
	hook := make(chan string, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			hook <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		hook <- string(b)
	}()
	a := c.Pending(t, "s-hook", 1)[0]
	n := c.formNotesOf(t, a.ID)
	ntfyLink := map[string]string{}
	for _, b := range n.ntfy.Actions {
		ntfyLink[b.Label] = b.URL
	}
	if status, page := tap(t, ntfyLink["Production"]); status != http.StatusOK || !strings.Contains(page, "Answered by alice via link: Production.") {
		t.Fatalf("tap Production: %d %s", status, page)
	}
	if got := <-hook; !strings.Contains(got, `"action":"accept","content":{"env":"prod"}`) {
		t.Fatalf("the hook answered %s, want accept with env prod", got)
	}
	after, evs := stored(t, c.Server, a.ID)
	if want := (&askd.Answer{Action: askd.FormAccept, Content: map[string]any{"env": "prod"}}); after.Status != askd.StatusAnswered ||
		after.SettledBy != "alice" || !reflect.DeepEqual(after.Answer, want) {
		t.Fatalf("stored: %s by %q, %+v; want %+v by alice", after.Status, after.SettledBy, after.Answer, want)
	}
	checkAnswered(t, evs, "via link")

	others := []string{ntfyLink["Production"], ntfyLink["Staging"], ntfyLink["Decline"], n.push.Actions[0].Target}
	for _, b := range n.slack.Buttons {
		if b.ActionID != "askd-open" {
			others = append(others, b.URL)
		}
	}
	for _, u := range others {
		refused(t, u, http.StatusConflict, "Answered by alice via link: Production.")
	}
	unchanged(t, c.Server, after, len(evs))

	declined, err := c.Agent("s-decline").Create(t.Context(), &askd.AskInput{Kind: askd.KindForm, Title: "Where?", Source: "deployer",
		Schema: choiceSchema("", "staging", "Staging", "prod", "Production")}, 0)
	if err != nil {
		t.Fatal(err)
	}
	n = c.formNotesOf(t, declined.ID)
	last := n.ntfy.Actions[len(n.ntfy.Actions)-1]
	if last.Label != "Decline" {
		t.Fatalf("ntfy's last button %q, want Decline", last.Label)
	}
	if status, page := tap(t, last.URL); status != http.StatusOK || !strings.Contains(page, "Answered by alice via link: declined.") {
		t.Fatalf("tap Decline: %d %s", status, page)
	}
	if got, _ := stored(t, c.Server, declined.ID); !reflect.DeepEqual(got.Answer, &askd.Answer{Action: askd.FormDecline}) {
		t.Errorf("after Decline: %+v", got.Answer)
	}
}

// An MCP server's choices that try to be more than text: Markdown links,
// URLs, Slack's syntax, an RFC 2047 encoded word that would decode into more
// ntfy buttons. Every channel shows them as text on exactly the buttons askd
// made, links nothing, and a tap gives exactly the choice's value. Line
// breaks, control and invisible characters in a choice are refused when the
// form is asked (form.go), so no notification ever carries them.
func TestFormChoicesShowAsText(t *testing.T) {
	c := startChannels(t)
	bad, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{"env": map[string]any{
		"type": "string", "oneOf": []map[string]string{{"const": "a\r\nX-Evil: 1", "title": "A\u202e\u200b"}, {"const": "b"}}}}})
	_, err := c.Agent("attack-refused").Create(t.Context(), &askd.AskInput{Kind: askd.KindForm, Title: "x", Schema: bad}, 0)
	if askd.ErrorCode(err) != askd.EINVALID || !strings.Contains(err.Error(), "schema.properties.env choice 1's value: contains U+000D") ||
		!strings.Contains(err.Error(), "choice 1's title: contains U+202E") {
		t.Fatalf("a choice with a line break: %v", err)
	}
	approve := "[Approve](https://evil.example/a) X-Evil: 1 <!here> *bold*"
	deny := "=?utf-8?q?Deny=22=2C_https://evil.example/x=3B_view=2C_=22Open?="
	schema, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{"env": map[string]any{
		"type": "string", "title": "[Field](https://evil.example/f)", "description": "see evil.com <@U123>",
		"oneOf": []map[string]string{{"const": "a: X-Evil 1", "title": approve}, {"const": "https://evil.example/b", "title": deny}}}}})
	a, err := c.Agent("attack").Create(t.Context(), &askd.AskInput{Kind: askd.KindForm, Source: "evil.example",
		Title: "Approve the [deploy](https://evil.example/d) =?utf-8?q?x=0Ay?= <!channel>", Schema: schema}, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := c.formNotesOf(t, a.ID)
	shownApprove := approve
	ntfy, slack, push := n.labels()
	if want := []string{shownApprove, deny, "Decline"}; !slices.Equal(ntfy, want) || !slices.Equal(slack, want) {
		t.Errorf("buttons: ntfy %q, Slack %q; want %q", ntfy, slack, want)
	}
	if want := []string{shownApprove, deny}; !slices.Equal(push, want) {
		t.Errorf("push actions %q, want %q", push, want)
	}
	if n.ntfy.Title != "askd: form from attack" || n.push.Title != "askd: form from attack" {
		t.Errorf("titles: ntfy %q, push %q", n.ntfy.Title, n.push.Title)
	}
	want := "evil[.]example asks: Approve the [deploy](https[:]//evil[.]example/d) =?utf-8?q?x=0Ay?= <!channel>\n" +
		"[Field](https[:]//evil[.]example/f): see evil[.]com <@U123>\n• " + shownApprove + "\n• " + deny
	want = strings.NewReplacer("https://evil.example/a", "https[:]//evil[.]example/a", "https://evil.example/x", "https[:]//evil[.]example/x").Replace(want)
	if n.ntfy.Message != want || n.push.Body != want {
		t.Errorf("ntfy message %q\npush body %q\nwant %q", n.ntfy.Message, n.push.Body, want)
	}

	if status, page := tap(t, n.ntfy.Actions[0].URL); status != http.StatusOK {
		t.Fatalf("tap %q: %d %s", shownApprove, status, page)
	}
	got, _ := stored(t, c.Server, a.ID)
	if !reflect.DeepEqual(got.Answer, &askd.Answer{Action: askd.FormAccept, Content: map[string]any{"env": "a: X-Evil 1"}}) {
		t.Errorf("stored %+v, want exactly the choice's value", got.Answer)
	}
}

// With a Slack app's signing secret, a form's Slack buttons answer in
// place, and the message is updated to say how, the choice by its title.
// A form whose message the notification shows only the first line of gets
// buttons that open the confirm page (which shows it all) instead.
func TestSlackFormButtonAnswersInPlace(t *testing.T) {
	responses := newReceiver(t, nil)
	ls := startLinks(t, app.Config{}, testserver.Options{
		Slack: func(svc *app.Service, base string) http.Handler {
			return tell.NewSlackInteractions(svc, tell.SlackOptions{SigningSecret: slackSecret, PublicURL: base,
				ResponseURLPrefix: responses.URL + "/", Client: http.DefaultClient})
		},
	})
	schema := choiceSchema("", "staging", "Staging", "prod", "Production")
	a, err := ls.Agent("s1").Create(t.Context(), &askd.AskInput{Kind: askd.KindForm, Title: "Where should I deploy?", Source: "deployer", Schema: schema}, 0)
	if err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the Slack message", func() bool { return len(ls.slack.got()) == 1 })
	buttons := slackButtons(t, ls.slack.got()[0].body)
	if len(buttons) != 4 || buttons[1].Text.Text != "Production" || buttons[1].Value == "" || buttons[1].URL != "" ||
		buttons[2].Text.Text != "Decline" || buttons[2].Style != "danger" {
		t.Fatalf("buttons %+v, want Staging, Production and Decline carrying codes, then the inbox", buttons)
	}
	if status, _ := postSlack(t, ls.URL, slackClick(buttons[1], responses.URL+"/actions/T1/1/x"), slackSecret, time.Now()); status != http.StatusOK {
		t.Fatalf("click: %d", status)
	}
	got, evs := stored(t, ls.Server, a.ID)
	if !reflect.DeepEqual(got.Answer, &askd.Answer{Action: askd.FormAccept, Content: map[string]any{"env": "prod"}}) || got.SettledBy != "alice" {
		t.Fatalf("after the click: %+v by %q", got.Answer, got.SettledBy)
	}
	checkAnswered(t, evs, "via Slack (user U123/bob)")
	testserver.Eventually(t, "the message update", func() bool { return len(responses.got()) == 1 })
	if body := string(responses.got()[0].body); !strings.Contains(body, "Answered by alice via Slack (user U123/bob): Production.") {
		t.Errorf("message update %s", body)
	}

	if _, err := ls.Agent("s2").Create(t.Context(), &askd.AskInput{Kind: askd.KindForm, Title: "Where should I deploy?\nThe old one goes.",
		Source: "deployer", Schema: schema}, 0); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the second Slack message", func() bool { return len(ls.slack.got()) == 2 })
	for _, b := range slackButtons(t, ls.slack.got()[1].body) {
		if b.Value != "" || b.URL == "" {
			t.Errorf("button %q: value %q, url %q; want its confirm page, no code", b.Text.Text, b.Value, b.URL)
		}
	}
}
