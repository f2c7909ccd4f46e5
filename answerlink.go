package askd

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// An AnswerLink is a signed answer link, <public-url>/a/<code>: a button in
// a notification (ntfy, Slack) that answers one ask, at one revision, with
// one answer, once, before ExpiresAt, as the human token Human. The code is
// random; only its SHA-256 (Hash) is stored. A link stops working when it is
// used, when its ask settles (however), when the ask moves on to a newer
// revision, and when it expires; it goes when its ask is purged or its
// human token revoked.
type AnswerLink struct {
	Hash     string
	AskID    int64
	Revision int    // the ask's revision it answers; a newer one refuses it
	Label    string // what the button says (OneTap.Label)
	Answer   Answer // what it answers (OneTap.Answer)
	Human    string // the human token it answers as (askd serve --notify-as)
	// UsedAt is when it answered its ask; nil while unused.
	UsedAt    *time.Time
	CreatedAt time.Time
	ExpiresAt time.Time
}

// OneTap is an answer a person can give with one tap of a notification's
// button: the button's label and the answer it gives.
type OneTap struct {
	Label  string
	Answer Answer
	// Style is how the button looks beside the others: "primary" for the
	// recommended option and for approving, "danger" for rejecting, "" for
	// the rest.
	Style string
	// Optional is true for a tap a notifier leaves out first when it cannot
	// show them all (a form's Decline): the others are what the ask asks.
	Optional bool
}

// Labels of one-tap answers that are not an option's label.
const (
	TapApprove = "Approve" // request_approval
	TapReject  = "Reject"
	TapAllow   = "Allow" // a permission prompt (an approval with a tool)
	TapDeny    = "Deny"
	TapDone    = "Done"    // ready and action asks
	TapDecline = "Decline" // a form of one single-select field
)

// OneTapAnswers returns the answers a person can give a with one tap each,
// in the order to show them; none when answering a takes more than a tap:
//
//   - a question ask of one single-select question: one per option, unless
//     an option has a preview (which only the inbox shows);
//   - a decision with options: one per option;
//   - ready and action asks: "Done";
//   - an approval: Approve and Reject, called Allow and Deny for a
//     permission prompt (never "approve with changes": that needs an edit);
//   - a form of one single-select field (formTaps): one per choice, and
//     Decline, optional;
//   - anything else (several questions, multi-select, a decision without
//     options, a blocked ask, which wants words, any other form, a url-mode
//     form): none.
func (a *Ask) OneTapAnswers() []OneTap {
	switch {
	case a.Kind == KindQuestion:
		if len(a.Questions) != 1 || a.Questions[0].MultiSelect {
			return nil
		}
		q := a.Questions[0]
		out := make([]OneTap, 0, len(q.Options))
		for _, o := range q.Options {
			if o.Preview != "" {
				return nil
			}
			out = append(out, OneTap{Label: o.Label, Answer: Answer{Answers: map[string]Choice{q.Question: {Values: []string{o.Label}}}}})
		}
		return out
	case a.Kind == KindDecision:
		out := make([]OneTap, 0, len(a.Options))
		for _, o := range a.Options {
			t := OneTap{Label: o.Label, Answer: Answer{Answer: o.Label}}
			if o.Label == a.Recommended {
				t.Style = "primary"
			}
			out = append(out, t)
		}
		return out
	case a.Kind == KindReady || a.Kind == KindAction:
		return []OneTap{{Label: TapDone, Answer: Answer{Answer: TapDone}, Style: "primary"}}
	case a.Kind == KindApproval:
		yes, no := TapApprove, TapReject
		if a.ToolName != "" {
			yes, no = TapAllow, TapDeny
		}
		return []OneTap{
			{Label: yes, Answer: Answer{Decision: DecisionApproved}, Style: "primary"},
			{Label: no, Answer: Answer{Decision: DecisionRejected}, Style: "danger"},
		}
	case a.Kind == KindForm:
		return a.formTaps()
	}
	return nil
}

// formTaps are the one-tap answers of a form ask (SPEC §9): only a form in
// form mode whose one field is a single-select, of MinOptions to
// MaxDecisionOptions choices each read in at most MaxLabelChars (what a
// decision may have: no form gets more buttons than a decision could). A
// tap per choice, labelled with its title, answers {"content": {field:
// const}}; the default is the primary one. Decline comes last, Optional (a
// notifier with room for the choices alone shows them alone), and not at
// all when a choice reads "Decline" already: two buttons alike, one
// answering and one declining, would be a trap.
func (a *Ask) formTaps() []OneTap {
	if a.URL != "" {
		return nil
	}
	s, err := ParseFormSchema(a.Schema)
	if err != nil || len(s.Fields) != 1 || s.Fields[0].Type != FieldEnum {
		return nil
	}
	f := s.Fields[0]
	if len(f.Options) < MinOptions || len(f.Options) > MaxDecisionOptions {
		return nil
	}
	out := make([]OneTap, 0, len(f.Options)+1)
	decline := true
	for _, o := range f.Options {
		label := optionLabel(o)
		if utf8.RuneCountInString(label) > MaxLabelChars {
			return nil
		}
		if strings.EqualFold(strings.TrimSpace(label), TapDecline) {
			decline = false
		}
		t := OneTap{Label: label, Answer: Answer{Action: FormAccept, Content: map[string]any{f.Name: o.Const}}}
		if f.Default == o.Const {
			t.Style = "primary"
		}
		out = append(out, t)
	}
	if decline {
		out = append(out, OneTap{Label: TapDecline, Answer: Answer{Action: FormDecline}, Style: "danger", Optional: true})
	}
	return out
}

// AnswerWords says in a few words how a settled ask was answered, for pages
// and messages that show who answered and how: the labels chosen, the
// person's own words, "approved" (or "allowed" for a permission prompt),
// "rejected" ("denied"); a cancelled ask says why.
func (a *Ask) AnswerWords() string {
	switch {
	case a.Pending():
		return "not answered yet"
	case a.Status == StatusCancelled:
		switch a.CancelReason {
		case ReasonTimeout:
			return "no one answered in time"
		case ReasonDismissed:
			return "closed without an answer"
		case ReasonWithdrawn:
			return "withdrawn by the agent"
		case ReasonReplaced:
			return "replaced by a newer ask"
		}
		return string(a.CancelReason)
	case a.Answer == nil:
		return "answered"
	}
	ans := a.Answer
	switch a.Kind {
	case KindApproval:
		tool := a.ToolName != ""
		switch {
		case ans.Decision == DecisionApproved && tool:
			return "allowed"
		case ans.Decision == DecisionApproved:
			return "approved"
		case ans.Decision == DecisionModified:
			return "approved with changes"
		case tool:
			return "denied"
		}
		return "rejected"
	case KindQuestion:
		if len(ans.Answers) == 0 {
			return ans.Response
		}
		var out string
		for i, q := range a.Questions {
			if i > 0 {
				out += "; "
			}
			out += ans.Answers[q.Question].Joined()
		}
		return out
	case KindForm:
		return a.formWords()
	}
	return ans.Answer
}

// formWords says how a form ask was answered: "declined", "done" (url
// mode), the one field's value, or each field's title and value ("Name:
// Ada; Pets: Cat, Dog"); choices by their titles.
func (a *Ask) formWords() string {
	ans := a.Answer
	switch {
	case ans.Action == FormDecline:
		return "declined"
	case a.URL != "":
		return "done"
	}
	s, err := ParseFormSchema(a.Schema)
	if err != nil {
		b, _ := json.Marshal(ans.Content)
		return string(b)
	}
	var parts []string
	for _, f := range s.Fields {
		v, ok := ans.Content[f.Name]
		if !ok || v == nil {
			continue
		}
		if len(s.Fields) == 1 {
			return f.valueWords(v)
		}
		parts = append(parts, cmp.Or(f.Title, f.Name)+": "+f.valueWords(v))
	}
	if len(parts) == 0 {
		return "accepted"
	}
	return strings.Join(parts, "; ")
}

// valueWords is v, a value of f, as a person reads it: a choice by its
// title, several joined with ", ", yes or no, a number as written.
func (f *FormField) valueWords(v any) string {
	title := func(c any) string {
		for _, o := range f.Options {
			if o.Const == c {
				return optionLabel(o)
			}
		}
		return fmt.Sprint(c)
	}
	switch v := v.(type) {
	case bool:
		if v {
			return "yes"
		}
		return "no"
	case []any:
		words := make([]string, len(v))
		for i, c := range v {
			words[i] = title(c)
		}
		return strings.Join(words, ", ")
	case string:
		return title(v)
	}
	return fmt.Sprint(v)
}

// AnswerLinkTx is what a transaction may do with answer links.
type AnswerLinkTx interface {
	// CreateAnswerLink stores l; ENOTFOUND when its ask or its human token
	// does not exist, ECONFLICT when its hash is stored already. Purging the
	// ask or revoking the token deletes it.
	CreateAnswerLink(ctx context.Context, l *AnswerLink) error
	// AnswerLink returns the answer link with the hash, used, expired or
	// not; ENOTFOUND when there is none.
	AnswerLink(ctx context.Context, hash string) (*AnswerLink, error)
	// UseAnswerLink marks the link with the hash used at t; ECONFLICT when
	// it was used already, ENOTFOUND when there is none. Of transactions
	// using one link at once, one succeeds.
	UseAnswerLink(ctx context.Context, hash string, t time.Time) error
	// DeleteExpiredAnswerLinks removes the answer links whose ExpiresAt is
	// before t, and returns how many went.
	DeleteExpiredAnswerLinks(ctx context.Context, t time.Time) (int, error)
}

// optionLabel is what a person reads of a form's choice: its title, or its
// value when it has none.
func optionLabel(o FormOption) string { return cmp.Or(o.Title, o.Const) }
