package app

import (
	"context"
	"fmt"
	"slices"

	"github.com/askd-dev/askd"
)

// # Who is told of a new ask (SPEC §10)
//
// A new ask notifies the people it is routed to, each through their own
// channels (PUT /api/me/notify: an ntfy topic, a webhook; and their Web
// Push subscriptions), as them: their notification's answer buttons answer
// as them, and a viewer's have none. An ask of no owner notifies every
// person with a channel. The server-wide notifiers (askd serve --notify-*)
// are the fallback for an ask that reaches nobody's own channel. An
// escalation notifies its target the same way.

// enqueueNotify writes the notify deliveries of new (or revised) ask a.
func (s *Service) enqueueNotify(ctx context.Context, tx askd.Tx, a *askd.Ask) error {
	people, err := routedPeople(ctx, tx, a.Owner)
	if err != nil {
		return err
	}
	reached, err := s.notifyPeople(ctx, tx, a, people, "")
	if err != nil || reached {
		return err
	}
	return s.enqueueServerNotify(ctx, tx, a)
}

// enqueueEscalation writes the notify deliveries of ask a's escalation to
// its EscalatedTo.
func (s *Service) enqueueEscalation(ctx context.Context, tx askd.Tx, a *askd.Ask) error {
	people, err := routedPeople(ctx, tx, a.EscalatedTo)
	if err != nil {
		return err
	}
	reached, err := s.notifyPeople(ctx, tx, a, people, "escalated")
	if err != nil || reached {
		return err
	}
	return s.enqueueServerNotify(ctx, tx, a)
}

// routedPeople are the people an ask routed to route is for: that person,
// the team's members; nil for "" (everyone with a channel).
func routedPeople(ctx context.Context, tx askd.Tx, route string) ([]string, error) {
	if route == "" {
		return nil, nil
	}
	if team, ok := askd.TeamOf(route); ok {
		t, err := tx.Teams.Team(ctx, team)
		if askd.ErrorCode(err) == askd.ENOTFOUND {
			return []string{}, nil
		}
		if err != nil {
			return nil, err
		}
		return t.Members, nil
	}
	return []string{route}, nil
}

// notifyPeople writes a notify delivery for each channel of each of people
// (nil: everyone with one), and reports whether it wrote any. why tells
// apart the deliveries of one revision ("escalated").
func (s *Service) notifyPeople(ctx context.Context, tx askd.Tx, a *askd.Ask, people []string, why string) (bool, error) {
	all, err := tx.Teams.NotifyAll(ctx)
	if err != nil {
		return false, err
	}
	subs, err := tx.Push.PushSubscriptions(ctx, s.now())
	if err != nil {
		return false, err
	}
	var chans []askd.Channel
	for _, n := range all {
		if people != nil && !slices.Contains(people, n.Person) {
			continue
		}
		if n.Ntfy != "" {
			chans = append(chans, askd.Channel{Type: askd.NotifyNtfy, URL: n.Ntfy, As: n.Person})
		}
		if n.Webhook != "" {
			chans = append(chans, askd.Channel{Type: askd.NotifyWebhook, URL: n.Webhook, As: n.Person})
		}
	}
	var pushed []string
	for _, p := range subs {
		if (people == nil || slices.Contains(people, p.Human)) && !slices.Contains(pushed, p.Human) {
			pushed = append(pushed, p.Human)
			chans = append(chans, askd.Channel{Type: askd.NotifyPush, As: p.Human})
		}
	}
	now := s.now()
	for _, ch := range chans {
		key := fmt.Sprintf("notify:%d.%d@%s/%s", a.ID, a.Revision, ch.As, ch.Type)
		if why != "" {
			key += "!" + why
		}
		d := &askd.Delivery{
			Kind: askd.DeliveryNotify, Key: key, AskID: a.ID, Session: a.Session,
			Channel: ch, Status: askd.DeliveryPending, NextAt: &now, CreatedAt: now, UpdatedAt: now,
		}
		if err := tx.Deliveries.CreateDelivery(ctx, d); err != nil && askd.ErrorCode(err) != askd.ECONFLICT {
			return false, err
		}
	}
	return len(chans) > 0, nil
}
