package app

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/askd-dev/askd"
)

// # Quorum (SPEC §11)
//
// An admin's policy (askd.Policy) makes the approvals it covers need
// several distinct people. A new approval takes the strictest quorum of the
// policies covering it when it is made (quorumFor), kept with the ask. Each
// approval is then counted by countAnswer, in the settle transaction, which reads
// the ask: writers take turns (askd.Store.Update), so of two approvals at
// once the later sees the earlier, and each counts once. The ask stays
// pending, a history row approved_in_part per approval, until the count is
// full; then it is answered, once, through the one settle path, and the
// agent hears one decision as for any approval.
// One rejection decides at once. An edit (decision modified with another
// payload) starts the count again with the editor's approval, which
// carries the edited payload the others then approve (the ask's Payload
// stays the agent's, so that a retried tool call still finds it the same);
// the decision, once full, is modified with it.
//
// An approval counted short of the quorum (settle) tells the agent nothing,
// so the before-tell gate is not asked (settleGated); it leaves the ask's
// UpdatedAt, so a team's escalation is not put off (escalate.go); and it
// notifies the people who have not approved (notifypeople.go), whose
// notifications say the count (QuorumText). Nobody who approved gets answer
// buttons again, and a link minted before an edit approves nothing
// (answerlinks.go). A prompt relayed from the Claude Code terminal can be
// allowed there alone, which askd only records (relay.go).

// quorumFor sets new approval a's quorum from the policies covering it: the
// most approvals any asks for, and ExcludeOwner if any excludes the owner.
func quorumFor(ctx context.Context, tx askd.Tx, a *askd.Ask) error {
	if a.Kind != askd.KindApproval {
		return nil
	}
	ps, err := tx.Policies.Policies(ctx)
	if err != nil {
		return err
	}
	for _, p := range ps {
		if !p.Covers(a) {
			continue
		}
		a.ApprovalsNeeded = max(a.ApprovalsNeeded, p.Approvals)
		a.ExcludeOwner = a.ExcludeOwner || p.ExcludeOwner
	}
	return nil
}

// countAnswer counts by's answer ans (checked already) on pending ask a:
// one answer settles a, except an approval a policy covers, which is
// counted toward its quorum and settles a when the count is full. It
// returns the history action and note for settle. The same person approving twice is ECONFLICT carrying the
// ask; the agent's owner approving where the policy excludes them is
// EFORBIDDEN.
func (s *Service) countAnswer(a *askd.Ask, by string, ans *askd.Answer) (action, note string, err error) {
	now := s.now()
	if a.ApprovalsNeeded == 0 || ans.Decision == askd.DecisionRejected {
		a.Settle(askd.StatusAnswered, "", ans, by, now)
		return askd.ActionAnswered, "", nil
	}
	if a.ExcludeOwner && a.Owner == by {
		return "", "", askd.Errorf(askd.EFORBIDDEN, "ask %d is by an agent of yours, and its policy needs %d other people to approve it", a.ID, a.ApprovalsNeeded)
	}
	edit := ans.Decision == askd.DecisionModified && !bytes.Equal(compactJSON(ans.Payload), compactJSON(a.Approving()))
	switch {
	case edit:
		a.Approvals = []askd.Approval{{By: by, At: now, Payload: ans.Payload}}
		note = "edited the payload: the count starts again"
	case a.ApprovedBy(by):
		return "", "", &askd.Error{Code: askd.ECONFLICT, Ask: a, Message: fmt.Sprintf(
			"you have approved ask %d already; it needs %s from other people", a.ID, plural(a.ApprovalsNeeded-len(a.Approvals), "more approval"))}
	default:
		a.Approvals = append(a.Approvals, askd.Approval{By: by, At: now})
	}
	if len(a.Approvals) < a.ApprovalsNeeded {
		return askd.ActionApprovedInPart, joinNote(note, approvalCount(a)), nil
	}
	final := &askd.Answer{Decision: askd.DecisionApproved, Comment: ans.Comment}
	if edited := a.Approvals[0].Payload; edited != nil {
		final.Decision, final.Payload = askd.DecisionModified, edited
	}
	a.Settle(askd.StatusAnswered, "", final, by, now)
	return askd.ActionAnswered, joinNote(note, approvalCount(a)), nil
}

// approvalCount is what an ask's approvals come to: "1 of 2 approvals, by
// alice".
func approvalCount(a *askd.Ask) string {
	by := make([]string, len(a.Approvals))
	for i, ap := range a.Approvals {
		by[i] = ap.By
	}
	return fmt.Sprintf("%d of %d approvals, by %s", len(a.Approvals), a.ApprovalsNeeded, strings.Join(by, ", "))
}

// countSoFar is approvalCount, also for none yet: "0 of 2 approvals".
func countSoFar(a *askd.Ask) string {
	if len(a.Approvals) == 0 {
		return fmt.Sprintf("0 of %d approvals", a.ApprovalsNeeded)
	}
	return approvalCount(a)
}

// QuorumText is what a notification of covered approval a, still pending,
// says of its count: "Needs 2 approvals.", "1 of 2 approvals, by alice; it
// needs 1 more." (with who edited the payload, when someone did); "" for
// any other ask.
func QuorumText(a *askd.Ask) string {
	switch {
	case a.ApprovalsNeeded == 0 || !a.Pending():
		return ""
	case len(a.Approvals) == 0:
		return fmt.Sprintf("Needs %d approvals.", a.ApprovalsNeeded)
	}
	s := fmt.Sprintf("%s; it needs %d more.", approvalCount(a), a.ApprovalsNeeded-len(a.Approvals))
	if a.Approvals[0].Payload != nil {
		s += " " + a.Approvals[0].By + " edited what it approves: the count started again."
	}
	return s
}

// joinNote joins two history notes, either of which may be "".
func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// PolicyCovers reports whether a policy covers the approval in would make
// for agent c: what the PermissionRequest hook of a channel session asks
// before it takes a prompt away from the terminal (relay.go). It reads the
// policies as they are now; Create reads them again.
func (s *Service) PolicyCovers(ctx context.Context, c askd.Caller, in *askd.AskInput) (bool, error) {
	if c.Role != askd.RoleAgent {
		return false, askd.Errorf(askd.EFORBIDDEN, "only agent tokens ask whether a policy covers their approval")
	}
	a := &askd.Ask{Kind: in.Kind, Agent: c.Name, Owner: c.Owner, Title: in.Title, ToolName: in.ToolName, Payload: in.Payload}
	err := s.store.View(ctx, func(tx askd.Tx) error { return quorumFor(ctx, tx, a) })
	return a.ApprovalsNeeded > 0, err
}
