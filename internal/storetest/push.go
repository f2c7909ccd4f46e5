package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// browser stores a browser session of human (a human token stored already)
// that expires at expires, and returns its hash.
func browser(t *testing.T, s askd.Store, human, name string, expires time.Time) string {
	t.Helper()
	b := &askd.BrowserSession{Hash: hash(name), Human: human, CreatedAt: at(0), LastSeenAt: at(0), ExpiresAt: expires}
	update(t, s, func(tx askd.Tx) error { return tx.SignIns.CreateBrowserSession(t.Context(), b) })
	return b.Hash
}

func pushSub(endpoint, browser, human string) *askd.PushSubscription {
	return &askd.PushSubscription{Endpoint: endpoint, Keys: askd.PushKeys{P256dh: "key of " + endpoint, Auth: "auth of " + endpoint},
		Browser: browser, Human: human, CreatedAt: at(time.Second)}
}

// endpoints lists the endpoints of the subscriptions live at t.
func endpoints(t *testing.T, s askd.Store, live time.Time) []string {
	t.Helper()
	var out []string
	view(t, s, func(tx askd.Tx) error {
		ps, err := tx.Push.PushSubscriptions(t.Context(), live)
		for _, p := range ps {
			out = append(out, p.Endpoint)
		}
		return err
	})
	return out
}

func testPushSubscriptions(t *testing.T, s askd.Store) {
	ctx := t.Context()
	humanToken(t, s, "alice")
	humanToken(t, s, "bob")
	phone := browser(t, s, "alice", "phone", at(time.Hour))
	laptop := browser(t, s, "bob", "laptop", at(2*time.Hour))

	p := pushSub("https://push.example/b", phone, "alice")
	update(t, s, func(tx askd.Tx) error { return tx.Push.PutPushSubscription(ctx, p) })
	view(t, s, func(tx askd.Tx) error {
		got, err := tx.Push.PushSubscription(ctx, p.Endpoint)
		if err != nil {
			return err
		}
		if got.Endpoint != p.Endpoint || got.Keys != p.Keys || got.Browser != phone || got.Human != "alice" {
			t.Errorf("subscription = %+v, want %+v", got, p)
		}
		checkTime(t, "created_at", got.CreatedAt, p.CreatedAt)
		return nil
	})

	t.Run("put again replaces", func(t *testing.T) {
		// The same browser, signed in anew as bob: the endpoint is his now.
		again := pushSub(p.Endpoint, laptop, "bob")
		again.Keys.Auth = "new auth"
		update(t, s, func(tx askd.Tx) error { return tx.Push.PutPushSubscription(ctx, again) })
		view(t, s, func(tx askd.Tx) error {
			got, err := tx.Push.PushSubscription(ctx, p.Endpoint)
			if err == nil && (got.Human != "bob" || got.Browser != laptop || got.Keys.Auth != "new auth") {
				t.Errorf("subscription after put again = %+v, want bob's with the new auth", got)
			}
			return err
		})
		update(t, s, func(tx askd.Tx) error { return tx.Push.PutPushSubscription(ctx, p) })
	})

	t.Run("listed by endpoint while live", func(t *testing.T) {
		update(t, s, func(tx askd.Tx) error {
			return tx.Push.PutPushSubscription(ctx, pushSub("https://push.example/a", laptop, "bob"))
		})
		if got := endpoints(t, s, at(0)); len(got) != 2 || got[0] != "https://push.example/a" || got[1] != "https://push.example/b" {
			t.Errorf("live subscriptions = %v, want a then b", got)
		}
		// phone's session expires at 1h: strictly after is live.
		if got := endpoints(t, s, at(time.Hour)); len(got) != 1 || got[0] != "https://push.example/a" {
			t.Errorf("subscriptions live at the phone's expiry = %v, want only a", got)
		}
		if got := endpoints(t, s, at(3*time.Hour)); len(got) != 0 {
			t.Errorf("subscriptions live after every expiry = %v, want none", got)
		}
	})

	t.Run("no such browser session", func(t *testing.T) {
		err := s.Update(ctx, func(tx askd.Tx) error {
			return tx.Push.PutPushSubscription(ctx, pushSub("https://push.example/x", hash("nobody"), "alice"))
		})
		wantCode(t, err, askd.ENOTFOUND)
	})

	t.Run("delete", func(t *testing.T) {
		update(t, s, func(tx askd.Tx) error { return tx.Push.DeletePushSubscription(ctx, "https://push.example/a") })
		err := s.Update(ctx, func(tx askd.Tx) error { return tx.Push.DeletePushSubscription(ctx, "https://push.example/a") })
		wantCode(t, err, askd.ENOTFOUND)
		err = s.View(ctx, func(tx askd.Tx) error {
			_, err := tx.Push.PushSubscription(ctx, "https://push.example/a")
			return err
		})
		wantCode(t, err, askd.ENOTFOUND)
	})

	t.Run("view refuses writes", func(t *testing.T) {
		if err := s.View(ctx, func(tx askd.Tx) error {
			return tx.Push.PutPushSubscription(ctx, pushSub("https://push.example/v", phone, "alice"))
		}); err == nil {
			t.Error("PutPushSubscription in a read-only transaction succeeded")
		}
	})
}

// testPushSubscriptionsGo: a subscription goes with its browser session
// (signing out, expiry) and with its human token (revoked).
func testPushSubscriptionsGo(t *testing.T, s askd.Store) {
	ctx := t.Context()
	humanToken(t, s, "alice")
	humanToken(t, s, "bob")
	out := browser(t, s, "alice", "signs out", at(time.Hour))
	old := browser(t, s, "alice", "expires", at(time.Minute))
	bobs := browser(t, s, "bob", "revoked", at(time.Hour))
	kept := browser(t, s, "alice", "kept", at(time.Hour))
	update(t, s, func(tx askd.Tx) error {
		for _, p := range []*askd.PushSubscription{
			pushSub("https://push.example/out", out, "alice"), pushSub("https://push.example/old", old, "alice"),
			pushSub("https://push.example/bob", bobs, "bob"), pushSub("https://push.example/kept", kept, "alice"),
		} {
			if err := tx.Push.PutPushSubscription(ctx, p); err != nil {
				return err
			}
		}
		return nil
	})
	update(t, s, func(tx askd.Tx) error { return tx.SignIns.EndBrowserSession(ctx, out) })
	update(t, s, func(tx askd.Tx) error {
		_, err := tx.SignIns.DeleteExpiredSignIns(ctx, at(30*time.Minute))
		return err
	})
	update(t, s, func(tx askd.Tx) error { return tx.Tokens.RevokeToken(ctx, "bob") })
	for _, e := range []string{"https://push.example/out", "https://push.example/old", "https://push.example/bob"} {
		err := s.View(ctx, func(tx askd.Tx) error {
			_, err := tx.Push.PushSubscription(ctx, e)
			return err
		})
		wantCode(t, err, askd.ENOTFOUND)
	}
	if got := endpoints(t, s, at(0)); len(got) != 1 || got[0] != "https://push.example/kept" {
		t.Errorf("subscriptions left = %v, want only kept", got)
	}
}

// testVAPIDKeys: one pair, made once even by processes starting at once.
func testVAPIDKeys(t *testing.T, s askd.Store) {
	ctx := t.Context()
	err := s.View(ctx, func(tx askd.Tx) error {
		_, err := tx.Push.VAPIDKeys(ctx)
		return err
	})
	wantCode(t, err, askd.ENOTFOUND)

	const makers = 6
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		won []string
	)
	for i := range makers {
		wg.Go(func() {
			k := &askd.VAPIDKeys{Public: "public " + string(rune('a'+i)), Private: "private", CreatedAt: at(time.Minute)}
			err := s.Update(ctx, func(tx askd.Tx) error { return tx.Push.CreateVAPIDKeys(ctx, k) })
			switch askd.ErrorCode(err) {
			case "":
				mu.Lock()
				won = append(won, k.Public)
				mu.Unlock()
			case askd.ECONFLICT:
			default:
				t.Errorf("CreateVAPIDKeys: %v", err)
			}
		})
	}
	wg.Wait()
	if len(won) != 1 {
		t.Fatalf("%d of %d makers stored VAPID keys, want 1", len(won), makers)
	}
	view(t, s, func(tx askd.Tx) error {
		k, err := tx.Push.VAPIDKeys(ctx)
		if err != nil {
			return err
		}
		if k.Public != won[0] || k.Private != "private" {
			t.Errorf("VAPID keys = %+v, want the winner's (%s)", k, won[0])
		}
		checkTime(t, "created_at", k.CreatedAt, at(time.Minute))
		return nil
	})
}

// testCountPushSubscriptions: a person's subscriptions are counted across
// their browser sessions, and one browser session's among them.
func testCountPushSubscriptions(t *testing.T, s askd.Store) {
	ctx := t.Context()
	humanToken(t, s, "alice")
	humanToken(t, s, "bob")
	phone := browser(t, s, "alice", "phone", at(time.Hour))
	laptop := browser(t, s, "alice", "laptop", at(time.Hour))
	desk := browser(t, s, "bob", "desk", at(time.Hour))
	update(t, s, func(tx askd.Tx) error {
		for _, p := range []*askd.PushSubscription{
			pushSub("https://push.example/1", phone, "alice"),
			pushSub("https://push.example/2", phone, "alice"),
			pushSub("https://push.example/3", laptop, "alice"),
			pushSub("https://push.example/4", desk, "bob"),
		} {
			if err := tx.Push.PutPushSubscription(ctx, p); err != nil {
				return err
			}
		}
		return nil
	})
	tests := []struct {
		name                   string
		browser, human         string
		wantBrowser, wantHuman int
	}{
		{"a browser session of two", phone, "alice", 2, 3},
		{"a browser session of one", laptop, "alice", 1, 3},
		{"another person's browser session", desk, "alice", 0, 3},
		{"the other person", desk, "bob", 1, 1},
		{"a browser session with none", hash("none"), "carol", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			view(t, s, func(tx askd.Tx) error {
				ofBrowser, ofHuman, err := tx.Push.CountPushSubscriptions(ctx, tt.browser, tt.human)
				if ofBrowser != tt.wantBrowser || ofHuman != tt.wantHuman {
					t.Errorf("CountPushSubscriptions = %d, %d; want %d, %d", ofBrowser, ofHuman, tt.wantBrowser, tt.wantHuman)
				}
				return err
			})
		})
	}
}
