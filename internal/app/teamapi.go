package app

import (
	"context"
	"time"

	"github.com/askd-dev/askd"
)

// # Teams over the API, and people's own notifications (SPEC §10)
//
// The same changes as `askd team ...` on the database (teams.go), for an
// admin over the API: each checks the caller's role, then does what the
// command does, with its checks. A person's own ntfy topic and webhook are
// held to the address rules of an agent's webhook (channel.go).

// Teams lists every team (admins only).
func (s *Service) Teams(ctx context.Context, c askd.Caller) ([]*askd.Team, error) {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return nil, err
	}
	return Teams(ctx, s.store)
}

// CreateTeam makes a team (admins only) as CreateTeam does.
func (s *Service) CreateTeam(ctx context.Context, c askd.Caller, in TeamInput) (*askd.Team, error) {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return nil, err
	}
	return CreateTeam(WithActor(ctx, c.Name), s.store, in)
}

// SetEscalation changes team name's escalation (admins only) as
// SetEscalation does.
func (s *Service) SetEscalation(ctx context.Context, c askd.Caller, name string, after time.Duration, to string) (*askd.Team, error) {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return nil, err
	}
	return SetEscalation(WithActor(ctx, c.Name), s.store, name, after, to)
}

// AddMembers adds people to team name (admins only) as AddMembers does.
func (s *Service) AddMembers(ctx context.Context, c askd.Caller, name string, people []string) (*askd.Team, error) {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return nil, err
	}
	return AddMembers(WithActor(ctx, c.Name), s.store, name, people)
}

// RemoveMember takes person out of team name (admins only) as
// RemoveMembers does.
func (s *Service) RemoveMember(ctx context.Context, c askd.Caller, name, person string) (*askd.Team, error) {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return nil, err
	}
	return RemoveMembers(WithActor(ctx, c.Name), s.store, name, person)
}

// DeleteTeam deletes team name (admins only) as DeleteTeam does.
func (s *Service) DeleteTeam(ctx context.Context, c askd.Caller, name string) error {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return err
	}
	return DeleteTeam(WithActor(ctx, c.Name), s.store, name)
}

// MyNotify returns where person c hears of the asks routed to them (people
// of every role).
func (s *Service) MyNotify(ctx context.Context, c askd.Caller) (*askd.PersonNotify, error) {
	if err := c.Needs(askd.AccessViewer); err != nil {
		return nil, err
	}
	var out *askd.PersonNotify
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		out, err = tx.Teams.Notify(ctx, c.Name)
		return err
	})
	return out, err
}

// SetMyNotify replaces person c's notification settings with n (both URLs
// empty: none). Each URL is an http(s) URL, not obviously one the
// destination guard refuses unless the operator allows it (as an agent's
// webhook, checkChannel; the real guard is when it is sent); errors are
// EINVALID naming the field, and nothing is stored then.
func (s *Service) SetMyNotify(ctx context.Context, c askd.Caller, n askd.PersonNotify) (*askd.PersonNotify, error) {
	if err := c.Needs(askd.AccessViewer); err != nil {
		return nil, err
	}
	if err := n.Validate(); err != nil {
		return nil, err
	}
	for _, f := range []struct{ field, url string }{{"ntfy", n.Ntfy}, {"webhook", n.Webhook}} {
		if f.url == "" {
			continue
		}
		if err := s.cfg.WebhookAllow.CheckURL(f.field, f.url); err != nil {
			return nil, err
		}
	}
	n.Person = c.Name
	if err := s.store.Update(ctx, func(tx askd.Tx) error { return tx.Teams.SetNotify(ctx, &n) }); err != nil {
		return nil, err
	}
	s.notifyKept.forget()
	return &n, nil
}
