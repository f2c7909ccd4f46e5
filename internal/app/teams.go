package app

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/askd-dev/askd"
)

// # People, owners and teams (SPEC §10)
//
// Teams are made and changed by admins (admin.go: one face for the API and
// the command line), as are people's roles and agents' owners. Every
// change is checked here: an owner or an escalation target names an
// existing person or team, a member an existing person, and nothing is
// stored on a refusal. A change reaches running servers within tokenTTL,
// as a revocation does.

// checkRoute refuses an owner or escalation target (field names it) that
// is neither "" nor an existing person nor "team:" an existing team.
func checkRoute(ctx context.Context, tx askd.Tx, field, route string) error {
	if route == "" {
		return nil
	}
	if team, ok := askd.TeamOf(route); ok {
		if _, err := tx.Teams.Team(ctx, team); askd.ErrorCode(err) == askd.ENOTFOUND {
			return askd.Errorf(askd.EINVALID, "%s: no team %q (askd team create %s)", field, team, team)
		} else if err != nil {
			return err
		}
		return nil
	}
	ok, err := isPerson(ctx, tx, route)
	if err == nil && !ok {
		err = askd.Errorf(askd.EINVALID, "%s: %q is no person (a human token's name), nor team:NAME", field, route)
	}
	return err
}

// checkPerson refuses a name (a member, field names it) that is not a
// human token's.
func checkPerson(ctx context.Context, tx askd.Tx, field, name string) error {
	ok, err := isPerson(ctx, tx, name)
	if err == nil && !ok {
		err = askd.Errorf(askd.EINVALID, "%s: %q is no person (a human token's name)", field, name)
	}
	return err
}

// isPerson reports whether name is a human token's.
func isPerson(ctx context.Context, tx askd.Tx, name string) (bool, error) {
	t, err := tx.Tokens.TokenByName(ctx, name)
	switch {
	case askd.ErrorCode(err) == askd.ENOTFOUND:
		return false, nil
	case err != nil:
		return false, err
	}
	return t.Role == askd.RoleHuman, nil
}

// TeamInput is a team to make or change.
type TeamInput struct {
	Name          string
	Members       []string
	EscalateAfter time.Duration // 0: never
	EscalateTo    string
}

// checkEscalation refuses half an escalation rule, a duration under a
// second, or a target that is neither a person nor a team.
func checkEscalation(ctx context.Context, tx askd.Tx, after time.Duration, to string) error {
	switch {
	case after < 0 || after > 0 && after < time.Second:
		return askd.Errorf(askd.EINVALID, "escalate_after: %s, must be at least 1s (or 0 for never)", after)
	case after > 0 && to == "":
		return askd.Errorf(askd.EINVALID, "escalate_to: required with escalate_after: a person or team:NAME")
	case after == 0 && to != "":
		return askd.Errorf(askd.EINVALID, "escalate_after: required with escalate_to")
	}
	return checkRoute(ctx, tx, "escalate_to", to)
}

// CreateTeam makes a team (admins only; ECONFLICT when the name is taken),
// with its members and escalation; all or nothing.
func (s *Service) CreateTeam(ctx context.Context, c askd.Caller, in TeamInput) (*askd.Team, error) {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return nil, err
	}
	if err := askd.ValidName("name", in.Name); err != nil {
		return nil, err
	}
	var out *askd.Team
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		t := &askd.Team{Name: in.Name, EscalateAfter: in.EscalateAfter, EscalateTo: in.EscalateTo, CreatedAt: time.Now().UTC()}
		if err := tx.Teams.CreateTeam(ctx, t); err != nil {
			return err
		}
		// Checked after the team exists, so that it may escalate to itself.
		if err := checkEscalation(ctx, tx, in.EscalateAfter, in.EscalateTo); err != nil {
			return err
		}
		if err := addMembers(ctx, tx, in.Name, in.Members); err != nil {
			return err
		}
		if err := recordConfig(ctx, tx, c, askd.ConfigTeamCreated, map[string]any{"name": in.Name, "members": in.Members,
			"escalate_after": in.EscalateAfter.String(), "escalate_to": in.EscalateTo}); err != nil {
			return err
		}
		var err error
		out, err = tx.Teams.Team(ctx, in.Name)
		return err
	})
	return out, err
}

// SetEscalation changes team name's escalation (admins only; after 0 and
// to "": none).
func (s *Service) SetEscalation(ctx context.Context, c askd.Caller, name string, after time.Duration, to string) (*askd.Team, error) {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return nil, err
	}
	var out *askd.Team
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		if err := checkEscalation(ctx, tx, after, to); err != nil {
			return err
		}
		if err := tx.Teams.SetEscalation(ctx, name, after, to); err != nil {
			return err
		}
		if err := recordConfig(ctx, tx, c, askd.ConfigTeamEscalate, map[string]any{"name": name, "escalate_after": after.String(), "escalate_to": to}); err != nil {
			return err
		}
		var err error
		out, err = tx.Teams.Team(ctx, name)
		return err
	})
	return out, err
}

// AddMembers adds people, one or more, to team name (admins only) and
// returns the team.
func (s *Service) AddMembers(ctx context.Context, c askd.Caller, name string, people []string) (*askd.Team, error) {
	// Refused before the role is looked at, as a malformed request is.
	if len(people) == 0 {
		return nil, askd.Errorf(askd.EINVALID, "people: required: the names of one or more people (human tokens)")
	}
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return nil, err
	}
	var out *askd.Team
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		if err := addMembers(ctx, tx, name, people); err != nil {
			return err
		}
		if err := recordConfig(ctx, tx, c, askd.ConfigTeamMembers, map[string]any{"name": name, "added": people}); err != nil {
			return err
		}
		var err error
		out, err = tx.Teams.Team(ctx, name)
		return err
	})
	return out, err
}

func addMembers(ctx context.Context, tx askd.Tx, team string, people []string) error {
	if len(people) == 0 {
		return nil
	}
	for i, p := range people {
		if err := checkPerson(ctx, tx, fmt.Sprintf("members[%d]", i), p); err != nil {
			return err
		}
	}
	return tx.Teams.AddMembers(ctx, team, slices.Compact(slices.Sorted(slices.Values(people))))
}

// RemoveMembers takes people out of team name (admins only), all or none
// (ENOTFOUND naming the first who is no member), and returns the team.
func (s *Service) RemoveMembers(ctx context.Context, c askd.Caller, name string, people ...string) (*askd.Team, error) {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return nil, err
	}
	var out *askd.Team
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		for _, p := range slices.Compact(slices.Sorted(slices.Values(people))) {
			if err := tx.Teams.RemoveMember(ctx, name, p); err != nil {
				return err
			}
		}
		if err := recordConfig(ctx, tx, c, askd.ConfigTeamMembers, map[string]any{"name": name, "removed": people}); err != nil {
			return err
		}
		var err error
		out, err = tx.Teams.Team(ctx, name)
		return err
	})
	return out, err
}

// DeleteTeam deletes team name (admins only). Agents it owns, and teams
// escalating to it, are refused (EINVALID naming them): change them first,
// so that no ask is routed to a team that is gone.
func (s *Service) DeleteTeam(ctx context.Context, c askd.Caller, name string) error {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx askd.Tx) error {
		route := askd.TeamPrefix + name
		tokens, err := tx.Tokens.Tokens(ctx)
		if err != nil {
			return err
		}
		for _, t := range tokens {
			if t.Owner == route {
				return askd.Errorf(askd.EINVALID, "team %q owns agent token %q: give it another owner first (askd token set-owner)", name, t.Name)
			}
		}
		teams, err := tx.Teams.Teams(ctx)
		if err != nil {
			return err
		}
		for _, t := range teams {
			if t.EscalateTo == route && t.Name != name {
				return askd.Errorf(askd.EINVALID, "team %q escalates to team %q: change its escalation first", t.Name, name)
			}
		}
		if err := tx.Teams.DeleteTeam(ctx, name); err != nil {
			return err
		}
		return recordConfig(ctx, tx, c, askd.ConfigTeamDeleted, map[string]any{"name": name})
	})
}

// Teams lists every team (admins only).
func (s *Service) Teams(ctx context.Context, c askd.Caller) ([]*askd.Team, error) {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return nil, err
	}
	var out []*askd.Team
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		out, err = tx.Teams.Teams(ctx)
		return err
	})
	return out, err
}

// routes are the owners whose asks are c's (Mine, SPEC §10): none, c
// themself, and each team of theirs.
func routes(ctx context.Context, tx askd.Tx, c askd.Caller) ([]string, error) {
	teams, err := tx.Teams.TeamsOf(ctx, c.Name)
	if err != nil {
		return nil, err
	}
	out := []string{"", c.Name}
	for _, t := range teams {
		out = append(out, askd.TeamPrefix+t)
	}
	return out, nil
}

// routedTo reports whether ask a is c's (its owner, or who it was
// escalated to, one of c's routes).
func routedTo(a *askd.Ask, rs []string) bool {
	return slices.Contains(rs, a.Owner) || a.EscalatedTo != "" && slices.Contains(rs, a.EscalatedTo)
}

// Mine is a person's Mine (SPEC §10) for a stream that outlives a request:
// which asks are routed to them, a team of theirs, or nobody. Their teams
// are read again once they are tokenTTL old, so that joining or leaving a
// team reaches an open stream as a change of role reaches new requests.
type Mine struct {
	s      *Service
	c      askd.Caller
	routes []string
	read   time.Time
}

// Mine returns c's Mine (people only; EFORBIDDEN otherwise).
func (s *Service) Mine(ctx context.Context, c askd.Caller) (*Mine, error) {
	if err := human(c); err != nil {
		return nil, err
	}
	m := &Mine{s: s, c: c, read: s.now()}
	return m, m.readRoutes(ctx)
}

// Has reports whether a is routed to m's person; an event without its ask
// (a is nil) is not. A failed read of their teams keeps the teams read
// before, until the next try a tokenTTL later.
func (m *Mine) Has(ctx context.Context, a *askd.Ask) bool {
	if now := m.s.now(); now.Sub(m.read) >= tokenTTL {
		m.read = now
		if err := m.readRoutes(ctx); err != nil && ctx.Err() == nil {
			m.s.cfg.Logger.Warn("read a person's teams for their Mine", "person", m.c.Name, "err", err)
		}
	}
	return a != nil && routedTo(a, m.routes)
}

// readRoutes reads m's routes: m's person, their teams, and nobody.
func (m *Mine) readRoutes(ctx context.Context) error {
	return m.s.store.View(ctx, func(tx askd.Tx) error {
		rs, err := routes(ctx, tx, m.c)
		if err == nil {
			m.routes = rs
		}
		return err
	})
}
