package askd

import (
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
)

// The orders lists come in, and the keys that page through them. A key is
// the place of one item in its order; a page starts after the key of the
// last item of the page before, so items that arrive or go between pages
// move no other item: none is skipped or repeated (keyset paging, not
// offsets).

// UrgencyKey is a pending ask's place in urgency order: asks with a
// deadline first, soonest first (on a tie the lower id first), then the
// asks without one, newest (highest id) first. Neither part of the key
// changes while an ask is pending.
type UrgencyKey struct {
	Deadline *time.Time // nil: the ask has none
	ID       int64
}

// UrgencyKeyOf is a's place in urgency order.
func UrgencyKeyOf(a *Ask) UrgencyKey { return UrgencyKey{Deadline: a.Deadline, ID: a.ID} }

// PendingQuery selects pending asks, in urgency order (AskTx.PendingAsks).
// Zero fields match everything.
type PendingQuery struct {
	Agent   string
	Session string
	Kind    Kind
	After   *UrgencyKey // only asks after this place; nil: from the most urgent
	Limit   int         // at most this many, when above 0
	Routes  []string    // when not nil: a person's Mine, as AskFilter.Routes
}

// SessionKey is a session's place in the order sessions are listed: by
// agent token name, then session name, both by bytes.
type SessionKey struct{ Agent, Name string }

// SessionQuery selects sessions that have asks (SessionTx.Sessions). The zero
// query is every one.
type SessionQuery struct {
	After *SessionKey // only sessions after this place; nil: from the first
	Limit int         // at most this many, when above 0
	// Routes, when not nil, is a person's Mine (as AskFilter.Routes): only
	// the asks it matches are counted, and only sessions with such asks
	// listed.
	Routes []string
}

// SettledKey is a settled ask's place in the history's order: most
// recently settled first, on a tie the higher id first.
type SettledKey struct {
	SettledAt time.Time
	ID        int64
}

// SettledKeyOf is settled ask a's place in the history's order.
func SettledKeyOf(a *Ask) SettledKey {
	var k SettledKey
	if a.SettledAt != nil {
		k.SettledAt = *a.SettledAt
	}
	k.ID = a.ID
	return k
}

// Outcome is how a settled ask ended: answered, or the reason it was
// cancelled.
type Outcome string

const (
	OutcomeAnswered  Outcome = "answered"
	OutcomeDismissed Outcome = Outcome(ReasonDismissed)
	OutcomeTimeout   Outcome = Outcome(ReasonTimeout)
	OutcomeWithdrawn Outcome = Outcome(ReasonWithdrawn)
	OutcomeReplaced  Outcome = Outcome(ReasonReplaced)
)

// Outcomes lists every outcome.
var Outcomes = []Outcome{OutcomeAnswered, OutcomeDismissed, OutcomeTimeout, OutcomeWithdrawn, OutcomeReplaced}

// Valid reports whether o is one of Outcomes.
func (o Outcome) Valid() bool {
	for _, v := range Outcomes {
		if o == v {
			return true
		}
	}
	return false
}

// Status and CancelReason are the stored fields o stands for.
func (o Outcome) Status() (Status, CancelReason) {
	if o == OutcomeAnswered {
		return StatusAnswered, ""
	}
	return StatusCancelled, CancelReason(o)
}

// Outcome is how a ended; "" while it is pending.
func (a *Ask) Outcome() Outcome {
	switch a.Status {
	case StatusAnswered:
		return OutcomeAnswered
	case StatusCancelled:
		return Outcome(a.CancelReason)
	}
	return ""
}

// SearchQuery selects settled asks, most recently settled first
// (AskTx.SearchAsks). Zero fields match everything.
type SearchQuery struct {
	// Words must each be a word of the ask's text: its title, details,
	// questions and their headers, the labels and descriptions of its
	// options, and its answer (chosen labels, own words, the reply or
	// response, a comment). The last word also matches the words it begins
	// ("dep" finds "deploy"). Case does not matter. Words come from
	// SearchWords.
	Words     []string
	Agent     string
	Session   string
	Kind      Kind
	Outcome   Outcome
	SettledBy string      // who settled it: the person, "askd" for a timeout, the agent for a withdrawal
	After     *SettledKey // only asks after this place; nil: from the most recent
	Limit     int         // at most this many, when above 0
}

// SearchText is the text a search of the history looks in (SearchQuery.Words),
// as its words (SearchWords) separated by spaces: the ask's title, details,
// questions and their headers, the labels and descriptions of its options,
// and its answer: chosen labels or own words, the reply or response, a
// comment. Not previews, nor payloads, whose keys and values are the agent's
// data rather than words anyone wrote to be read.
func (a *Ask) SearchText() string {
	parts := []string{a.Title, a.Details}
	for _, q := range a.Questions {
		parts = append(parts, q.Question, q.Header)
		for _, o := range q.Options {
			parts = append(parts, o.Label, o.Description)
		}
	}
	for _, o := range a.Options {
		parts = append(parts, o.Label, o.Description)
	}
	if ans := a.Answer; ans != nil {
		parts = append(parts, ans.Answer, ans.Response, ans.Comment)
		// In the order of the questions, so the text is the same each time.
		for _, q := range a.Questions {
			parts = append(parts, ans.Answers[q.Question].Values...)
		}
		var others []string // answers to no question of the ask: none, once checked
		for k := range ans.Answers {
			if !slices.ContainsFunc(a.Questions, func(q Question) bool { return q.Question == k }) {
				others = append(others, k)
			}
		}
		slices.Sort(others)
		for _, k := range others {
			parts = append(parts, ans.Answers[k].Values...)
		}
		parts = append(parts, contentWords(ans.Content)...)
	}
	parts = append(parts, a.Source, a.URL)
	return strings.Join(SearchWords(strings.Join(parts, " ")), " ")
}

// contentWords are a form answer's text values, by field name, so that the
// text is the same each time.
func contentWords(content map[string]any) []string {
	var words []string
	for _, k := range slices.Sorted(maps.Keys(content)) {
		switch v := content[k].(type) {
		case string:
			words = append(words, v)
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok {
					words = append(words, s)
				}
			}
		}
	}
	return words
}

// SearchWords splits text into the words a search looks for: the runs of
// letters and digits (Unicode categories L, N and Co, the characters the
// stores' full-text indexes keep); everything else separates them.
func SearchWords(text string) []string {
	var words []string
	start := -1
	for i, r := range text {
		in := unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			words = append(words, text[start:i])
			start = -1
		}
	}
	if start >= 0 {
		words = append(words, text[start:])
	}
	return words
}
