package storetest

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// humanToken stores a human token named name and returns it.
func humanToken(t *testing.T, s askd.Store, name string) *askd.Token {
	t.Helper()
	tok := &askd.Token{Name: name, Role: askd.RoleHuman, Hash: hash(name + " token"), CreatedAt: at(0)}
	update(t, s, func(tx askd.Tx) error { return tx.Tokens.CreateToken(t.Context(), tok) })
	return tok
}

func testSignInCodes(t *testing.T, s askd.Store) {
	ctx := t.Context()
	humanToken(t, s, "reviewer")
	code := &askd.SignInCode{Hash: hash("code"), Human: "reviewer", CreatedAt: at(0), ExpiresAt: at(10 * time.Minute)}
	update(t, s, func(tx askd.Tx) error { return tx.SignIns.CreateSignInCode(ctx, code) })

	t.Run("taken once", func(t *testing.T) {
		update(t, s, func(tx askd.Tx) error {
			got, err := tx.SignIns.TakeSignInCode(ctx, code.Hash)
			if err != nil {
				return err
			}
			if got.Hash != code.Hash || got.Human != code.Human {
				t.Errorf("code = %s/%s, want %s/%s", got.Hash, got.Human, code.Hash, code.Human)
			}
			checkTime(t, "created_at", got.CreatedAt, code.CreatedAt)
			checkTime(t, "expires_at", got.ExpiresAt, code.ExpiresAt)
			return nil
		})
		err := s.Update(ctx, func(tx askd.Tx) error {
			_, err := tx.SignIns.TakeSignInCode(ctx, code.Hash)
			return err
		})
		wantCode(t, err, askd.ENOTFOUND)
	})

	t.Run("hash taken", func(t *testing.T) {
		c := &askd.SignInCode{Hash: hash("twice"), Human: "reviewer", CreatedAt: at(0), ExpiresAt: at(time.Minute)}
		update(t, s, func(tx askd.Tx) error { return tx.SignIns.CreateSignInCode(ctx, c) })
		err := s.Update(ctx, func(tx askd.Tx) error { return tx.SignIns.CreateSignInCode(ctx, c) })
		wantCode(t, err, askd.ECONFLICT)
	})

	t.Run("no such token", func(t *testing.T) {
		c := &askd.SignInCode{Hash: hash("orphan"), Human: "nobody", CreatedAt: at(0), ExpiresAt: at(time.Minute)}
		err := s.Update(ctx, func(tx askd.Tx) error { return tx.SignIns.CreateSignInCode(ctx, c) })
		wantCode(t, err, askd.ENOTFOUND)
	})

	t.Run("view refuses taking", func(t *testing.T) {
		err := s.View(ctx, func(tx askd.Tx) error {
			_, err := tx.SignIns.TakeSignInCode(ctx, hash("twice"))
			return err
		})
		if err == nil {
			t.Fatal("TakeSignInCode in a read-only transaction succeeded")
		}
	})
}

// testConcurrentSignInCode takes one code from many transactions at once:
// exactly one gets it.
func testConcurrentSignInCode(t *testing.T, s askd.Store) {
	ctx := t.Context()
	humanToken(t, s, "reviewer")
	code := &askd.SignInCode{Hash: hash("contested"), Human: "reviewer", CreatedAt: at(0), ExpiresAt: at(time.Minute)}
	update(t, s, func(tx askd.Tx) error { return tx.SignIns.CreateSignInCode(ctx, code) })
	const takers = 8
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		won    int
		starts = make(chan struct{})
	)
	for range takers {
		wg.Go(func() {
			<-starts
			err := s.Update(ctx, func(tx askd.Tx) error {
				_, err := tx.SignIns.TakeSignInCode(ctx, code.Hash)
				return err
			})
			mu.Lock()
			defer mu.Unlock()
			switch askd.ErrorCode(err) {
			case "":
				won++
			case askd.ENOTFOUND:
			default:
				t.Errorf("TakeSignInCode: %v", err)
			}
		})
	}
	close(starts)
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d of %d concurrent takers got the code, want 1", won, takers)
	}
}

func checkBrowserSession(t *testing.T, got, want *askd.BrowserSession) {
	t.Helper()
	if got.Hash != want.Hash || got.Human != want.Human {
		t.Errorf("browser session = %s/%s, want %s/%s", got.Hash, got.Human, want.Hash, want.Human)
	}
	checkTime(t, "created_at", got.CreatedAt, want.CreatedAt)
	checkTime(t, "last_seen_at", got.LastSeenAt, want.LastSeenAt)
	checkTime(t, "expires_at", got.ExpiresAt, want.ExpiresAt)
	if got.Via != want.Via {
		t.Errorf("via = %q, want %q", got.Via, want.Via)
	}
}

func testBrowserSessions(t *testing.T, s askd.Store) {
	ctx := t.Context()
	humanToken(t, s, "reviewer")
	b := &askd.BrowserSession{Hash: hash("cookie"), Human: "reviewer", CreatedAt: at(0), LastSeenAt: at(0), ExpiresAt: at(24 * time.Hour),
		Via: askd.ViaOIDC + "https://id.example.com"}
	update(t, s, func(tx askd.Tx) error { return tx.SignIns.CreateBrowserSession(ctx, b) })

	t.Run("by hash", func(t *testing.T) {
		view(t, s, func(tx askd.Tx) error {
			got, err := tx.SignIns.BrowserSession(ctx, b.Hash)
			if err != nil {
				return err
			}
			checkBrowserSession(t, got, b)
			_, err = tx.SignIns.BrowserSession(ctx, hash("another cookie"))
			wantCode(t, err, askd.ENOTFOUND)
			return nil
		})
	})

	t.Run("touch", func(t *testing.T) {
		b.LastSeenAt, b.ExpiresAt = at(time.Hour), at(25*time.Hour)
		update(t, s, func(tx askd.Tx) error { return tx.SignIns.TouchBrowserSession(ctx, b.Hash, b.LastSeenAt, b.ExpiresAt) })
		view(t, s, func(tx askd.Tx) error {
			got, err := tx.SignIns.BrowserSession(ctx, b.Hash)
			if err != nil {
				return err
			}
			checkBrowserSession(t, got, b)
			return nil
		})
		err := s.Update(ctx, func(tx askd.Tx) error { return tx.SignIns.TouchBrowserSession(ctx, hash("nope"), at(0), at(0)) })
		wantCode(t, err, askd.ENOTFOUND)
	})

	t.Run("of a person, least recently seen first", func(t *testing.T) {
		humanToken(t, s, "other")
		for _, o := range []*askd.BrowserSession{
			{Hash: hash("later"), Human: "reviewer", CreatedAt: at(0), LastSeenAt: at(2 * time.Hour), ExpiresAt: at(time.Hour)},
			{Hash: hash("earlier"), Human: "reviewer", CreatedAt: at(0), LastSeenAt: at(0), ExpiresAt: at(time.Hour)},
			{Hash: hash("another's"), Human: "other", CreatedAt: at(0), LastSeenAt: at(0), ExpiresAt: at(time.Hour)},
		} {
			update(t, s, func(tx askd.Tx) error { return tx.SignIns.CreateBrowserSession(ctx, o) })
		}
		view(t, s, func(tx askd.Tx) error {
			bs, err := tx.SignIns.BrowserSessionsOf(ctx, "reviewer")
			var got []string
			for _, b := range bs {
				got = append(got, b.Hash)
				if b.Human != "reviewer" {
					t.Errorf("browser session %s of %q", b.Hash, b.Human)
				}
			}
			want := []string{hash("earlier"), b.Hash, hash("later")} // b was seen at 1h
			if !slices.Equal(got, want) {
				t.Errorf("BrowserSessionsOf = %v, want %v", got, want)
			}
			return err
		})
		update(t, s, func(tx askd.Tx) error {
			for _, h := range []string{hash("later"), hash("earlier"), hash("another's")} {
				if err := tx.SignIns.EndBrowserSession(ctx, h); err != nil {
					return err
				}
			}
			return nil
		})
	})

	t.Run("hash taken", func(t *testing.T) {
		err := s.Update(ctx, func(tx askd.Tx) error { return tx.SignIns.CreateBrowserSession(ctx, b) })
		wantCode(t, err, askd.ECONFLICT)
	})

	t.Run("no such token", func(t *testing.T) {
		orphan := &askd.BrowserSession{Hash: hash("orphan"), Human: "nobody", CreatedAt: at(0), LastSeenAt: at(0), ExpiresAt: at(time.Hour)}
		err := s.Update(ctx, func(tx askd.Tx) error { return tx.SignIns.CreateBrowserSession(ctx, orphan) })
		wantCode(t, err, askd.ENOTFOUND)
	})

	t.Run("end", func(t *testing.T) {
		update(t, s, func(tx askd.Tx) error { return tx.SignIns.EndBrowserSession(ctx, b.Hash) })
		view(t, s, func(tx askd.Tx) error {
			_, err := tx.SignIns.BrowserSession(ctx, b.Hash)
			wantCode(t, err, askd.ENOTFOUND)
			return nil
		})
		err := s.Update(ctx, func(tx askd.Tx) error { return tx.SignIns.EndBrowserSession(ctx, b.Hash) })
		wantCode(t, err, askd.ENOTFOUND)
	})
}

// testRevokeEndsSignIns: revoking a human token deletes its sign-in codes and
// browser sessions, and no one else's.
func testRevokeEndsSignIns(t *testing.T, s askd.Store) {
	ctx := t.Context()
	humanToken(t, s, "leaving")
	humanToken(t, s, "staying")
	update(t, s, func(tx askd.Tx) error {
		for _, name := range []string{"leaving", "staying"} {
			if err := tx.SignIns.CreateSignInCode(ctx, &askd.SignInCode{Hash: hash(name + " code"), Human: name, CreatedAt: at(0), ExpiresAt: at(time.Hour)}); err != nil {
				return err
			}
			if err := tx.SignIns.CreateBrowserSession(ctx, &askd.BrowserSession{Hash: hash(name + " cookie"), Human: name, CreatedAt: at(0), LastSeenAt: at(0), ExpiresAt: at(time.Hour)}); err != nil {
				return err
			}
		}
		return nil
	})
	update(t, s, func(tx askd.Tx) error { return tx.Tokens.RevokeToken(ctx, "leaving") })
	view(t, s, func(tx askd.Tx) error {
		_, err := tx.SignIns.BrowserSession(ctx, hash("leaving cookie"))
		wantCode(t, err, askd.ENOTFOUND)
		_, err = tx.SignIns.BrowserSession(ctx, hash("staying cookie"))
		return err
	})
	err := s.Update(ctx, func(tx askd.Tx) error {
		_, err := tx.SignIns.TakeSignInCode(ctx, hash("leaving code"))
		return err
	})
	wantCode(t, err, askd.ENOTFOUND)
	update(t, s, func(tx askd.Tx) error {
		_, err := tx.SignIns.TakeSignInCode(ctx, hash("staying code"))
		return err
	})
}

// testDeleteExpiredSignIns: codes and browser sessions expired before the
// time go, strictly before; the rest stay.
func testDeleteExpiredSignIns(t *testing.T, s askd.Store) {
	ctx := t.Context()
	humanToken(t, s, "reviewer")
	update(t, s, func(tx askd.Tx) error {
		for _, c := range []*askd.SignInCode{
			{Hash: hash("old code"), Human: "reviewer", CreatedAt: at(0), ExpiresAt: at(time.Minute)},
			{Hash: hash("new code"), Human: "reviewer", CreatedAt: at(0), ExpiresAt: at(time.Hour)},
		} {
			if err := tx.SignIns.CreateSignInCode(ctx, c); err != nil {
				return err
			}
		}
		for _, b := range []*askd.BrowserSession{
			{Hash: hash("old cookie"), Human: "reviewer", CreatedAt: at(0), LastSeenAt: at(0), ExpiresAt: at(time.Minute)},
			{Hash: hash("new cookie"), Human: "reviewer", CreatedAt: at(0), LastSeenAt: at(0), ExpiresAt: at(time.Hour)},
		} {
			if err := tx.SignIns.CreateBrowserSession(ctx, b); err != nil {
				return err
			}
		}
		return nil
	})
	var n int
	update(t, s, func(tx askd.Tx) (err error) {
		n, err = tx.SignIns.DeleteExpiredSignIns(ctx, at(time.Minute)) // strict: none expired before it
		return err
	})
	if n != 0 {
		t.Fatalf("DeleteExpiredSignIns at the expiry = %d, want 0", n)
	}
	update(t, s, func(tx askd.Tx) (err error) {
		n, err = tx.SignIns.DeleteExpiredSignIns(ctx, at(time.Minute+time.Microsecond))
		return err
	})
	if n != 2 {
		t.Fatalf("DeleteExpiredSignIns = %d, want 2", n)
	}
	view(t, s, func(tx askd.Tx) error {
		_, err := tx.SignIns.BrowserSession(ctx, hash("old cookie"))
		wantCode(t, err, askd.ENOTFOUND)
		_, err = tx.SignIns.BrowserSession(ctx, hash("new cookie"))
		return err
	})
	err := s.Update(ctx, func(tx askd.Tx) error {
		_, err := tx.SignIns.TakeSignInCode(ctx, hash("old code"))
		return err
	})
	wantCode(t, err, askd.ENOTFOUND)
	update(t, s, func(tx askd.Tx) error {
		_, err := tx.SignIns.TakeSignInCode(ctx, hash("new code"))
		return err
	})
}
