package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// readIdentity reads the identity of issuer and subject, failing the test
// when there is none.
func readIdentity(t *testing.T, s askd.Store, issuer, subject string) *askd.Identity {
	t.Helper()
	var id *askd.Identity
	view(t, s, func(tx askd.Tx) (err error) {
		id, err = tx.Identities.Identity(t.Context(), issuer, subject)
		return err
	})
	return id
}

func testIdentities(t *testing.T, s askd.Store) {
	ctx := t.Context()
	humanToken(t, s, "alice")
	humanToken(t, s, "bob")
	const iss = "https://id.example.com"
	link := func(person, subject string, d time.Duration) *askd.Identity {
		id := &askd.Identity{Issuer: iss, Subject: subject, Person: person, LinkedAt: at(d)}
		update(t, s, func(tx askd.Tx) error { return tx.Identities.LinkIdentity(ctx, id) })
		return id
	}
	link("alice", "sub-a", 0)
	link("alice", "sub-b", 0)
	proxy := &askd.Identity{Issuer: askd.ProxyIssuer, Subject: "alice", Person: "alice", LinkedAt: at(0)}
	update(t, s, func(tx askd.Tx) error { return tx.Identities.LinkIdentity(ctx, proxy) })

	t.Run("read back", func(t *testing.T) {
		got := readIdentity(t, s, iss, "sub-a")
		if got.Person != "alice" || got.RevokedAt != nil {
			t.Errorf("identity = %+v, want alice's, not revoked", got)
		}
		checkTime(t, "linked_at", got.LinkedAt, at(0))
		view(t, s, func(tx askd.Tx) error {
			_, err := tx.Identities.Identity(ctx, "https://other.example.com", "sub-a")
			wantCode(t, err, askd.ENOTFOUND)
			ids, err := tx.Identities.IdentitiesOf(ctx, "alice")
			if err != nil {
				return err
			}
			var keys []string
			for _, id := range ids {
				keys = append(keys, id.Issuer+" "+id.Subject)
			}
			if want := fmt.Sprint([]string{iss + " sub-a", iss + " sub-b", "proxy alice"}); fmt.Sprint(keys) != want {
				t.Errorf("identities of alice = %v, want %v", keys, want)
			}
			return nil
		})
	})

	t.Run("revoked, then linked again", func(t *testing.T) {
		var n int
		update(t, s, func(tx askd.Tx) (err error) {
			n, err = tx.Identities.RevokeIdentitiesOf(ctx, "alice", at(time.Hour))
			return err
		})
		if n != 3 {
			t.Errorf("revoked %d identities, want 3", n)
		}
		update(t, s, func(tx askd.Tx) (err error) {
			n, err = tx.Identities.RevokeIdentitiesOf(ctx, "alice", at(2*time.Hour))
			return err
		})
		if n != 0 {
			t.Errorf("revoked %d identities again, want 0 (they were)", n)
		}
		got := readIdentity(t, s, iss, "sub-a")
		if got.RevokedAt == nil {
			t.Fatal("identity not revoked")
		}
		checkTime(t, "revoked_at", *got.RevokedAt, at(time.Hour))
		// Linking it again, to another person, replaces the link whole.
		link("bob", "sub-a", 3*time.Hour)
		got = readIdentity(t, s, iss, "sub-a")
		if got.Person != "bob" || got.RevokedAt != nil {
			t.Errorf("linked again = %+v, want bob's, not revoked", got)
		}
		checkTime(t, "linked_at", got.LinkedAt, at(3*time.Hour))
	})

	t.Run("a person's only", func(t *testing.T) {
		agent := &askd.Token{Name: "robot", Role: askd.RoleAgent, Hash: hash("robot"), CreatedAt: at(0)}
		update(t, s, func(tx askd.Tx) error { return tx.Tokens.CreateToken(ctx, agent) })
		for _, who := range []string{"nobody", "robot"} {
			err := s.Update(ctx, func(tx askd.Tx) error {
				return tx.Identities.LinkIdentity(ctx, &askd.Identity{Issuer: iss, Subject: "sub-z", Person: who, LinkedAt: at(0)})
			})
			wantCode(t, err, askd.ENOTFOUND)
		}
		view(t, s, func(tx askd.Tx) error {
			_, err := tx.Identities.Identity(ctx, iss, "sub-z")
			wantCode(t, err, askd.ENOTFOUND)
			return nil
		})
	})

	t.Run("view refuses writes", func(t *testing.T) {
		err := s.View(ctx, func(tx askd.Tx) error {
			return tx.Identities.LinkIdentity(ctx, &askd.Identity{Issuer: iss, Subject: "sub-y", Person: "bob", LinkedAt: at(0)})
		})
		if err == nil {
			t.Fatal("LinkIdentity in a read-only transaction succeeded")
		}
	})
}

// testIdentitiesOutliveTokens: revoking a person's token leaves their
// identities, so that the app can refuse them at their next sign-in.
func testIdentitiesOutliveTokens(t *testing.T, s askd.Store) {
	ctx := t.Context()
	humanToken(t, s, "carol")
	id := &askd.Identity{Issuer: "https://id.example.com", Subject: "c", Person: "carol", LinkedAt: at(0)}
	update(t, s, func(tx askd.Tx) error { return tx.Identities.LinkIdentity(ctx, id) })
	update(t, s, func(tx askd.Tx) error {
		if _, err := tx.Identities.RevokeIdentitiesOf(ctx, "carol", at(time.Minute)); err != nil {
			return err
		}
		return tx.Tokens.RevokeToken(ctx, "carol")
	})
	got := readIdentity(t, s, id.Issuer, id.Subject)
	if got.Person != "carol" || got.RevokedAt == nil {
		t.Errorf("identity after its token = %+v, want carol's, revoked", got)
	}
	// A new token of the name is another person: the identity stays revoked.
	humanToken(t, s, "carol")
	if got := readIdentity(t, s, id.Issuer, id.Subject); got.RevokedAt == nil {
		t.Error("a new token of the same name un-revoked the identity")
	}
}

func testProviderSignIns(t *testing.T, s askd.Store) {
	ctx := t.Context()
	p := &askd.ProviderSignIn{State: hash("state"), Binding: hash("binding"), Nonce: "n0nce", Verifier: "v3rifier", CreatedAt: at(0), ExpiresAt: at(10 * time.Minute)}
	update(t, s, func(tx askd.Tx) error { return tx.SignIns.CreateProviderSignIn(ctx, p) })

	t.Run("state taken", func(t *testing.T) {
		err := s.Update(ctx, func(tx askd.Tx) error { return tx.SignIns.CreateProviderSignIn(ctx, p) })
		wantCode(t, err, askd.ECONFLICT)
	})

	t.Run("taken once", func(t *testing.T) {
		update(t, s, func(tx askd.Tx) error {
			got, err := tx.SignIns.TakeProviderSignIn(ctx, p.State)
			if err != nil {
				return err
			}
			if got.State != p.State || got.Binding != p.Binding || got.Nonce != p.Nonce || got.Verifier != p.Verifier {
				t.Errorf("provider sign-in = %+v, want %+v", got, p)
			}
			checkTime(t, "created_at", got.CreatedAt, p.CreatedAt)
			checkTime(t, "expires_at", got.ExpiresAt, p.ExpiresAt)
			return nil
		})
		err := s.Update(ctx, func(tx askd.Tx) error {
			_, err := tx.SignIns.TakeProviderSignIn(ctx, p.State)
			return err
		})
		wantCode(t, err, askd.ENOTFOUND)
	})

	t.Run("trimmed to the newest", func(t *testing.T) {
		for i := range 5 {
			q := &askd.ProviderSignIn{State: hash(fmt.Sprint("trim ", i)), Binding: hash("b"), Nonce: "n", Verifier: "v",
				CreatedAt: at(time.Duration(i) * time.Second), ExpiresAt: at(time.Hour)}
			update(t, s, func(tx askd.Tx) error { return tx.SignIns.CreateProviderSignIn(ctx, q) })
		}
		var n int
		update(t, s, func(tx askd.Tx) (err error) {
			n, err = tx.SignIns.TrimProviderSignIns(ctx, 2)
			return err
		})
		if n != 3 {
			t.Errorf("trimmed %d, want 3", n)
		}
		update(t, s, func(tx askd.Tx) error {
			for i := range 5 {
				_, err := tx.SignIns.TakeProviderSignIn(ctx, hash(fmt.Sprint("trim ", i)))
				if kept := i >= 3; kept != (err == nil) {
					t.Errorf("provider sign-in %d: kept = %v, want %v (err %v)", i, err == nil, kept, err)
				}
			}
			return nil
		})
	})

	t.Run("expired ones go", func(t *testing.T) {
		q := &askd.ProviderSignIn{State: hash("old"), Binding: hash("b"), Nonce: "n", Verifier: "v", CreatedAt: at(0), ExpiresAt: at(time.Minute)}
		update(t, s, func(tx askd.Tx) error { return tx.SignIns.CreateProviderSignIn(ctx, q) })
		update(t, s, func(tx askd.Tx) error {
			_, err := tx.SignIns.DeleteExpiredSignIns(ctx, at(2*time.Minute))
			return err
		})
		err := s.Update(ctx, func(tx askd.Tx) error {
			_, err := tx.SignIns.TakeProviderSignIn(ctx, q.State)
			return err
		})
		wantCode(t, err, askd.ENOTFOUND)
	})
}

// testConcurrentProviderSignIn takes one provider sign-in from many
// transactions at once: exactly one gets it (a callback replayed while the
// first is served signs nobody in).
func testConcurrentProviderSignIn(t *testing.T, s askd.Store) {
	ctx := t.Context()
	p := &askd.ProviderSignIn{State: hash("contested"), Binding: hash("b"), Nonce: "n", Verifier: "v", CreatedAt: at(0), ExpiresAt: at(time.Minute)}
	update(t, s, func(tx askd.Tx) error { return tx.SignIns.CreateProviderSignIn(ctx, p) })
	const takers = 8
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		got int
	)
	for range takers {
		wg.Go(func() {
			err := s.Update(ctx, func(tx askd.Tx) error {
				_, err := tx.SignIns.TakeProviderSignIn(ctx, p.State)
				return err
			})
			switch askd.ErrorCode(err) {
			case "":
				mu.Lock()
				got++
				mu.Unlock()
			case askd.ENOTFOUND:
			default:
				t.Errorf("take: %v", err)
			}
		})
	}
	wg.Wait()
	if got != 1 {
		t.Errorf("%d of %d takers got the provider sign-in, want 1", got, takers)
	}
}

func testSetTokenHash(t *testing.T, s askd.Store) {
	ctx := t.Context()
	humanToken(t, s, "dave")
	humanToken(t, s, "erin")
	update(t, s, func(tx askd.Tx) error { return tx.Tokens.SetTokenHash(ctx, "dave", hash("dave, rotated")) })
	view(t, s, func(tx askd.Tx) error {
		got, err := tx.Tokens.TokenByHash(ctx, hash("dave, rotated"))
		if err != nil {
			return err
		}
		if got.Name != "dave" {
			t.Errorf("token by its new hash = %q, want dave", got.Name)
		}
		_, err = tx.Tokens.TokenByHash(ctx, hash("dave token"))
		wantCode(t, err, askd.ENOTFOUND)
		return nil
	})
	err := s.Update(ctx, func(tx askd.Tx) error { return tx.Tokens.SetTokenHash(ctx, "nobody", hash("x")) })
	wantCode(t, err, askd.ENOTFOUND)
	err = s.Update(ctx, func(tx askd.Tx) error { return tx.Tokens.SetTokenHash(ctx, "erin", hash("dave, rotated")) })
	wantCode(t, err, askd.ECONFLICT)
}
