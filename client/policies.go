package client

import (
	"context"
	"fmt"
	"net/http"

	"github.com/askd-dev/askd"
)

// Policies returns every policy, oldest first (an admin's token).
func (c *Client) Policies(ctx context.Context) ([]*askd.Policy, error) {
	var out struct{ Policies []*askd.Policy }
	return out.Policies, c.do(ctx, http.MethodGet, "/api/policies", nil, &out)
}

// CreatePolicy makes a policy (an admin's token).
func (c *Client) CreatePolicy(ctx context.Context, in *askd.PolicyInput) (*askd.Policy, error) {
	var p askd.Policy
	return &p, c.do(ctx, http.MethodPost, "/api/policies", in, &p)
}

// RevokePolicy removes a policy (an admin's token).
func (c *Client) RevokePolicy(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodDelete, fmt.Sprintf("/api/policies/%d", id), nil, nil)
}
