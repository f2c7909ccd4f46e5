package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// testPolicies: a policy comes back as stored, with a new id each time;
// the list is oldest first; deleting one removes it, and deleting it again
// is ENOTFOUND; ids are not handed out again.
func testPolicies(t *testing.T, s askd.Store) {
	ctx := t.Context()
	ps := []*askd.Policy{
		{Match: askd.MatchTitle, Title: "Deploy?", Team: "platform", Approvals: 2, ExcludeOwner: true, CreatedBy: "alice", CreatedAt: at(0)},
		{Match: askd.MatchPrefix, Tool: "Bash", Prefix: "terraform apply", Agent: "agent-1", Approvals: 5, CreatedBy: "cli:ops", CreatedAt: at(time.Minute)},
	}
	update(t, s, func(tx askd.Tx) error {
		for _, p := range ps {
			if err := tx.Policies.CreatePolicy(ctx, p); err != nil {
				return err
			}
		}
		return nil
	})
	if ps[0].ID == 0 || ps[1].ID <= ps[0].ID {
		t.Fatalf("ids %d, %d; want increasing", ps[0].ID, ps[1].ID)
	}
	list := func() []*askd.Policy {
		t.Helper()
		var out []*askd.Policy
		err := s.View(ctx, func(tx askd.Tx) (err error) {
			out, err = tx.Policies.Policies(ctx)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := list()
	for _, p := range ps {
		p.CreatedAt = stored(p.CreatedAt)
	}
	if !reflect.DeepEqual(got, ps) {
		t.Fatalf("policies %+v, want %+v", got, ps)
	}
	update(t, s, func(tx askd.Tx) error { return tx.Policies.DeletePolicy(ctx, ps[0].ID) })
	err := s.Update(ctx, func(tx askd.Tx) error { return tx.Policies.DeletePolicy(ctx, ps[0].ID) })
	if askd.ErrorCode(err) != askd.ENOTFOUND {
		t.Errorf("deleting policy %d again: %v, want ENOTFOUND", ps[0].ID, err)
	}
	if got := list(); len(got) != 1 || got[0].ID != ps[1].ID {
		t.Fatalf("after the delete: %+v, want policy %d alone", got, ps[1].ID)
	}
	p := &askd.Policy{Match: askd.MatchTool, Tool: "Bash", Approvals: 2, CreatedBy: "alice", CreatedAt: at(0)}
	update(t, s, func(tx askd.Tx) error { return tx.Policies.CreatePolicy(ctx, p) })
	if p.ID <= ps[1].ID {
		t.Errorf("new policy's id %d, want above %d: ids are never handed out twice", p.ID, ps[1].ID)
	}
}
