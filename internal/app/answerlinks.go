package app

import (
	"context"
	"crypto/rand"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/askd-dev/askd"
)

// Answering from a notification (docs/notifications.md). A notification's
// buttons are signed answer links, <public-url>/a/<code>, one per one-tap
// answer of the ask (Ask.OneTapAnswers). Each is minted when the
// notification is sent, in a transaction that commits before it leaves, and
// answers its ask:
//
//   - with its one answer, at the revision the notification showed (a newer
//     revision of an attention ask refuses it);
//   - once: using it settles the ask (settle: writers take turns,
//     askd.Store.Update), after which every link of the ask only shows who
//     answered and how;
//   - before it expires: at the ask's deadline, or AnswerLinkTTL after it
//     was minted, whichever comes first;
//   - as the human token Config.NotifyAs (askd serve --notify-as), recorded
//     in the ask's history as that person's answer with a note saying how
//     ("via link", "via Slack (user U123/alice)").
//
// Codes are 130 random bits, stored only as their SHA-256, like tokens. A
// link does nothing on its own: opening it (GET) shows what it would do, and
// only confirming (POST) answers, so link scanners and previews that fetch
// it change nothing. A link's answer goes through the before-tell gate like
// any other person's.

// AnswerLinkTTL is how long an answer link works at most: a day covers a
// notification read the next morning; a link found in a notification
// history later answers nothing.
const AnswerLinkTTL = 24 * time.Hour

// expiredLinkKept is how long an expired answer link is kept, so that it
// still says it expired.
const expiredLinkKept = 7 * 24 * time.Hour

// LinkState says what an answer link can still do.
type LinkState string

const (
	LinkOpen LinkState = "open" // confirming it answers its ask
	// LinkUnknown: no link has the code: mistyped or tampered with, or gone
	// with its ask (purged) or its human token (revoked), or long expired.
	LinkUnknown LinkState = "unknown"
	LinkExpired LinkState = "expired"
	// LinkChanged: the ask has a newer revision than the notification
	// showed; its newer notification has links of its own.
	LinkChanged LinkState = "changed"
	// LinkSettled: the ask is answered or closed, by this link or otherwise.
	LinkSettled LinkState = "settled"
)

// LinkView is what an answer link shows.
type LinkView struct {
	State LinkState
	Link  *askd.AnswerLink // nil when unknown
	Ask   *askd.Ask        // the ask as it is now; nil when unknown
	// Note is the settling event's note, for a settled ask: how it was
	// answered ("via link", "via Slack (user U123/alice)"), if it says.
	Note string
	// Answered is true when this request answered the ask.
	Answered bool
}

// MintedLink is an answer link as a notification carries it: the one-tap
// answer, and the code, which exists nowhere else (only its SHA-256 is
// stored).
type MintedLink struct {
	askd.OneTap
	Code string
}

// NotifyHuman returns the human token answer links answer as: the one named
// name, or with name empty the only human token. With none or several, or
// an agent token's name, that is EINVALID saying how to choose (askd serve
// --notify-as NAME); an unknown name is ENOTFOUND.
func NotifyHuman(ctx context.Context, store askd.Store, name string) (string, error) {
	var ts []*askd.Token
	err := store.View(ctx, func(tx askd.Tx) (err error) {
		ts, err = tx.Tokens.Tokens(ctx)
		return err
	})
	if err != nil {
		return "", err
	}
	return humanTokenName(ts, name, "--notify-as")
}

// MintAnswerLinks makes one answer link per one-tap answer of ask id at
// revision, as the human token Config.NotifyAs, and returns them with their
// codes. When max is above 0 and the ask has more one-tap answers than
// that, the optional ones (a form's Decline) are left out first; if there
// are still more, none are minted (a notifier that cannot show them all
// shows none rather than some). It mints none (and no error) when NotifyAs
// is unset, when the ask is no longer pending at that revision, or when it
// has no one-tap answers. Errors: ENOTFOUND when the ask, or the NotifyAs
// token, is gone.
func (s *Service) MintAnswerLinks(ctx context.Context, id int64, revision, max int) ([]MintedLink, error) {
	if s.cfg.NotifyAs == "" {
		return nil, nil
	}
	return s.MintAnswerLinksFor(ctx, s.cfg.NotifyAs, id, revision, max)
}

// MintAnswerLinksFor is MintAnswerLinks with links answering as the human
// token named human: a push notification's actions answer as the person
// whose browser subscribed. None for a person whose role cannot answer (a
// viewer). ENOTFOUND when the ask, or that token, is gone.
func (s *Service) MintAnswerLinksFor(ctx context.Context, human string, id int64, revision, max int) ([]MintedLink, error) {
	now := s.now()
	var out []MintedLink
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		out = nil
		a, err := tx.Asks.Ask(ctx, id)
		if err != nil {
			return err
		}
		taps := a.OneTapAnswers()
		if max > 0 && len(taps) > max {
			taps = slices.DeleteFunc(taps, func(t askd.OneTap) bool { return t.Optional })
		}
		if !a.Pending() || a.Revision != revision || overdue(a, now) || len(taps) == 0 || max > 0 && len(taps) > max {
			return nil
		}
		// Who has approved an ask still gathering approvals (quorum.go)
		// gets no buttons: their approval counts once, and is in.
		if a.ApprovedBy(human) {
			return nil
		}
		// A viewer's notifications carry no answer buttons (SPEC §10).
		if err := linkPerson(ctx, tx, human); askd.ErrorCode(err) == askd.EFORBIDDEN {
			return nil
		} else if err != nil {
			return err
		}
		// Links expired a while ago go as new ones come, so they do not
		// pile up; until then a tap on an old notification is told the
		// link expired, not that it is unknown.
		if _, err := tx.AnswerLinks.DeleteExpiredAnswerLinks(ctx, now.Add(-expiredLinkKept)); err != nil {
			return err
		}
		expires := now.Add(AnswerLinkTTL)
		if a.Deadline != nil && a.Deadline.Before(expires) {
			expires = *a.Deadline
		}
		for _, tap := range taps {
			code := strings.ToLower(rand.Text())
			err := tx.AnswerLinks.CreateAnswerLink(ctx, &askd.AnswerLink{
				Hash: HashToken(code), AskID: a.ID, Revision: a.Revision, Label: tap.Label, Answer: tap.Answer,
				Human: human, CreatedAt: now, ExpiresAt: expires,
			})
			if err != nil {
				return err
			}
			out = append(out, MintedLink{OneTap: tap, Code: code})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// OpenAnswerLink returns what the answer link with the code would do, and
// changes nothing: opening a link (a person, a link scanner, a chat's
// preview) never answers. An unknown code is State LinkUnknown, not an
// error; errors are the store's.
func (s *Service) OpenAnswerLink(ctx context.Context, code string) (*LinkView, error) {
	now := s.now()
	v := &LinkView{State: LinkUnknown}
	err := s.store.View(ctx, func(tx askd.Tx) error {
		*v = LinkView{State: LinkUnknown}
		l, err := tx.AnswerLinks.AnswerLink(ctx, HashToken(code))
		if askd.ErrorCode(err) == askd.ENOTFOUND {
			return nil
		}
		if err != nil {
			return err
		}
		a, err := tx.Asks.Ask(ctx, l.AskID)
		if askd.ErrorCode(err) == askd.ENOTFOUND {
			return nil // purged: its links go with it
		}
		if err != nil {
			return err
		}
		v.Link, v.Ask, v.State = l, a, linkState(l, a, now)
		if v.State != LinkSettled {
			return nil
		}
		evs, err := tx.Events.AskHistory(ctx, a.ID)
		if err != nil {
			return err
		}
		v.Note = settledNote(evs)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// linkState is what link l to ask a (as stored) can do at now.
func linkState(l *askd.AnswerLink, a *askd.Ask, now time.Time) LinkState {
	switch {
	case !a.Pending() || l.UsedAt != nil:
		return LinkSettled
	case !now.Before(l.ExpiresAt): // also past the ask's deadline, which it never outlives
		return LinkExpired
	case a.Revision != l.Revision, editedSince(a, l.CreatedAt):
		return LinkChanged
	}
	return LinkOpen
}

// editedSince reports whether someone edited approval a's payload after t
// (quorum.go): the count started again on a payload a link minted at t
// never showed, so it must not approve it.
func editedSince(a *askd.Ask, t time.Time) bool {
	return len(a.Approvals) > 0 && a.Approvals[0].Payload != nil && a.Approvals[0].At.After(t)
}

// settledNote is the note of the event that settled an ask, from its
// history, oldest first.
func settledNote(evs []*askd.Event) string {
	for i := len(evs) - 1; i >= 0; i-- {
		if e := evs[i]; askd.EventType(e.Action) == "ask.settled" || e.Action == askd.ActionReplaced {
			return e.Note
		}
	}
	return ""
}

// errLinkMoved is the settlement's signal that the link stopped working
// between opening it and using it: the view is read again to say how.
var errLinkMoved = errors.New("the answer link no longer works")

// AnswerByLink answers the ask of the answer link with the code, with the
// link's answer, as its human token, and uses the link up; via is the
// history note saying how ("via link"). A link that does not work (unknown,
// expired, for an older revision, its ask settled) changes nothing and
// returns its view, whose State says why. The before-tell gate is asked as
// for any answer: its refusal is EFORBIDDEN and the link keeps working.
// Errors are otherwise the store's.
func (s *Service) AnswerByLink(ctx context.Context, code, via string) (*LinkView, error) {
	v, err := s.OpenAnswerLink(ctx, code)
	if err != nil || v.State != LinkOpen {
		return v, err
	}
	l := v.Link
	via = clip(askd.Printable(via), 200)
	ans := l.Answer
	c := askd.Caller{Name: l.Human, Role: askd.RoleHuman, Session: l.Human}
	out, err := s.settleGated(ctx, c, l.AskID, "answer", &ans, func(tx askd.Tx, a *askd.Ask) (string, string, error) {
		now := s.now()
		cur, err := tx.AnswerLinks.AnswerLink(ctx, l.Hash)
		if askd.ErrorCode(err) == askd.ENOTFOUND {
			return "", "", errLinkMoved
		}
		if err != nil {
			return "", "", err
		}
		if linkState(cur, a, now) != LinkOpen {
			return "", "", errLinkMoved
		}
		// The link answers as its person, with their role now: one made a
		// viewer since, or whose token is gone, answers nothing.
		if err := linkPerson(ctx, tx, l.Human); err != nil {
			return "", "", err
		}
		if err := a.CheckAnswer(&ans); err != nil {
			return "", "", &askd.Error{Code: askd.EMISMATCH, Message: askd.ErrorMessage(err)}
		}
		action, note, err := s.countAnswer(a, l.Human, &ans)
		if err != nil {
			return "", "", err
		}
		if err := tx.AnswerLinks.UseAnswerLink(ctx, l.Hash, now); err != nil {
			return "", "", err
		}
		return action, joinNote(via, note), nil
	})
	switch {
	case err == nil:
		used, at := *l, out.UpdatedAt
		if out.Pending() && len(out.Approvals) > 0 {
			at = out.Approvals[len(out.Approvals)-1].At // counted: the ask's UpdatedAt stays (settle)
		}
		used.UsedAt = &at
		return &LinkView{State: LinkSettled, Link: &used, Ask: out, Note: via, Answered: true}, nil
	case askd.ErrorCode(err) == askd.ECONFLICT && stillPending(err):
		// Its person approved it already, in the inbox or by another link
		// (quorum.go): the tap counts once, and says so.
		return nil, err
	case errors.Is(err, errLinkMoved), askd.ErrorCode(err) == askd.ECONFLICT:
		// Settled, used, expired or changed meanwhile: say how it is now.
		return s.OpenAnswerLink(ctx, code)
	}
	return nil, err
}

// Says is what a person is told of the link, in one sentence: what it does
// when open, or why it does nothing now. Every front end (the link's page,
// Slack's replies) says the same.
func (v *LinkView) Says() string {
	switch v.State {
	case LinkOpen:
		return "This link answers the ask once you confirm."
	case LinkExpired:
		return "This link has expired, and answers nothing: answer in the inbox."
	case LinkChanged:
		if v.Ask != nil && editedSince(v.Ask, v.Link.CreatedAt) {
			return v.Ask.Approvals[0].By + " has edited what this approval approves since the notification was sent, so this link answers nothing: a newer notification has links of its own, or answer in the inbox."
		}
		return "The agent has changed this ask since the notification was sent, so this link answers nothing: a newer notification has links of its own, or answer in the inbox."
	case LinkSettled:
		return SettledText(v.Ask, v.Note)
	}
	return "This link is unknown: it was mistyped, or its ask is gone. Nothing was answered."
}

// SettledText says who settled a and how, with note (the settling event's,
// "via link") if any: "Answered by alice via link: Monday", "Closed by
// alice without an answer", "No one answered in time".
func SettledText(a *askd.Ask, note string) string {
	by := a.SettledBy
	if note != "" {
		by += " " + note
	}
	switch {
	case a.Pending() && len(a.Approvals) > 0:
		return "Still waiting: " + approvalCount(a) + "; it needs more people to approve it."
	case a.Pending():
		return "The ask is still waiting for an answer."
	case a.Status == askd.StatusAnswered:
		return "Answered by " + by + ": " + a.AnswerWords() + "."
	case a.CancelReason == askd.ReasonDismissed:
		return "Closed by " + by + " without an answer."
	case a.CancelReason == askd.ReasonTimeout:
		return "No one answered in time; the ask timed out."
	case a.CancelReason == askd.ReasonWithdrawn:
		return "The agent withdrew the ask."
	case a.CancelReason == askd.ReasonReplaced:
		return "The agent replaced the ask with a newer one."
	}
	return "The ask is " + string(a.Status) + "."
}

// linkPerson is nil when person may answer by link now: their human token
// exists with the approver role or above.
func linkPerson(ctx context.Context, tx askd.Tx, person string) error {
	t, err := tx.Tokens.TokenByName(ctx, person)
	if askd.ErrorCode(err) == askd.ENOTFOUND {
		return askd.Errorf(askd.EFORBIDDEN, "the link's person %q has no token any more", person)
	}
	if err != nil {
		return err
	}
	return askd.Caller{Name: t.Name, Role: t.Role, Access: t.Access}.Needs(askd.AccessApprover)
}

// stillPending reports whether err carries an ask still pending: a refusal
// of the answer itself, not of an ask settled meanwhile.
func stillPending(err error) bool {
	var e *askd.Error
	return errors.As(err, &e) && e.Ask != nil && e.Ask.Pending()
}
