package askd

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Answer is how a person settled an ask; which fields are set depends on the
// ask's kind (SPEC §3.1). A dismissal stores only Response.
type Answer struct {
	// question: one Choice per question text, and/or a free reply.
	Answers  map[string]Choice `json:"answers,omitempty"`
	Response string            `json:"response,omitempty"`

	// attention asks: a label or the person's own words.
	Answer string `json:"answer,omitempty"`

	// approval
	Decision string          `json:"decision,omitempty"`
	Payload  json.RawMessage `json:"payload,omitempty"`
	Comment  string          `json:"comment,omitempty"`

	// form: accept (with the content in form mode; Done in url mode) or
	// decline.
	Action  string         `json:"action,omitempty"`
	Content map[string]any `json:"content,omitempty"`
}

// checkFormAnswer checks a form ask's answer (SPEC §9): accept with content
// that fits the schema (form mode; action may be left out) or with none
// (url mode: Done), or decline with nothing. Content problems name the field
// alone ("count: 142 is above the maximum 100").
func (a *Ask) checkFormAnswer(p *problems, ans *Answer) {
	if ans.Action == "" && ans.Content != nil {
		ans.Action = FormAccept
	}
	switch ans.Action {
	case FormAccept:
		if a.URL != "" {
			if ans.Content != nil {
				p.add("content", "not for a url-mode form: Done (accept) takes no content")
			}
			return
		}
		s, err := ParseFormSchema(a.Schema)
		if err != nil {
			p.add("schema", "the stored form no longer parses: %s", ErrorMessage(err))
			return
		}
		if ans.Content == nil { // accepted as pre-filled: the defaults
			ans.Content = s.Defaults()
		}
		p.merge(s.check(ans.Content))
	case FormDecline:
		if ans.Content != nil {
			p.add("content", "not with action decline")
		}
	case "":
		p.add("action", "required, accept or decline (or content, which accepts)")
	default:
		p.add("action", "%q is not one of accept, decline", ans.Action)
	}
}

// Choice is the answer to one question: one value (a label or own words) for a
// single-select question, a list for a multi-select one. It is a JSON string or
// a JSON list of strings.
type Choice struct {
	Values []string
	Multi  bool
}

// MarshalJSON writes a multi-select choice as a list, a single one as a string.
func (c Choice) MarshalJSON() ([]byte, error) {
	if c.Multi {
		if c.Values == nil {
			return []byte("[]"), nil
		}
		return json.Marshal(c.Values)
	}
	if len(c.Values) == 0 {
		return []byte(`""`), nil
	}
	return json.Marshal(c.Values[0])
}

// UnmarshalJSON reads a string or a list of strings.
func (c *Choice) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*c = Choice{Values: []string{s}}
		return nil
	}
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return Errorf(EINVALID, "answers: each value must be a string or a list of strings")
	}
	*c = Choice{Values: l, Multi: true}
	return nil
}

// Joined is the choice as one string, list items joined with ", " (Claude's
// AskUserQuestion form for multi-select answers).
func (c Choice) Joined() string { return strings.Join(c.Values, ", ") }

// CheckAnswer validates a person's answer against the ask it is for, and
// normalizes it (a multi-select answer given as one string becomes a list).
// It does not look at the ask's status.
func (a *Ask) CheckAnswer(ans *Answer) error {
	var p problems
	not := func(field string, set bool) {
		if set {
			p.add(field, "not for %s asks", a.Kind)
		}
	}
	if a.Kind != KindForm {
		not("action", ans.Action != "")
		not("content", ans.Content != nil)
	}
	switch {
	case a.Kind == KindForm:
		not("answers", ans.Answers != nil)
		not("response", ans.Response != "")
		not("answer", ans.Answer != "")
		not("decision", ans.Decision != "")
		not("payload", ans.Payload != nil)
		not("comment", ans.Comment != "")
		a.checkFormAnswer(&p, ans)
	case a.Kind == KindQuestion:
		not("answer", ans.Answer != "")
		not("decision", ans.Decision != "")
		not("payload", ans.Payload != nil)
		not("comment", ans.Comment != "")
		p.text("response", ans.Response, 0, MaxAnswerChars)
		if len(ans.Answers) == 0 {
			if ans.Response == "" {
				p.add("answers", "required: answer every question, or give a response alone")
			}
			break
		}
		known := map[string]Question{}
		for _, q := range a.Questions {
			known[q.Question] = q
		}
		keys := make([]string, 0, len(ans.Answers))
		for k := range ans.Answers {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if _, ok := known[k]; !ok {
				p.add(fmt.Sprintf("answers[%q]", k), "no such question in this ask")
			}
		}
		for _, q := range a.Questions {
			path := fmt.Sprintf("answers[%q]", q.Question)
			c, ok := ans.Answers[q.Question]
			if !ok {
				p.add(path, "not answered; every question needs an answer")
				continue
			}
			if c.Multi && !q.MultiSelect {
				p.add(path, "a list, but this question takes one answer")
				continue
			}
			c.Multi = q.MultiSelect
			checkChoice(&p, path, q, c)
			ans.Answers[q.Question] = c
		}
	case a.Kind.IsAttention():
		not("answers", ans.Answers != nil)
		not("response", ans.Response != "")
		not("decision", ans.Decision != "")
		not("payload", ans.Payload != nil)
		not("comment", ans.Comment != "")
		p.text("answer", ans.Answer, 1, MaxAnswerChars)
	case a.Kind == KindApproval:
		not("answers", ans.Answers != nil)
		not("response", ans.Response != "")
		not("answer", ans.Answer != "")
		switch ans.Decision {
		case DecisionApproved, DecisionRejected:
			if ans.Payload != nil {
				p.add("payload", "only with decision modified")
			}
		case DecisionModified:
			if ans.Payload == nil {
				p.add("payload", "required with decision modified")
			} else {
				validateObject(&p, "payload", ans.Payload)
			}
		case "":
			p.add("decision", "required, one of approved, modified, rejected")
		default:
			p.add("decision", "%q is not one of approved, modified, rejected", ans.Decision)
		}
		p.text("comment", ans.Comment, 0, MaxAnswerChars)
	}
	return p.err()
}

func checkChoice(p *problems, path string, q Question, c Choice) {
	if len(c.Values) == 0 {
		p.add(path, "empty; choose at least one option or give your own words")
		return
	}
	own, seen := 0, map[string]bool{}
	for i, v := range c.Values {
		vp := path
		if q.MultiSelect {
			vp = fmt.Sprintf("%s[%d]", path, i)
		}
		if seen[v] {
			p.add(vp, "%q given twice", v)
		}
		seen[v] = true
		if !hasLabel(q.Options, v) {
			own++
			p.text(vp, v, 1, MaxAnswerChars)
		}
	}
	if own > 1 {
		p.add(path, "%d values are not option labels; at most one may be the person's own words", own)
	}
}

// Settle marks a pending ask answered or cancelled at t by who. It does not
// check anything; the app layer does.
func (a *Ask) Settle(status Status, reason CancelReason, ans *Answer, by string, t time.Time) {
	a.Status = status
	a.CancelReason = reason
	a.Answer = ans
	a.SettledBy = by
	a.SettledAt = &t
	a.UpdatedAt = t
	a.ClaimedBy, a.ClaimedAt = "", nil // settling ends a claim (SPEC §10)
}
