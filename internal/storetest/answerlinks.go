package storetest

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// linkFixture stores a human token and a pending decision ask, and returns
// the ask and a link to it (not stored) answering "Monday".
func linkFixture(t *testing.T, s askd.Store, human string) (*askd.Ask, *askd.AnswerLink) {
	t.Helper()
	humanToken(t, s, human)
	a := newAsk(askd.KindDecision, "s1", at(0))
	a.Options = []askd.Option{{Label: "Monday"}, {Label: "Friday"}}
	create(t, s, a)
	return a, newLink(a, human, "Monday", at(24*time.Hour))
}

func newLink(a *askd.Ask, human, label string, expires time.Time) *askd.AnswerLink {
	return &askd.AnswerLink{
		Hash: hash(fmt.Sprintf("%s's link to %d: %s", human, a.ID, label)), AskID: a.ID, Revision: a.Revision, Label: label,
		Answer: askd.Answer{Answer: label}, Human: human, CreatedAt: at(0), ExpiresAt: expires,
	}
}

func createLinks(t *testing.T, s askd.Store, links ...*askd.AnswerLink) {
	t.Helper()
	update(t, s, func(tx askd.Tx) error {
		for _, l := range links {
			if err := tx.AnswerLinks.CreateAnswerLink(t.Context(), l); err != nil {
				return err
			}
		}
		return nil
	})
}

// readLink returns the stored link with the hash, or the lookup's error.
func readLink(t *testing.T, s askd.Store, hash string) (*askd.AnswerLink, error) {
	t.Helper()
	var l *askd.AnswerLink
	err := s.View(t.Context(), func(tx askd.Tx) (err error) {
		l, err = tx.AnswerLinks.AnswerLink(t.Context(), hash)
		return err
	})
	return l, err
}

func checkLink(t *testing.T, got, want *askd.AnswerLink) {
	t.Helper()
	checkTime(t, "created_at", got.CreatedAt, want.CreatedAt)
	checkTime(t, "expires_at", got.ExpiresAt, want.ExpiresAt)
	checkTimePtr(t, "used_at", got.UsedAt, want.UsedAt)
	g, w := *got, *want
	g.CreatedAt, g.ExpiresAt, g.UsedAt = time.Time{}, time.Time{}, nil
	w.CreatedAt, w.ExpiresAt, w.UsedAt = time.Time{}, time.Time{}, nil
	if !reflect.DeepEqual(g, w) {
		t.Errorf("answer link:\n got %s\nwant %s", dump(&g), dump(&w))
	}
}

// testAnswerLinks: a link comes back as stored, its answer (a question's
// answers keyed by question text, an approval's decision) included; it is
// used once; a hash stored twice, an unknown ask or human token are refused.
func testAnswerLinks(t *testing.T, s askd.Store) {
	ctx := t.Context()
	a, l := linkFixture(t, s, "reviewer")
	q := newAsk(askd.KindQuestion, "s1", at(time.Second))
	create(t, s, q)
	ql := newLink(q, "reviewer", "yes", at(time.Hour))
	ql.Answer = askd.Answer{Answers: map[string]askd.Choice{"Proceed?": {Values: []string{"yes"}}}}
	ap := newAsk(askd.KindApproval, "s2", at(2*time.Second))
	create(t, s, ap)
	al := newLink(ap, "reviewer", "Deny", at(time.Hour))
	al.Answer = askd.Answer{Decision: askd.DecisionRejected}
	al.Revision = 3
	createLinks(t, s, l, ql, al)

	t.Run("round trip", func(t *testing.T) {
		for _, want := range []*askd.AnswerLink{l, ql, al} {
			got, err := readLink(t, s, want.Hash)
			if err != nil {
				t.Fatal(err)
			}
			checkLink(t, got, want)
		}
	})

	t.Run("used once", func(t *testing.T) {
		update(t, s, func(tx askd.Tx) error { return tx.AnswerLinks.UseAnswerLink(ctx, l.Hash, at(time.Minute)) })
		got, err := readLink(t, s, l.Hash)
		if err != nil {
			t.Fatal(err)
		}
		want := *l
		want.UsedAt = ptr(at(time.Minute))
		checkLink(t, got, &want)
		err = s.Update(ctx, func(tx askd.Tx) error { return tx.AnswerLinks.UseAnswerLink(ctx, l.Hash, at(2*time.Minute)) })
		wantCode(t, err, askd.ECONFLICT)
		if got, _ := readLink(t, s, l.Hash); got == nil || got.UsedAt == nil || !got.UsedAt.Equal(stored(at(time.Minute))) {
			t.Errorf("used_at after a second use = %v, want the first use's", got.UsedAt)
		}
	})

	t.Run("unknown", func(t *testing.T) {
		_, err := readLink(t, s, hash("no such link"))
		wantCode(t, err, askd.ENOTFOUND)
		err = s.Update(ctx, func(tx askd.Tx) error { return tx.AnswerLinks.UseAnswerLink(ctx, hash("no such link"), at(0)) })
		wantCode(t, err, askd.ENOTFOUND)
	})

	t.Run("hash taken", func(t *testing.T) {
		err := s.Update(ctx, func(tx askd.Tx) error { return tx.AnswerLinks.CreateAnswerLink(ctx, l) })
		wantCode(t, err, askd.ECONFLICT)
	})

	t.Run("no such ask or token", func(t *testing.T) {
		orphan := newLink(a, "nobody", "Friday", at(time.Hour))
		err := s.Update(ctx, func(tx askd.Tx) error { return tx.AnswerLinks.CreateAnswerLink(ctx, orphan) })
		wantCode(t, err, askd.ENOTFOUND)
		gone := newLink(&askd.Ask{ID: a.ID + 1000, Revision: 1}, "reviewer", "Friday", at(time.Hour))
		err = s.Update(ctx, func(tx askd.Tx) error { return tx.AnswerLinks.CreateAnswerLink(ctx, gone) })
		wantCode(t, err, askd.ENOTFOUND)
	})

	t.Run("view refuses writes", func(t *testing.T) {
		if err := s.View(ctx, func(tx askd.Tx) error { return tx.AnswerLinks.UseAnswerLink(ctx, ql.Hash, at(0)) }); err == nil {
			t.Error("UseAnswerLink in a read-only transaction succeeded")
		}
		if err := s.View(ctx, func(tx askd.Tx) error {
			return tx.AnswerLinks.CreateAnswerLink(ctx, newLink(a, "reviewer", "x", at(time.Hour)))
		}); err == nil {
			t.Error("CreateAnswerLink in a read-only transaction succeeded")
		}
	})
}

// testConcurrentAnswerLinkUse uses one link from many transactions at once:
// exactly one succeeds.
func testConcurrentAnswerLinkUse(t *testing.T, s askd.Store) {
	ctx := t.Context()
	_, l := linkFixture(t, s, "reviewer")
	createLinks(t, s, l)
	const users = 8
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		won    int
		starts = make(chan struct{})
	)
	for range users {
		wg.Go(func() {
			<-starts
			err := s.Update(ctx, func(tx askd.Tx) error { return tx.AnswerLinks.UseAnswerLink(ctx, l.Hash, at(time.Minute)) })
			mu.Lock()
			defer mu.Unlock()
			switch askd.ErrorCode(err) {
			case "":
				won++
			case askd.ECONFLICT:
			default:
				t.Errorf("UseAnswerLink: %v", err)
			}
		})
	}
	close(starts)
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d of %d concurrent users used the link, want 1", won, users)
	}
}

// testAnswerLinksGo: links go when they expire (strictly before the time
// given), when their ask is purged and when their human token is revoked.
func testAnswerLinksGo(t *testing.T, s askd.Store) {
	ctx := t.Context()
	a, l := linkFixture(t, s, "reviewer")
	humanToken(t, s, "leaving")
	old := newLink(a, "reviewer", "Friday", at(time.Minute))
	leaving := newLink(a, "leaving", "Monday", at(time.Hour))
	b := settled(newAsk(askd.KindDecision, "s2", at(0)), askd.ReasonDismissed, at(time.Second))
	create(t, s, b)
	purged := newLink(b, "reviewer", "Monday", at(time.Hour))
	createLinks(t, s, l, old, leaving, purged)

	var n int
	update(t, s, func(tx askd.Tx) (err error) {
		n, err = tx.AnswerLinks.DeleteExpiredAnswerLinks(ctx, at(time.Minute)) // strict: none expired before it
		return err
	})
	if n != 0 {
		t.Fatalf("DeleteExpiredAnswerLinks at the expiry = %d, want 0", n)
	}
	update(t, s, func(tx askd.Tx) (err error) {
		n, err = tx.AnswerLinks.DeleteExpiredAnswerLinks(ctx, at(time.Minute+time.Microsecond))
		return err
	})
	if n != 1 {
		t.Fatalf("DeleteExpiredAnswerLinks = %d, want 1", n)
	}
	update(t, s, func(tx askd.Tx) error { return tx.Tokens.RevokeToken(ctx, "leaving") })
	update(t, s, func(tx askd.Tx) error {
		_, err := tx.Asks.DeleteAsks(ctx, purgeBefore(at(time.Minute)), 1000)
		return err
	})
	for _, gone := range []*askd.AnswerLink{old, leaving, purged} {
		_, err := readLink(t, s, gone.Hash)
		wantCode(t, err, askd.ENOTFOUND)
	}
	if _, err := readLink(t, s, l.Hash); err != nil {
		t.Errorf("the link that stays: %v", err)
	}
}
