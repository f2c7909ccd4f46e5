package app_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/sqlite"
)

// faulty is a SQLite store whose writes, probe included, fail with fail's
// error while it is set.
type faulty struct {
	*sqlite.Store
	fail atomic.Pointer[askd.Error]
}

func (f *faulty) Update(ctx context.Context, fn func(askd.Tx) error) error {
	if e := f.fail.Load(); e != nil {
		return e
	}
	return f.Store.Update(ctx, fn)
}

func (f *faulty) Probe(ctx context.Context) error {
	if e := f.fail.Load(); e != nil {
		return e
	}
	return f.Store.Probe(ctx)
}

func openFaulty(t *testing.T) (*faulty, *app.Service) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "askd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &faulty{Store: st}
	return f, app.New(f, app.Config{})
}

// Ready fails while writes fail, naming the cause, and recovers by itself
// once a write (its own probe) succeeds again.
func TestReadyFollowsWrites(t *testing.T) {
	f, svc := openFaulty(t)
	ctx := t.Context()
	if err := svc.Ready(ctx); err != nil {
		t.Fatalf("Ready on a new store: %v", err)
	}
	f.fail.Store(askd.Fault(askd.EFULL))
	if _, _, err := svc.CreateToken(ctx, app.Itself, app.TokenSpec{Name: "alice", Role: askd.RoleHuman}); askd.ErrorCode(err) != askd.EFULL {
		t.Fatalf("a write on a full disk: %v", err)
	}
	if err := svc.Ready(ctx); askd.ErrorCode(err) != askd.EFULL || askd.ErrorMessage(err) != "the database disk is full" {
		t.Fatalf("Ready while writes fail: %v (%s)", err, askd.ErrorCode(err))
	}
	f.fail.Store(nil)
	if err := svc.Ready(ctx); err != nil {
		t.Fatalf("Ready once writes work again: %v", err)
	}
	// A request's own error says nothing of the store.
	if _, err := svc.Get(ctx, askd.Caller{Name: "alice", Role: askd.RoleHuman}, 99); askd.ErrorCode(err) != askd.ENOTFOUND {
		t.Fatalf("Get 99: %v", err)
	}
	if err := svc.Ready(ctx); err != nil {
		t.Fatalf("Ready after a not-found: %v", err)
	}
}

// A damaged file keeps Ready failing: it does not heal by itself.
func TestReadyStaysFailedOnCorruption(t *testing.T) {
	f, svc := openFaulty(t)
	ctx := t.Context()
	f.fail.Store(askd.Fault(askd.ECORRUPT))
	_, _, _ = svc.CreateToken(ctx, app.Itself, app.TokenSpec{Name: "alice", Role: askd.RoleHuman})
	f.fail.Store(nil)
	if err := svc.Ready(ctx); askd.ErrorCode(err) != askd.ECORRUPT {
		t.Fatalf("Ready after a corruption error: %v", err)
	}
}

// While a check of the file runs, Ready fails; a failed check is kept.
func TestReadyWaitsForTheFileCheck(t *testing.T) {
	_, svc := openFaulty(t)
	release := make(chan struct{})
	done := make(chan struct{})
	svc.CheckFile(func() error { <-release; defer close(done); return errors.New("page 3: btree damaged") })
	if err := svc.Ready(t.Context()); askd.ErrorCode(err) != askd.EUNAVAILABLE {
		t.Fatalf("Ready during the check: %v", err)
	}
	close(release)
	<-done
	for {
		err := svc.Ready(t.Context())
		if askd.ErrorCode(err) == askd.ECORRUPT {
			break
		}
		if askd.ErrorCode(err) != askd.EUNAVAILABLE {
			t.Fatalf("Ready after a failed check: %v", err)
		}
	}
}
