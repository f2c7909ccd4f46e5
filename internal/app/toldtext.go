package app

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/askd-dev/askd"
)

// ToldText is how a settled ask reads when it is handed to the agent as its
// next prompt (the Stop hook's reason, check_ask's message, delivery channels):
//
//	The user answered your ask #12 (decision: "Deploy on Monday or Friday?"): Monday
//	The user closed your ask #12 (ready: "Ready for review") without answering it.
//
// followed by any reply or comment the person gave. A pending ask reads as
// still waiting.
func ToldText(a *askd.Ask) string {
	what := fmt.Sprintf("#%d (%s: %q)", a.ID, a.Kind, a.Summary())
	noun := "ask"
	if a.Kind == askd.KindApproval {
		noun = "request"
	}
	var b strings.Builder
	switch {
	case a.Pending():
		fmt.Fprintf(&b, "Your %s %s is still waiting for an answer.", noun, what)
	case a.Status == askd.StatusAnswered && a.Answer != nil:
		ans := a.Answer
		switch a.Kind {
		case askd.KindApproval:
			switch ans.Decision {
			case askd.DecisionApproved:
				fmt.Fprintf(&b, "The user approved your request %s.", what)
			case askd.DecisionModified:
				fmt.Fprintf(&b, "The user approved your request %s with changes; use this payload instead: %s", what, ans.Payload)
			default:
				fmt.Fprintf(&b, "The user rejected your request %s.", what)
			}
			if ans.Comment != "" {
				fmt.Fprintf(&b, " Their comment: %s", ans.Comment)
			}
		case askd.KindQuestion:
			fmt.Fprintf(&b, "The user answered your question %s:", what)
			if len(ans.Answers) == 0 {
				fmt.Fprintf(&b, " %s", ans.Response)
				break
			}
			for i, q := range a.Questions {
				if i > 0 {
					b.WriteString(";")
				}
				fmt.Fprintf(&b, " %q = %q", q.Question, ans.Answers[q.Question].Joined())
			}
			if ans.Response != "" {
				fmt.Fprintf(&b, ". They added: %s", ans.Response)
			}
		case askd.KindForm:
			if ans.Action == askd.FormDecline {
				fmt.Fprintf(&b, "The user declined your form %s.", what)
				break
			}
			fmt.Fprintf(&b, "The user accepted your form %s", what)
			if ans.Content != nil {
				content, _ := json.Marshal(ans.Content)
				fmt.Fprintf(&b, ": %s", content)
			} else {
				b.WriteString(".")
			}
		default:
			fmt.Fprintf(&b, "The user answered your %s %s: %s", noun, what, ans.Answer)
		}
	case a.CancelReason == askd.ReasonDismissed:
		fmt.Fprintf(&b, "The user closed your %s %s without answering it.", noun, what)
		if a.Answer != nil && a.Answer.Response != "" {
			fmt.Fprintf(&b, " They said: %s", a.Answer.Response)
		}
	case a.CancelReason == askd.ReasonTimeout:
		fmt.Fprintf(&b, "No one answered your %s %s in time; proceed on your own judgement, or ask again.", noun, what)
	case a.CancelReason == askd.ReasonWithdrawn:
		fmt.Fprintf(&b, "Your %s %s was withdrawn.", noun, what)
	case a.CancelReason == askd.ReasonReplaced:
		fmt.Fprintf(&b, "Your %s %s was replaced by a newer one.", noun, what)
	default:
		fmt.Fprintf(&b, "Your %s %s is %s.", noun, what, a.Status)
	}
	return b.String()
}

// HumanDuration writes a timeout as people say it: "5 minutes", "90 seconds".
func HumanDuration(d time.Duration) string {
	plural := func(n int64, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return fmt.Sprintf("%d %ss", n, unit)
	}
	switch {
	case d < time.Second:
		return plural(int64(d.Round(time.Millisecond)/time.Millisecond), "millisecond")
	case d%time.Hour == 0:
		return plural(int64(d/time.Hour), "hour")
	case d%time.Minute == 0:
		return plural(int64(d/time.Minute), "minute")
	}
	return plural(int64(d.Round(time.Second)/time.Second), "second")
}
