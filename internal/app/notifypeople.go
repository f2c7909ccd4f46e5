package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/askd-dev/askd"
)

// # Who is told of a new ask (SPEC §10)
//
// A new ask notifies the people it is routed to, each through their own
// channels (PUT /api/me/notify: an ntfy topic, a webhook, an email
// address, mail.go), as them: their
// notification's answer buttons answer as them, and a viewer's have none.
// An ask of no owner notifies every person with a channel. The server-wide
// notifiers (askd serve --notify-*) are the fallback for an ask that
// reaches nobody's own channel. Web Push, when the server sends it
// (--notify-push), goes to the browsers of the people an ask is routed to
// (everyone's, for an ask of no owner), as them; it is no fallback. An
// escalation notifies its target the same way.
//
// An approval a policy covers (quorum.go) notifies again each time an
// approval of it is counted and more are needed: everyone it was notified
// to (its owner's people, and its escalation target's) but those who have
// approved it learns that one approval is in and theirs is needed
// ("1 of 2 approvals, by alice"), with answer buttons of their own; the
// people who approved hear nothing more. Such a notification still unsent
// when the ask is decided is not sent (ClaimDeliveries): it would ask for
// an approval no longer needed.

// enqueueNotify writes the notify deliveries of new (or revised) ask a.
func (s *Service) enqueueNotify(ctx context.Context, tx askd.Tx, a *askd.Ask) error {
	return s.notifyRoute(ctx, tx, a, a.Owner, "", nil)
}

// enqueueEscalation writes the notify deliveries of ask a's escalation to
// its EscalatedTo.
func (s *Service) enqueueEscalation(ctx context.Context, tx askd.Tx, a *askd.Ask) error {
	return s.notifyRoute(ctx, tx, a, a.EscalatedTo, "escalated", nil)
}

// approvalNotify starts the why of the deliveries of an approval counted
// toward a quorum (enqueueApprovalNotify).
const approvalNotify = "approval-"

// enqueueApprovalNotify writes the notify deliveries of covered approval a
// once its latest approval is counted and more are needed (see above).
func (s *Service) enqueueApprovalNotify(ctx context.Context, tx askd.Tx, a *askd.Ask) error {
	last := a.Approvals[len(a.Approvals)-1]
	// Each counted approval notifies anew: its time and person tell it
	// apart from any other of the ask, an edit's restart included.
	why := fmt.Sprintf("%s%d-%s", approvalNotify, last.At.UnixMicro(), last.By)
	approvers := make([]string, len(a.Approvals))
	for i, ap := range a.Approvals {
		approvers[i] = ap.By
	}
	if err := s.notifyRoute(ctx, tx, a, a.Owner, why, approvers); err != nil {
		return err
	}
	if a.EscalatedTo == "" {
		return nil
	}
	return s.notifyRoute(ctx, tx, a, a.EscalatedTo, why, approvers)
}

// IsApprovalNotify reports whether d is the notification of an approval
// counted toward a quorum (enqueueApprovalNotify), rather than of the ask's
// creation, revision or escalation.
func IsApprovalNotify(d *askd.Delivery) bool {
	return d.Kind == askd.DeliveryNotify && strings.Contains(d.Key, "!"+approvalNotify)
}

// notifyRoute writes the deliveries telling the people of route (an owner
// or escalation target) of ask a, but those named in except; why tells
// apart those of one revision.
func (s *Service) notifyRoute(ctx context.Context, tx askd.Tx, a *askd.Ask, route, why string, except []string) error {
	people, err := routedPeople(ctx, tx, route)
	if err != nil {
		return err
	}
	chans, err := s.peopleChannels(ctx, tx, people)
	if err != nil {
		return err
	}
	own := len(chans) > 0
	if s.pushes() {
		pushed, err := pushChannels(ctx, tx, people, s.now())
		if err != nil {
			return err
		}
		chans = append(chans, pushed...)
	}
	if !own { // the fallback: the server's own notifiers, but push (above)
		for i, n := range s.cfg.Notifiers {
			if n.Type != askd.NotifyPush {
				chans = append(chans, withKey(n, askd.NotifyKey(a, i)))
			}
		}
	}
	now := s.now()
	for _, ch := range chans {
		if ch.As != "" && slices.Contains(except, ch.As) {
			continue
		}
		key := ch.key
		if key == "" {
			key = askd.PersonNotifyKey(a, ch.As, ch.Type)
		}
		if why != "" {
			key += "!" + why
		}
		d := &askd.Delivery{
			Kind: askd.DeliveryNotify, Key: key, AskID: a.ID, Session: a.Session,
			Channel: ch.Channel, Status: askd.DeliveryPending, NextAt: &now, CreatedAt: now, UpdatedAt: now,
		}
		if err := tx.Deliveries.AddDelivery(ctx, d); err != nil { // a key taken: notified already
			return err
		}
	}
	return nil
}

// keyedChannel is a channel to notify, with its delivery key when it is a
// server-wide notifier's (kept as before people had channels).
type keyedChannel struct {
	askd.Channel
	key string
}

func withKey(ch askd.Channel, key string) keyedChannel { return keyedChannel{ch, key} }

// pushes reports whether the server sends Web Push (--notify-push).
func (s *Service) pushes() bool {
	return slices.ContainsFunc(s.cfg.Notifiers, func(n askd.Channel) bool { return n.Type == askd.NotifyPush })
}

// routedPeople are the people an ask routed to route is for: that person,
// the team's members; nil for "" (everyone).
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

// keptNotify is everyone's notification settings as last read, until
// until: a new ask notifies by them without reading them. A change made on
// this process is seen at once (forget); one made on another process, or
// on the database, within tokenTTL, as a role change is.
type keptNotify struct {
	mu    sync.Mutex
	all   []*askd.PersonNotify
	until time.Time
}

// some reports whether anyone had a channel of their own when last read:
// only then may a new ask have written a delivery without the server's
// notifiers, for the worker to be woken for.
func (k *keptNotify) some() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.all) > 0
}

func (k *keptNotify) forget() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.until = time.Time{}
}

// notifyAll is every person's notification settings, kept for tokenTTL.
func (s *Service) notifyAll(ctx context.Context, tx askd.Tx) ([]*askd.PersonNotify, error) {
	now := time.Now()
	s.notifyKept.mu.Lock()
	if now.Before(s.notifyKept.until) {
		all := s.notifyKept.all
		s.notifyKept.mu.Unlock()
		return all, nil
	}
	s.notifyKept.mu.Unlock()
	all, err := tx.Teams.NotifyAll(ctx)
	if err != nil {
		return nil, err
	}
	s.notifyKept.mu.Lock()
	s.notifyKept.all, s.notifyKept.until = all, now.Add(tokenTTL)
	s.notifyKept.mu.Unlock()
	return all, nil
}

// peopleChannels are the own channels (ntfy, webhook, email) of people (nil:
// everyone's), each as its person.
func (s *Service) peopleChannels(ctx context.Context, tx askd.Tx, people []string) ([]keyedChannel, error) {
	all, err := s.notifyAll(ctx, tx)
	if err != nil {
		return nil, err
	}
	var out []keyedChannel
	for _, n := range all {
		if people != nil && !slices.Contains(people, n.Person) {
			continue
		}
		if n.Ntfy != "" {
			out = append(out, keyedChannel{Channel: askd.Channel{Type: askd.NotifyNtfy, URL: n.Ntfy, As: n.Person}})
		}
		if n.Webhook != "" {
			out = append(out, keyedChannel{Channel: askd.Channel{Type: askd.NotifyWebhook, URL: n.Webhook, Secret: n.WebhookSecret, As: n.Person}})
		}
		if to := n.MailTo(); to != "" && s.cfg.Mail { // mail.go
			out = append(out, keyedChannel{Channel: askd.Channel{Type: askd.NotifyEmail, Email: to, As: n.Person}})
		}
	}
	return out, nil
}

// pushChannels is one Web Push channel per person of people (nil:
// everyone) with a browser subscribed at now.
func pushChannels(ctx context.Context, tx askd.Tx, people []string, now time.Time) ([]keyedChannel, error) {
	subs, err := tx.Push.PushSubscriptions(ctx, now)
	if err != nil {
		return nil, err
	}
	var out []keyedChannel
	var seen []string
	for _, p := range subs {
		if (people == nil || slices.Contains(people, p.Human)) && !slices.Contains(seen, p.Human) {
			seen = append(seen, p.Human)
			out = append(out, keyedChannel{Channel: askd.Channel{Type: askd.NotifyPush, As: p.Human}})
		}
	}
	return out, nil
}
