package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// hash is the hex SHA-256 of token, as tokens are stored.
func hash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// checkToken fails the test unless got is want as stored.
func checkToken(t *testing.T, got, want *askd.Token) {
	t.Helper()
	if got == nil {
		t.Fatalf("token %q: nil", want.Name)
	}
	if got.Name != want.Name || got.Role != want.Role || got.Access != want.Access || got.Owner != want.Owner || got.Hash != want.Hash {
		t.Errorf("token = %s/%s/%q/%q/%s, want %s/%s/%q/%q/%s", got.Name, got.Role, got.Access, got.Owner, got.Hash,
			want.Name, want.Role, want.Access, want.Owner, want.Hash)
	}
	checkTime(t, "token "+want.Name+" created_at", got.CreatedAt, want.CreatedAt)
}

func testTokens(t *testing.T, s askd.Store) {
	ctx := t.Context()
	human := &askd.Token{Name: "reviewer", Role: askd.RoleHuman, Access: askd.AccessApprover, Hash: hash("reviewer token"), CreatedAt: at(0)}
	agent := &askd.Token{Name: "agent-1", Role: askd.RoleAgent, Owner: "team:platform", Hash: hash("agent token"), CreatedAt: at(time.Second)}
	update(t, s, func(tx askd.Tx) error {
		if err := tx.Tokens.CreateToken(ctx, human); err != nil {
			return err
		}
		return tx.Tokens.CreateToken(ctx, agent)
	})

	t.Run("by hash", func(t *testing.T) {
		for _, want := range []*askd.Token{human, agent} {
			view(t, s, func(tx askd.Tx) error {
				got, err := tx.Tokens.TokenByHash(ctx, want.Hash)
				if err != nil {
					return err
				}
				checkToken(t, got, want)
				return nil
			})
		}
	})

	t.Run("by name", func(t *testing.T) {
		for _, want := range []*askd.Token{human, agent} {
			view(t, s, func(tx askd.Tx) error {
				got, err := tx.Tokens.TokenByName(ctx, want.Name)
				if err != nil {
					return err
				}
				checkToken(t, got, want)
				return nil
			})
		}
		view(t, s, func(tx askd.Tx) error {
			tok, err := tx.Tokens.TokenByName(ctx, "nobody")
			if tok != nil {
				t.Errorf("TokenByName returned %+v with the error", tok)
			}
			wantCode(t, err, askd.ENOTFOUND)
			return nil
		})
	})

	t.Run("list by name", func(t *testing.T) {
		view(t, s, func(tx askd.Tx) error {
			got, err := tx.Tokens.Tokens(ctx)
			if err != nil {
				return err
			}
			if len(got) != 2 {
				t.Fatalf("Tokens = %d, want 2", len(got))
			}
			checkToken(t, got[0], agent)
			checkToken(t, got[1], human)
			return nil
		})
	})

	t.Run("revoke", func(t *testing.T) {
		update(t, s, func(tx askd.Tx) error { return tx.Tokens.RevokeToken(ctx, agent.Name) })
		view(t, s, func(tx askd.Tx) error {
			_, err := tx.Tokens.TokenByHash(ctx, agent.Hash)
			wantCode(t, err, askd.ENOTFOUND)
			got, err := tx.Tokens.Tokens(ctx)
			if err != nil {
				return err
			}
			if len(got) != 1 {
				t.Fatalf("Tokens after revoking one of two = %d, want 1", len(got))
			}
			checkToken(t, got[0], human)
			return nil
		})
		err := s.Update(ctx, func(tx askd.Tx) error { return tx.Tokens.RevokeToken(ctx, agent.Name) })
		wantCode(t, err, askd.ENOTFOUND)
	})
}

func testTokenNameTaken(t *testing.T, s askd.Store) {
	ctx := t.Context()
	first := &askd.Token{Name: "ci", Role: askd.RoleAgent, Hash: hash("first"), CreatedAt: at(0)}
	update(t, s, func(tx askd.Tx) error { return tx.Tokens.CreateToken(ctx, first) })

	second := &askd.Token{Name: "ci", Role: askd.RoleHuman, Hash: hash("second"), CreatedAt: at(time.Minute)}
	err := s.Update(ctx, func(tx askd.Tx) error { return tx.Tokens.CreateToken(ctx, second) })
	wantCode(t, err, askd.ECONFLICT)

	view(t, s, func(tx askd.Tx) error {
		got, err := tx.Tokens.TokenByHash(ctx, first.Hash)
		if err != nil {
			return err
		}
		checkToken(t, got, first)
		_, err = tx.Tokens.TokenByHash(ctx, second.Hash)
		wantCode(t, err, askd.ENOTFOUND)
		return nil
	})
}

// testAccessAndOwner: SetAccess changes a human token's access and SetOwner
// an agent token's owner; either on a token of the other role, or on a name
// no token has, is ENOTFOUND and changes nothing.
func testAccessAndOwner(t *testing.T, s askd.Store) {
	ctx := t.Context()
	human := &askd.Token{Name: "alice", Role: askd.RoleHuman, Access: askd.AccessViewer, Hash: hash("alice"), CreatedAt: at(0)}
	agent := &askd.Token{Name: "ci", Role: askd.RoleAgent, Owner: "alice", Hash: hash("ci"), CreatedAt: at(0)}
	update(t, s, func(tx askd.Tx) error {
		if err := tx.Tokens.CreateToken(ctx, human); err != nil {
			return err
		}
		return tx.Tokens.CreateToken(ctx, agent)
	})
	check := func(t *testing.T) {
		t.Helper()
		view(t, s, func(tx askd.Tx) error {
			for _, want := range []*askd.Token{human, agent} {
				got, err := tx.Tokens.TokenByName(ctx, want.Name)
				if err != nil {
					return err
				}
				checkToken(t, got, want)
			}
			return nil
		})
	}

	for _, c := range []struct {
		name string
		set  func(tx askd.Tx) error
		then func()
	}{
		{"access raised", func(tx askd.Tx) error { return tx.Tokens.SetAccess(ctx, "alice", askd.AccessAdmin) },
			func() { human.Access = askd.AccessAdmin }},
		{"access lowered", func(tx askd.Tx) error { return tx.Tokens.SetAccess(ctx, "alice", askd.AccessApprover) },
			func() { human.Access = askd.AccessApprover }},
		{"owner a team", func(tx askd.Tx) error { return tx.Tokens.SetOwner(ctx, "ci", "team:platform") },
			func() { agent.Owner = "team:platform" }},
		{"owner none", func(tx askd.Tx) error { return tx.Tokens.SetOwner(ctx, "ci", "") },
			func() { agent.Owner = "" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			update(t, s, c.set)
			c.then()
			check(t)
		})
	}

	for _, c := range []struct {
		name string
		set  func(tx askd.Tx) error
	}{
		{"access of an agent token", func(tx askd.Tx) error { return tx.Tokens.SetAccess(ctx, "ci", askd.AccessAdmin) }},
		{"access of nobody", func(tx askd.Tx) error { return tx.Tokens.SetAccess(ctx, "nobody", askd.AccessAdmin) }},
		{"owner of a human token", func(tx askd.Tx) error { return tx.Tokens.SetOwner(ctx, "alice", "bob") }},
		{"owner of nobody", func(tx askd.Tx) error { return tx.Tokens.SetOwner(ctx, "nobody", "bob") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantCode(t, s.Update(ctx, c.set), askd.ENOTFOUND)
			check(t)
		})
	}
}
