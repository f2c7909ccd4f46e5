package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/askd-dev/askd"
)

// Rules returns the live rules (human token): of one agent token's sessions,
// of one session of it, or of every agent's sessions of a name; "" matches
// all.
func (c *Client) Rules(ctx context.Context, agent, session string) ([]*askd.Rule, error) {
	q := url.Values{}
	if agent != "" {
		q.Set("agent", agent)
	}
	if session != "" {
		q.Set("session", session)
	}
	path := "/api/rules"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out struct{ Rules []*askd.Rule }
	return out.Rules, c.do(ctx, http.MethodGet, path, nil, &out)
}

// CreateRule makes a rule from an ask (human token).
func (c *Client) CreateRule(ctx context.Context, in *askd.RuleInput) (*askd.Rule, error) {
	var r askd.Rule
	return &r, c.do(ctx, http.MethodPost, "/api/rules", in, &r)
}

// ChangeRule sets when a live rule expires (human token).
func (c *Client) ChangeRule(ctx context.Context, id int64, life askd.RuleLife) (*askd.Rule, error) {
	var r askd.Rule
	return &r, c.do(ctx, http.MethodPatch, fmt.Sprintf("/api/rules/%d", id), life, &r)
}

// RevokeRule ends a live rule now (human token) and returns it as revoked.
func (c *Client) RevokeRule(ctx context.Context, id int64) (*askd.Rule, error) {
	var r askd.Rule
	return &r, c.do(ctx, http.MethodDelete, fmt.Sprintf("/api/rules/%d", id), nil, &r)
}
