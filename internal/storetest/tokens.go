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
	if got.Name != want.Name || got.Role != want.Role || got.Hash != want.Hash {
		t.Errorf("token = %s/%s/%s, want %s/%s/%s", got.Name, got.Role, got.Hash, want.Name, want.Role, want.Hash)
	}
	checkTime(t, "token "+want.Name+" created_at", got.CreatedAt, want.CreatedAt)
}

func testTokens(t *testing.T, s askd.Store) {
	ctx := t.Context()
	human := &askd.Token{Name: "reviewer", Role: askd.RoleHuman, Hash: hash("reviewer token"), CreatedAt: at(0)}
	agent := &askd.Token{Name: "agent-1", Role: askd.RoleAgent, Hash: hash("agent token"), CreatedAt: at(time.Second)}
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
