package storetest

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/askd-dev/askd"
)

// The check of WritersTakeTurns fails stores whose writers take turns only
// per session, or only per handle: each must overlap some update of
// countAndAdd with another.
func TestWritersTakeTurnsFailsLooseStores(t *testing.T) {
	for _, tt := range []struct {
		name   string
		stores func(db *looseDB) []askd.Store
	}{
		{"a lock per session", func(db *looseDB) []askd.Store {
			return []askd.Store{&looseStore{db: db, perSession: true}}
		}},
		{"a lock per handle", func(db *looseDB) []askd.Store {
			return []askd.Store{&looseStore{db: db, perHandle: true}, &looseStore{db: db, perHandle: true}}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const n = 64
			got, err := countAndAdd(t.Context(), tt.stores(newLooseDB()), "agent-1", n)
			if err == nil && slices.Equal(got, numbered(n)) {
				t.Fatalf("countAndAdd found no overlap with %s", tt.name)
			}
			t.Logf("with %s: %v, revisions %v", tt.name, err, got)
		})
	}
}

// looseDB is the asks of looseStores, in memory. It plays a server's round
// trips for countAndAdd, whose updates come in pairs: an update that has
// read once reads again only after the other of its pair has read too, as
// it would while its read travelled to a server. So where nothing keeps the
// two apart they overlap for sure, not when the scheduler happens to let
// them.
type looseDB struct {
	mu         sync.Mutex
	read       *sync.Cond // an update read for the first time
	firstReads int        // how many updates have read
	asks       []*askd.Ask
	sessions   map[string]*sync.Mutex
}

func newLooseDB() *looseDB {
	db := &looseDB{sessions: map[string]*sync.Mutex{}}
	db.read = sync.NewCond(&db.mu)
	return db
}

// looseStore is a handle on a looseDB whose write transactions take turns
// only per session (LockSession) or only per handle: the weaker stores the
// suite must fail. It does what countAndAdd needs and no more.
type looseStore struct {
	askd.Store // nil: only Update and View are used
	db         *looseDB
	perSession bool
	perHandle  bool
	handle     sync.Mutex
}

func (s *looseStore) Update(ctx context.Context, fn func(askd.Tx) error) error {
	if s.perHandle {
		s.handle.Lock()
		defer s.handle.Unlock()
	}
	tx := &looseTx{db: s.db, perSession: s.perSession}
	defer tx.end()
	return fn(askd.Tx{Sessions: tx, Asks: tx})
}

func (s *looseStore) View(ctx context.Context, fn func(askd.Tx) error) error {
	tx := &looseTx{db: s.db, read: true}
	return fn(askd.Tx{Sessions: tx, Asks: tx})
}

// looseTx is one transaction of a looseStore.
type looseTx struct {
	askd.SessionTx // nil: only LockSession is used
	askd.AskTx     // nil: only CountAsks, FindAsks and CreateAsk are used
	db             *looseDB
	perSession     bool
	read           bool          // it has read once
	locked         []*sync.Mutex // the sessions it locked
}

func (t *looseTx) LockSession(ctx context.Context, agent, session string) error {
	if !t.perSession {
		return nil
	}
	t.db.mu.Lock()
	m := t.db.sessions[agent+"\n"+session]
	if m == nil {
		m = new(sync.Mutex)
		t.db.sessions[agent+"\n"+session] = m
	}
	t.db.mu.Unlock()
	m.Lock()
	t.locked = append(t.locked, m)
	return nil
}

func (t *looseTx) CountAsks(ctx context.Context, f askd.AskFilter) (int, error) {
	asks, err := t.FindAsks(ctx, f)
	return len(asks), err
}

func (t *looseTx) FindAsks(ctx context.Context, f askd.AskFilter) ([]*askd.Ask, error) {
	t.db.mu.Lock()
	defer t.db.mu.Unlock()
	if !t.read {
		t.read = true
		t.db.firstReads++
		t.db.read.Broadcast()
	} else {
		for t.db.firstReads%2 == 1 {
			t.db.read.Wait()
		}
	}
	return slices.DeleteFunc(slices.Clone(t.db.asks), func(a *askd.Ask) bool { return a.Agent != f.Agent }), nil
}

func (t *looseTx) CreateAsk(ctx context.Context, a *askd.Ask) error {
	t.db.mu.Lock()
	defer t.db.mu.Unlock()
	t.db.asks = append(t.db.asks, a)
	a.ID = int64(len(t.db.asks))
	return nil
}

// end ends t: its sessions are unlocked.
func (t *looseTx) end() {
	for _, m := range t.locked {
		m.Unlock()
	}
}
