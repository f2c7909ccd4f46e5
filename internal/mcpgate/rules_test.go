package mcpgate

import (
	"context"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRules: askd's rules decide the gate's approvals as any other's, by
// mcp__NAME__TOOL: an always-allow rule of the gate's session lets the
// next call of the tool through at once, whatever its arguments, with one
// ask answered by the rule; a deny rule refuses it, the result naming the
// rule.
func TestRules(t *testing.T) {
	f := newFixture(t)
	const session = "rules"
	w := f.watch(t, session)
	g := startGate(t, f.env(), append([]string{"--name", "scripted", "--session", session, "--"}, scripted(t, "")...)...)
	cs := g.connect(t, "", nil)

	made := 0 // asks so far
	for _, effect := range []askd.RuleEffect{askd.EffectAllow, askd.EffectDeny} {
		out := callAsync(cs, context.Background(), "echo", map[string]any{"text": "first " + string(effect)})
		a := w.asked(t)
		rule, err := f.person.CreateRule(context.Background(), &askd.RuleInput{AskID: a.ID, Match: askd.MatchTool, Effect: effect, RuleLife: askd.RuleLife{For: "1h"}})
		if err != nil || rule.Tool != "mcp__scripted__echo" {
			t.Fatalf("rule from the gate's approval: %v, %+v", err, rule)
		}
		f.answer(t, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
		(<-out).must(t)

		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "then " + string(effect)}})
		if err != nil {
			t.Fatal(err)
		}
		byRule, err := f.person.Show(context.Background(), w.asked(t).ID)
		if err != nil || byRule.Pending() || byRule.SettledBy != "rule "+itoa(rule.ID) {
			t.Fatalf("the second call's approval: %v, %s by %q; want answered by rule %d", err, byRule.Status, byRule.SettledBy, rule.ID)
		}
		switch effect {
		case askd.EffectAllow:
			if res.IsError || text(res) != "then allow" {
				t.Fatalf("allowed by a rule: %q", text(res))
			}
		case askd.EffectDeny:
			if !res.IsError || !strings.Contains(text(res), "rejected by rule "+itoa(rule.ID)) {
				t.Fatalf("denied by a rule: %q", text(res))
			}
		}
		// One ask for the call a rule answered: the gate took it as its own.
		made += 2
		if n := len(f.asks(t, session)); n != made {
			t.Fatalf("%d asks after a call a rule answered, want %d", n, made)
		}
		if _, err := f.person.RevokeRule(context.Background(), rule.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPolicy: a policy counts the gate's approvals as any other's, by
// mcp__NAME__TOOL: a call of a tool two people must approve waits past the
// first yes and goes to the server once the second has approved, once.
func TestPolicy(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.person.CreatePolicy(ctx, &askd.PolicyInput{Match: askd.MatchTool, Tool: "mcp__scripted__echo", Approvals: 2}); err != nil {
		t.Fatal(err)
	}
	bob := client.New(f.askd.URL, f.askd.Token(t, "bob", askd.RoleHuman))
	const session = "policy"
	w := f.watch(t, session)
	g := startGate(t, f.env(), append([]string{"--name", "scripted", "--session", session, "--"}, scripted(t, "")...)...)
	cs := g.connect(t, "", nil)

	out := callAsync(cs, ctx, "echo", map[string]any{"text": "two people"})
	a := w.asked(t)
	if a.ApprovalsNeeded != 2 || a.ToolName != "mcp__scripted__echo" {
		t.Fatalf("the approval: needs %d, tool_name %q; want 2, mcp__scripted__echo", a.ApprovalsNeeded, a.ToolName)
	}
	if first := f.answer(t, a.ID, &askd.Answer{Decision: askd.DecisionApproved}); !first.Pending() {
		t.Fatalf("after one approval of two: %s", first.Status)
	}
	// The first yes is an approved_in_part event. A gate that took it for
	// the decision would have the call back about as soon as the stream has
	// the event (no event can say the gate did not), so the check below
	// catches that in most runs; the second yes is what it must wait for.
	w.next(t, askd.ActionApprovedInPart)
	select {
	case o := <-out:
		t.Fatalf("the call returned after one approval of two: %+v, %v", o.res, o.err)
	default:
	}
	if _, err := bob.Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	if res := (<-out).must(t); text(res) != "two people" {
		t.Fatalf("after the second approval: %q", text(res))
	}
	if n := len(f.asks(t, session)); n != 1 {
		t.Errorf("%d asks, want the call's one", n)
	}
}
