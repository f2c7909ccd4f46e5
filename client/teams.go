package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/askd-dev/askd"
)

// A team's inbox (SPEC §10): claims, teams (admins), a person's own
// notifications.

// Claim marks a pending ask as the person's: "I'm on it" (human token,
// approver or admin). Someone else's claim, or a settled ask, is a 409
// whose Error.Ask is the ask as it is.
func (c *Client) Claim(ctx context.Context, id int64) (*askd.Ask, error) {
	var a askd.Ask
	return &a, c.do(ctx, http.MethodPost, fmt.Sprintf("/api/asks/%d/claim", id), struct{}{}, &a)
}

// Release lets a claim go: the person's own, or an admin anyone's.
func (c *Client) Release(ctx context.Context, id int64) (*askd.Ask, error) {
	var a askd.Ask
	return &a, c.do(ctx, http.MethodDelete, fmt.Sprintf("/api/asks/%d/claim", id), nil, &a)
}

// Teams lists every team (admin).
func (c *Client) Teams(ctx context.Context) ([]*askd.Team, error) {
	var out struct{ Teams []*askd.Team }
	return out.Teams, c.do(ctx, http.MethodGet, "/api/teams", nil, &out)
}

// escalation is a team's escalation as the API takes it.
type escalation struct {
	EscalateAfter string `json:"escalate_after,omitempty"`
	EscalateTo    string `json:"escalate_to,omitempty"`
}

func escalationOf(after time.Duration, to string) escalation {
	e := escalation{EscalateTo: to}
	if after != 0 {
		e.EscalateAfter = after.String()
	}
	return e
}

// CreateTeam makes a team with its members and escalation (admin); a name
// in use is a 409.
func (c *Client) CreateTeam(ctx context.Context, name string, members []string, after time.Duration, to string) (*askd.Team, error) {
	body := struct {
		Name    string   `json:"name"`
		Members []string `json:"members,omitempty"`
		escalation
	}{name, members, escalationOf(after, to)}
	var t askd.Team
	return &t, c.do(ctx, http.MethodPost, "/api/teams", body, &t)
}

// SetEscalation sets a team's escalation (admin); 0 and "" for none.
func (c *Client) SetEscalation(ctx context.Context, team string, after time.Duration, to string) (*askd.Team, error) {
	var t askd.Team
	return &t, c.do(ctx, http.MethodPatch, "/api/teams/"+url.PathEscape(team), escalationOf(after, to), &t)
}

// AddMembers adds people to a team (admin).
func (c *Client) AddMembers(ctx context.Context, team string, people ...string) (*askd.Team, error) {
	var t askd.Team
	return &t, c.do(ctx, http.MethodPost, "/api/teams/"+url.PathEscape(team)+"/members", map[string][]string{"people": people}, &t)
}

// RemoveMember takes a person out of a team (admin).
func (c *Client) RemoveMember(ctx context.Context, team, person string) (*askd.Team, error) {
	var t askd.Team
	return &t, c.do(ctx, http.MethodDelete, "/api/teams/"+url.PathEscape(team)+"/members/"+url.PathEscape(person), nil, &t)
}

// DeleteTeam deletes a team (admin).
func (c *Client) DeleteTeam(ctx context.Context, team string) error {
	return c.do(ctx, http.MethodDelete, "/api/teams/"+url.PathEscape(team), nil, nil)
}

// MyNotify returns where the person hears of the asks routed to them.
func (c *Client) MyNotify(ctx context.Context) (*askd.PersonNotify, error) {
	var n askd.PersonNotify
	return &n, c.do(ctx, http.MethodGet, "/api/me/notify", nil, &n)
}

// SetMyNotify replaces the person's own notification settings (the zero
// value: none) and returns them as stored.
func (c *Client) SetMyNotify(ctx context.Context, n askd.PersonNotify) (*askd.PersonNotify, error) {
	var out askd.PersonNotify
	return &out, c.do(ctx, http.MethodPut, "/api/me/notify", n, &out)
}
