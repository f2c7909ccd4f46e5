package app

import (
	"context"

	"github.com/askd-dev/askd"
)

// CreatePolicy makes policy in (admins only): the approvals it covers from
// now on need in.Approvals people (quorum.go). A body that breaks the rules
// is EMISMATCH naming the field (approvals outside 2 to 5 among them).
func (s *Service) CreatePolicy(ctx context.Context, c askd.Caller, in *askd.PolicyInput) (*askd.Policy, error) {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return nil, err
	}
	p, err := in.Policy()
	if err != nil {
		return nil, mismatch(err)
	}
	p.CreatedBy, p.CreatedAt = c.Name, s.now()
	err = s.store.Update(ctx, func(tx askd.Tx) error {
		if err := tx.Policies.CreatePolicy(ctx, p); err != nil {
			return err
		}
		// A row of the audit chain: nobody lowers a policy unseen (SPEC §11).
		return recordConfig(ctx, tx, c, askd.ConfigPolicy+".created", map[string]any{"policy": p})
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Policies returns every policy, oldest first (admins only).
func (s *Service) Policies(ctx context.Context, c askd.Caller) ([]*askd.Policy, error) {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return nil, err
	}
	var out []*askd.Policy
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		out, err = tx.Policies.Policies(ctx)
		return err
	})
	return out, err
}

// RevokePolicy removes policy id (admins only); ENOTFOUND when there is
// none. Asks it covered keep their quorum; new ones are not covered.
func (s *Service) RevokePolicy(ctx context.Context, c askd.Caller, id int64) error {
	if err := c.Needs(askd.AccessAdmin); err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx askd.Tx) error {
		if err := tx.Policies.DeletePolicy(ctx, id); err != nil {
			return err
		}
		return recordConfig(ctx, tx, c, askd.ConfigPolicy+".revoked", map[string]any{"policy": id})
	})
}
