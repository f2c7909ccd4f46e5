package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/chromedp/chromedp"
)

// TestGitPushCard: an approval askd gate git makes (SPEC §12) shows what a
// person decides on: the tool and "<repository> <ref>" as its headline, the
// title saying what the push does, the commits and diffstat as code, and
// its full input folded away (its fields are all said above it); a rule by
// its command's prefix says so in the Rules view.
func TestGitPushCard(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	details := "refs/heads/main, 1a2b3c4d5e6f..0f9e8d7c6b5a, /srv/git/shop.git.\n\nNew commits, newest first:\n```\n0f9e8d7c6b5a Charge in *cents*\n7a6b5c4d3e2f Add `price`\n```\n\nDiffstat:\n```\n cart.go | 4 ++--\n 1 file changed, 2 insertions(+), 2 deletions(-)\n```\n"
	a := createFor(t, srv, "shop", &askd.AskInput{Kind: askd.KindApproval, Title: "Push 2 commits to main in shop", Details: details, ToolName: "git push",
		Payload: []byte(`{"command":"/srv/git/shop.git refs/heads/main","repository":"/srv/git/shop.git","ref":"refs/heads/main","old":"1a2b3c4d5e6f1a2b3c4d5e6f1a2b3c4d5e6f1a2b","new":"0f9e8d7c6b5a0f9e8d7c6b5a0f9e8d7c6b5a0f9e","kind":"update"}`)}, 0)
	p := openInbox(t, srv, "/")
	p.waitFor(fmt.Sprintf(`!!document.querySelector('%s .details .md')`, card(a.ID)))
	if got := p.text(card(a.ID) + " .tool-name"); got != "git push" {
		t.Errorf("tool %q", got)
	}
	if got := p.text(card(a.ID) + " .tool-target"); got != "/srv/git/shop.git refs/heads/main" {
		t.Errorf("headline %q", got)
	}
	if got := p.text(card(a.ID) + " .subtitle"); got != "Push 2 commits to main in shop" {
		t.Errorf("subtitle %q", got)
	}
	commits := eval[string](p, fmt.Sprintf(`[...document.querySelectorAll('%s .details .md pre')].map(e => e.textContent).join('|')`, card(a.ID)))
	for _, want := range []string{"0f9e8d7c6b5a Charge in *cents*", "7a6b5c4d3e2f Add `price`", "cart.go | 4 ++--"} {
		if !strings.Contains(commits, want) {
			t.Errorf("the details' code blocks %q lack %q", commits, want)
		}
	}
	if open := eval[bool](p, fmt.Sprintf(`document.querySelector('%s details.input-box').open`, card(a.ID))); open {
		t.Error("the full input is open, though the card says all of it")
	}
	// Always allow offers this ref of this repository first, whole; the
	// tool-wide rule says it covers every ref.
	if v := eval[string](p, fmt.Sprintf(`document.querySelector('%s .rule-prefix').value`, card(a.ID))); v != "/srv/git/shop.git refs/heads/main" {
		t.Errorf("the prefix offered %q, want the repository and ref", v)
	}
	opts := eval[string](p, fmt.Sprintf(`[...document.querySelectorAll('%s .rule-opt label')].map(e => e.textContent).join('|')`, card(a.ID)))
	for _, want := range []string{"Always allow pushes to", "Always allow git push in this session (any repository and ref)"} {
		if !strings.Contains(opts, want) {
			t.Errorf("the rule choices %q lack %q", opts, want)
		}
	}

	// A rule for pushes to main (by the prefix of the command, as rules
	// and policies match gate asks) reads as what it matches.
	r, err := srv.Human().CreateRule(context.Background(), &askd.RuleInput{AskID: a.ID, Match: askd.MatchPrefix, Prefix: "/srv/git/shop.git refs/heads/main", Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "1h"}})
	if err != nil {
		t.Fatal(err)
	}
	p.do(chromedp.Click(chromedp.CSS(`#views .view-link[data-view="rules"]`)))
	p.waitFor(fmt.Sprintf(`!!document.querySelector('#rules .rule-item[data-id="%d"]')`, r.ID))
	if got := p.text(fmt.Sprintf(`#rules .rule-item[data-id="%d"] .rule-what`, r.ID)); got != "git push starting with /srv/git/shop.git refs/heads/main" {
		t.Errorf("the rule matches %q", got)
	}
}
