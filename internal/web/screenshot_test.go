package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// TestScreenshots writes the inbox's screenshots (desktop and phone width,
// light and dark) into the directory named by ASKD_SCREENSHOTS:
//
//	ASKD_SCREENSHOTS=docs/screenshots go test ./internal/web -run TestScreenshots
func TestScreenshots(t *testing.T) {
	dir := os.Getenv("ASKD_SCREENSHOTS")
	if dir == "" {
		t.Skip("set ASKD_SCREENSHOTS=dir to write screenshots")
	}
	if !filepath.IsAbs(dir) {
		// go test runs in the package directory; a relative path means the
		// module root, where the command was typed.
		dir = filepath.Join("..", "..", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	clk := &testserver.Clock{}
	srv := startServer(t, app.Config{Now: clk.Now})
	newest := scene(t, srv, clk)

	type shot struct {
		name          string
		width, height int64
		mobile        bool
		dark          bool
	}
	take := func(t *testing.T, srv *testserver.Server, who string, s shot, path string, prepare func(p *tab)) {
		p := newTab(t, srv)
		// Desktop: the whole page at 1x; phone: the first screen at 2x.
		var opts []chromedp.EmulateViewportOption
		if s.mobile {
			opts = append(opts, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch)
		}
		scheme := "light"
		if s.dark {
			scheme = "dark"
		}
		p.do(chromedp.EmulateViewport(s.width, s.height, opts...))
		if _, err := chromedp.Call(p.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		}); err != nil {
			t.Fatal(err)
		}
		p.signIn(who, path)
		prepare(p)
		eval[bool](p, `document.activeElement.blur(), window.scrollTo(0, 0), true`)
		p.waitFor(settledPage)
		if !s.mobile {
			// The whole page: a viewport as tall as the page, so every
			// card renders (off-screen cards skip rendering by design).
			for range 3 {
				h := eval[int64](p, `document.documentElement.scrollHeight`)
				p.do(chromedp.EmulateViewport(s.width, h))
				p.waitFor(settledPage)
			}
		}
		png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, s.name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	for _, s := range []shot{
		{"inbox-desktop-light.png", 1280, 900, false, false},
		{"inbox-desktop-dark.png", 1280, 900, false, true},
		{"inbox-phone-light.png", 390, 844, true, false},
		{"inbox-phone-dark.png", 390, 844, true, true},
	} {
		t.Run(s.name, func(t *testing.T) {
			take(t, srv, srv.HumanName, s, "/", func(p *tab) {
				p.waitFor(`document.querySelectorAll('#pending .card').length === 7 && [...document.querySelectorAll('#pending .details')].every(d => d.querySelector('.md'))`)
				// Show the person midway: an option chosen on the layout
				// question, and (on the desktop's whole page) the edits of an
				// approval in Recent.
				p.do(chromedp.Click(option(newest, "Tabs")))
				if !s.mobile {
					eval[bool](p, `document.querySelector('#recent .recent-edits').open = true`)
				}
			})
		})
	}

	// History and Rules: a rule made from the Bash prompt has answered the
	// next like it.
	ruled := ruleScene(t, srv)
	for _, s := range []shot{
		{"history-desktop-light.png", 1280, 900, false, false},
		{"history-phone-dark.png", 390, 844, true, true},
	} {
		t.Run(s.name, func(t *testing.T) {
			take(t, srv, srv.HumanName, s, "/?view=history", func(p *tab) {
				p.waitFor(`document.querySelectorAll('#history .recent-item').length === 6`)
				// The rule's answer and the edited approval, opened.
				eval[bool](p, fmt.Sprintf(`document.querySelector('#history .recent-item[data-id="%d"] details.record').open = true`, ruled))
				eval[bool](p, `[...document.querySelectorAll('#history .recent-item')].find(r => r.textContent.includes('with edits')).querySelector('details.record').open = true`)
				p.waitFor(`document.querySelectorAll('#history .timeline').length === 2`)
			})
		})
	}
	t.Run("rules-desktop-light.png", func(t *testing.T) {
		take(t, srv, srv.HumanName, shot{"rules-desktop-light.png", 1280, 900, false, false}, "/?view=rules", func(p *tab) {
			p.waitFor(`document.querySelectorAll('#rules .rule-item').length === 2`)
		})
	})

	// Form asks: an MCP server's form and an address it asks the person to
	// open, in a session of their own.
	release := formScene(t, srv, clk)
	for _, s := range []shot{
		{"form-desktop-light.png", 1280, 900, false, false},
		{"form-desktop-dark.png", 1280, 900, false, true},
		{"form-phone-light.png", 390, 844, true, false},
		{"form-phone-dark.png", 390, 844, true, true},
	} {
		t.Run(s.name, func(t *testing.T) {
			take(t, srv, srv.HumanName, s, "/?agent=claude-code&session=release", func(p *tab) {
				p.waitFor(`document.querySelectorAll('#pending .card').length === 2`)
				// The person midway: the tag typed without its v, its
				// problem beside it; a second team chosen.
				setValue(p, field(release, "tag")+" input", "2.4.0")
				p.waitFor(fmt.Sprintf(`!document.querySelector('%s .field-error').hidden`, field(release, "tag")))
				eval[bool](p, fmt.Sprintf(`document.querySelector('%s input[value="1"]').click(), true`, field(release, "reviewers")))
			})
		})
	}

	// A team's inbox: bob's Mine, with an ask he took, one a teammate
	// took, one escalated to him; and a viewer's page, on All.
	tclk := &testserver.Clock{}
	teamSrv := startServer(t, app.Config{Now: tclk.Now})
	teamScene(t, teamSrv, tclk)
	for _, s := range []shot{
		{"team-desktop-light.png", 1280, 900, false, false},
		{"team-desktop-dark.png", 1280, 900, false, true},
		{"team-phone-light.png", 390, 844, true, false},
		{"team-phone-dark.png", 390, 844, true, true},
	} {
		t.Run(s.name, func(t *testing.T) {
			take(t, teamSrv, "bob", s, "/", func(p *tab) {
				p.waitFor(`document.querySelectorAll('#pending .card').length === 5 && document.querySelector('#whose [data-whose="all"]').dataset.count === '7'`)
			})
		})
	}
	for _, s := range []shot{
		{"viewer-desktop-light.png", 1280, 900, false, false},
		{"viewer-desktop-dark.png", 1280, 900, false, true},
		{"viewer-phone-light.png", 390, 844, true, false},
		{"viewer-phone-dark.png", 390, 844, true, true},
	} {
		t.Run(s.name, func(t *testing.T) {
			take(t, teamSrv, "eve", s, "/", func(p *tab) {
				p.do(chromedp.Click(chromedp.CSS(`#whose [data-whose="all"]`)))
				p.waitFor(`document.querySelectorAll('#pending .card').length === 7 && [...document.querySelectorAll('#pending .details')].every(d => d.querySelector('.md'))`)
			})
		})
	}
}

// teamScene fills an inbox for a team (SPEC §10): bob and carol, approvers,
// in team platform; carol in ops, which escalates to bob after 10 minutes;
// eve, a viewer. Platform's agent asked for a rollout (carol took it) and a
// migration (bob took it), and carol answered a third; ops' pager asked 11
// minutes ago (escalated to bob); bob's own agent and an agent of nobody's
// asked too; alice's agent and the data team's asked things that are not
// bob's. clk is the server's clock, moved back while ops' ask is made.
func teamScene(t *testing.T, srv *testserver.Server, clk *testserver.Clock) {
	t.Helper()
	ctx := context.Background()
	bob := person(t, srv, "bob", askd.AccessApprover)
	carol := person(t, srv, "carol", askd.AccessApprover)
	person(t, srv, "eve", askd.AccessViewer)
	person(t, srv, "dave", askd.AccessApprover)
	team(t, srv, "platform", 0, "", "bob", "carol")
	team(t, srv, "ops", 10*time.Minute, "bob", "carol")
	team(t, srv, "data", 0, "", "dave")

	// Asked 11 minutes ago: past ops' 10, so escalated now.
	clk.Skip(-11 * time.Minute)
	gap := askAs(t, srv, "pager", "team:ops", "oncall", &askd.AskInput{Kind: askd.KindBlocked,
		Title:   "The pager rotation has a gap next weekend",
		Details: "Nobody is on call from **Saturday 18:00** to **Sunday 09:00**. Add someone, or I will page the whole team."})
	clk.Skip(11 * time.Minute)
	escalated(t, srv, gap.ID, "bob")
	// Settled already: a teammate's answer, in Recent.
	done := askAs(t, srv, "deployer", "team:platform", "api-v2", &askd.AskInput{Kind: askd.KindAction, Title: "Rotate the staging database password"})
	if _, err := srv.App.Answer(ctx, carol, done.ID, &askd.Answer{Answer: "Done"}); err != nil {
		t.Fatal(err)
	}
	askAs(t, srv, "scribe", "alice", "docs-site", &askd.AskInput{Kind: askd.KindDecision, Title: "Publish the v2 docs now, or wait for the API freeze?",
		Options: []askd.Option{{Label: "Publish now"}, {Label: "Wait for the freeze"}}, Recommended: "Wait for the freeze"})
	askAs(t, srv, "etl", "team:data", "warehouse", &askd.AskInput{Kind: askd.KindApproval, Title: "Backfill March into the events table",
		Payload: []byte(`{"table":"events","from":"2026-03-01","to":"2026-03-31"}`)})
	askAs(t, srv, "agent-1", "", "misc", &askd.AskInput{Kind: askd.KindReady, Title: "The nightly build is green again",
		Details: "The flaky `TestUpload` is quarantined; see the linked run."})
	askAs(t, srv, "helper", "bob", "certs", &askd.AskInput{Kind: askd.KindAction, Title: "Renew the TLS certificate for status.example.com",
		Details: "It expires in **6 days**; the DNS challenge needs a record only you can add."})
	mig := askAs(t, srv, "deployer", "team:platform", "api-v2", &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{
		question("How should the orders table be migrated?", "Migration", false, "Online: copy in the background, then switch", "Offline: ten minutes of downtime tonight"),
	}})
	roll, err := srv.App.Create(ctx, askd.Caller{Name: "deployer", Role: askd.RoleAgent, Session: "api-v2", Owner: "team:platform"},
		&askd.AskInput{Kind: askd.KindApproval, Title: "Roll out api v2.14 to production",
			Details: "Canary was clean for 2 h: error rate 0.02 %, p99 180 ms.",
			Payload: []byte(`{"service":"api","version":"2.14.0","strategy":"rolling","max_unavailable":1}`)}, app.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.App.Claim(ctx, carol, roll.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.App.Claim(ctx, bob, mig.ID); err != nil {
		t.Fatal(err)
	}
}

// formScene adds to the scene's inbox the two form asks of a release
// session (an MCP server's form, and its request to open an address, asked
// a minute and a half ago) and returns the form's id. clk is the server's
// clock, moved back while they are asked.
func formScene(t *testing.T, srv *testserver.Server, clk *testserver.Clock) int64 {
	t.Helper()
	ctx := context.Background()
	c := askd.Caller{Name: "claude-code", Role: askd.RoleAgent, Session: "release"}
	mk := func(ago time.Duration, in *askd.AskInput, timeout time.Duration) *askd.Ask {
		t.Helper()
		clk.Skip(-ago)
		defer clk.Skip(ago)
		a, err := srv.App.Create(ctx, c, in, app.CreateOptions{Timeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	form := mk(25*time.Second, &askd.AskInput{Kind: askd.KindForm, Source: "github",
		Title: "Create the GitHub release for v2.4.0?\nThe tag is pushed to origin and the release notes are published.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"tag":{"type":"string","title":"Tag","description":"The version, with its leading v","pattern":"^v\\d+\\.\\d+\\.\\d+$","default":"v2.4.0"},` +
			`"channel":{"type":"string","title":"Channel","oneOf":[{"const":"stable","title":"Stable"},{"const":"beta","title":"Beta"},{"const":"nightly","title":"Nightly"}],"default":"stable"},` +
			`"publish_on":{"type":"string","title":"Publish on","format":"date","default":"2026-12-14"},` +
			`"retries":{"type":"integer","title":"Upload retries","minimum":0,"maximum":5,"default":3},` +
			`"announce":{"type":"boolean","title":"Announce in the changelog feed","default":true},` +
			`"reviewers":{"type":"array","title":"Teams to review","items":{"anyOf":[{"const":"docs","title":"Docs"},{"const":"security","title":"Security"},{"const":"release-eng","title":"Release engineering"}]},"minItems":1,"maxItems":2,"default":["release-eng"]},` +
			`"highlights":{"type":"string","title":"Highlights","description":"One line for the announcement","maxLength":200}` +
			`},"required":["tag","channel","reviewers"]}`)}, 10*time.Minute)
	mk(75*time.Second, &askd.AskInput{Kind: askd.KindForm, Source: "github",
		Title: "Authorize the release bot to publish on your behalf.\nEnter the code WDJB-MJHT on the page.",
		URL:   "https://github.com/login/device?user_code=WDJB-MJHT"}, time.Hour)
	return form.ID
}

// ruleScene makes two rules in scene's inbox (allow go test in
// api-refactor, deny a title in infra) and a permission prompt the first
// answers; it returns that prompt's id.
func ruleScene(t *testing.T, srv *testserver.Server) int64 {
	t.Helper()
	ctx := context.Background()
	// The scene's agents asked through the app: rules need their tokens.
	srv.Token(t, "claude-code", askd.RoleAgent)
	srv.Token(t, "codex", askd.RoleAgent)
	for _, session := range []string{"api-refactor", "infra"} {
		var a *askd.Ask
		for _, x := range srv.Pending(t, session, 1) {
			if x.Kind == askd.KindApproval {
				a = x
			}
		}
		in := &askd.RuleInput{AskID: a.ID, Match: askd.MatchTitle, Effect: askd.EffectDeny, RuleLife: askd.RuleLife{For: "1d"}}
		if a.ToolName == "Bash" {
			in.Match, in.Prefix, in.Effect, in.For = askd.MatchPrefix, "go test", askd.EffectAllow, "7d"
		}
		if _, err := srv.Human().CreateRule(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	perm, err := app.PermissionAsk(&askd.PermissionInput{ToolName: "Bash", ToolUseID: "toolu_02",
		Input: []byte(`{"command":"go test ./internal/web","description":"Run the inbox's tests"}`)})
	if err != nil {
		t.Fatal(err)
	}
	a, err := srv.App.Create(ctx, askd.Caller{Name: "claude-code", Role: askd.RoleAgent, Session: "api-refactor"}, perm, app.CreateOptions{})
	if err != nil || a.Status != askd.StatusAnswered {
		t.Fatalf("the prompt the rule answers: %v, %v", a, err)
	}
	return a.ID
}

// settledPage is true once no animation or transition runs and the page's
// height is the same as at the previous look (polled by waitFor): what a
// screenshot shows is then what a person would see.
const settledPage = `(h => { const same = window.__height === h; window.__height = h; return same && document.getAnimations().every(a => a.playState !== 'running'); })(document.documentElement.scrollHeight)`

// scene fills the inbox with a realistic morning's asks and returns the id
// of the newest; clk is the server's clock, moved on to time one ask out.
func scene(t *testing.T, srv *testserver.Server, clk *testserver.Clock) int64 {
	t.Helper()
	ctx := context.Background()
	human, _ := srv.App.Authenticate(ctx, srv.HumanToken)
	mk := func(session string, in *askd.AskInput, timeout time.Duration) *askd.Ask {
		t.Helper()
		c := askd.Caller{Name: "claude-code", Role: askd.RoleAgent, Session: session}
		if session == "ci-nightly" || session == "infra" {
			c.Name = "codex"
		}
		a, err := srv.App.Create(ctx, c, in, app.CreateOptions{Timeout: timeout})
		if err != nil {
			t.Fatalf("%s: %v", session, err)
		}
		return a
	}
	// Settled first, so they are older.
	done := mk("api-refactor", &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{
		question("Which database should the job queue use?", "Queue", false, "SQLite: one file, no server", "Postgres: shared with the API"),
	}}, time.Hour)
	srv.App.Answer(ctx, human, done.ID, &askd.Answer{Answers: map[string]askd.Choice{done.Questions[0].Question: {Values: []string{"Postgres"}}}})
	dis := mk("docs-site", &askd.AskInput{Kind: askd.KindAction, Title: "Review the new landing page copy"}, 0)
	srv.App.Dismiss(ctx, human, dis.ID, "Marketing owns this now, skip it")
	to := mk("ci-nightly", &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{
		question("Retry the flaky e2e suite?", "Retry", false, "Yes", "No"),
	}}, time.Millisecond)
	// Its deadline a millisecond away: pass it, and expire the ask.
	clk.Skip(time.Second)
	if err := srv.App.ExpireDue(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := srv.App.Get(ctx, human, to.ID); err != nil || got.CancelReason != askd.ReasonTimeout {
		t.Fatalf("ask %d after its deadline: %v, %v; want timed out", to.ID, got, err)
	}
	wd := mk("infra", &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{
		question("Which region for the replica?", "Region", false, "eu-west-1", "us-east-1"),
	}}, time.Hour)
	agent := askd.Caller{Name: "codex", Role: askd.RoleAgent, Session: "infra"}
	srv.App.Withdraw(ctx, agent, wd.ID)
	ed := mk("api-refactor", &askd.AskInput{Kind: askd.KindApproval, Title: "Bump the Go toolchain in CI",
		Payload: []byte(`{"file":".github/workflows/ci.yml","go":"1.25","cache":true}`)}, 0)
	srv.App.Answer(ctx, human, ed.ID, &askd.Answer{Decision: "modified", Payload: []byte(`{"file":".github/workflows/ci.yml","go":"1.26","cache":true}`)})

	// Pending, oldest first.
	mk("infra", &askd.AskInput{Kind: askd.KindApproval, Title: "Apply the Terraform plan to staging",
		Details: "**Plan:** 3 to add, 1 to change, 0 to destroy.\n\n```\n+ module.db.aws_db_instance.replica\n~ module.cache.aws_elasticache_cluster.main\n```",
		Payload: []byte(`{"workspace":"staging","targets":["module.db","module.cache"],"auto_approve":false}`)}, 0)
	mk("ci-nightly", &askd.AskInput{Kind: askd.KindBlocked, Title: "Nightly release is blocked: the signing key expired yesterday",
		Details: "Upload a new key to the CI secrets as `SIGNING_KEY`, then answer here and I will re-run the release."}, 0)
	mk("docs-site-build", &askd.AskInput{Kind: askd.KindReady, Title: "The docs preview is up for review",
		Details: "Changed: *Getting started*, *Tokens*, and the API reference for `/api/asks`."}, 0)
	mk("docs-site", &askd.AskInput{Kind: askd.KindDecision, Title: "Publish the v2 docs now, or wait for the API freeze?",
		Details: "Two endpoints may still change names this week.", Recommended: "Wait for the freeze",
		Options: []askd.Option{{Label: "Publish now", Description: "fix renames in a follow-up"}, {Label: "Wait for the freeze", Description: "about three days"}}}, 0)
	mk("api-refactor", &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{
		question("Which checks must pass before merge?", "Checks", true, "lint: go vet and staticcheck", "tests: go test -race", "e2e: browser tests, 4 min"),
	}}, time.Hour)
	q := askd.Question{Question: "How should the settings page be laid out?", Header: "Layout", Options: []askd.Option{
		{Label: "Tabs", Description: "one tab per area", Preview: "**Settings**\n\n| Profile | Tokens | Notifications |\n|---|---|---|\n| name, avatar | list, revoke | email, Slack |\n\nOne area at a time; short pages."},
		{Label: "Single page", Description: "everything, with anchors", Preview: "**Settings**\n\n- Profile\n- Tokens\n- Notifications\n\nOne long page; `Ctrl+F` finds anything."},
	}}
	newest := mk("api-refactor", &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{q}}, time.Hour).ID
	perm, err := app.PermissionAsk(&askd.PermissionInput{ToolName: "Bash", ToolUseID: "toolu_01",
		Input: []byte(`{"command":"go test -race ./internal/...","description":"Run the internal packages' tests with the race detector"}`)})
	if err != nil {
		t.Fatal(err)
	}
	mk("api-refactor", perm, 0)
	return newest
}
