// Package postgres implements askd.Store on PostgreSQL through pgx, for askd
// processes that share one database: any number of inbox and agent processes,
// each told of the others' commits by LISTEN/NOTIFY.
//
// # Transactions
//
// Update runs at READ COMMITTED, which gives the guarantees the app relies on
// without SERIALIZABLE's retries:
//   - every write transaction begins by taking one transaction advisory lock,
//     the write lock, held until it ends: write transactions of every process
//     take turns, whole, as SQLite's single writer does (the guarantee of
//     askd.Store.Update). Event ids are then handed out in commit order, so
//     a reader that has seen id n has seen every event below it (SSE
//     resumes by id without gaps), and no two write transactions can
//     deadlock;
//   - a write transaction reads asks FOR NO KEY UPDATE, which is redundant
//     under the write lock but keeps each statement correct on its own, and
//     LockSession, whose job the write lock does, costs nothing;
//   - taking turns costs round trips, not a commit per update: each
//     process's updates that queue meanwhile share one transaction (group
//     commit, see Update), so the lock is taken, and the WAL flushed, once
//     per batch; and statements are pipelined (pipe.go), so an update costs
//     a round trip per read it makes, its writes sent with the next read
//     (its own or the next update's) or the COMMIT.
//
// View runs at REPEATABLE READ, read only: one snapshot for all of its reads,
// concurrent with everything.
//
// # Changes
//
// Triggers created by the migrations NOTIFY askd_asks ('<event id>:<ask
// id>:<snapshot>', the snapshot left out when it would not fit a payload)
// for each event, and question_answered ('<ask id>') when an ask becomes
// answered or cancelled, after its transaction's events; notifications are
// sent at commit, in commit order (askd_events, '<event id>:<ask id>', goes
// too, for older builds: migration 012). A Store keeps one connection of its
// own, outside the pool, listening to askd_asks and question_answered, and
// calls its watchers from there: for commits of every process, its own
// included, each event's change with the ask as it left it (Change.Ask). When that connection drops it reconnects with backoff, listens
// again, and then calls the watchers with Change{Reset: true}, so whatever
// was committed while it was away is re-read.
//
// Errors are translated to askd codes at the edge, in translate.go, the one
// file that reads the driver's errors: no rows is ENOTFOUND, a unique
// violation ECONFLICT, a lost or refused connection EUNAVAILABLE; each keeps
// the driver's error in its chain for logs.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/groupcommit"
)

// Store is an askd.Store on a PostgreSQL database. It is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	l    *listener

	writes *groupcommit.Queue // Update's queue to the writers
}

var _ askd.Store = (*Store)(nil)

// Open connects to the database at url (a postgres:// URL or a key=value
// string, as libpq takes; pool_max_conns and the other pgxpool parameters
// apply), applies the migrations it lacks, starts listening for changes, and
// returns the store. Several processes may open the same database at once.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	cfg.AfterConnect = prepareFraming
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	c, err := pool.Acquire(ctx)
	if err != nil {
		pool.Close()
		return nil, translate(err, "open postgres")
	}
	_, err = migrate(ctx, c)
	c.Release()
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	l, err := listen(ctx, cfg.ConnConfig)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	s := &Store{pool: pool, l: l}
	s.writes = groupcommit.New(writers, maxBatch, errClosed, s.runBatch)
	return s, nil
}

// Update runs fn in a READ COMMITTED write transaction and commits it when
// fn returns nil; fn's error is returned as is, and nothing it did is kept (a
// panic in fn is re-raised in the caller). See the package comment for how
// write transactions are kept apart. Watchers hear of the commit's events
// shortly after, from the listener.
//
// Group commit: updates that queue while the process's writer is busy run
// together in one transaction, each inside its own SAVEPOINT (one failing
// undoes only itself), and share its BEGIN, its write lock and its COMMIT.
// Write transactions take turns through the write lock and, with NOTIFY,
// through commit (see the package comment), so one commit per update would
// cap every process sharing the database at one WAL flush per update.
func (s *Store) Update(ctx context.Context, fn func(askd.Tx) error) error {
	return fault(s.writes.Do(ctx, fn))
}

var errClosed = askd.Errorf(askd.EUNAVAILABLE, "the PostgreSQL store is closed")

const (
	// writers is how many batches of one process may be in flight. One:
	// it takes everything that queued while its last batch held the write
	// lock, so batches are as large as they get. With two, one gathering
	// and waiting for the lock while the other holds it, batches were
	// smaller and alternating runs measured 5-15 % fewer cycles/s.
	writers = 1
	// maxBatch bounds how many updates share one commit.
	maxBatch = 64
	// batchTimeout bounds a batch, so that a database that stops answering
	// fails its updates instead of holding them for good.
	batchTimeout = 30 * time.Second
)

// runBatch runs the updates in one transaction, on one connection through a
// pipe (pipe.go), and answers each. Round trips: the first statement carries
// BEGIN and the write lock; each update's writes go with the next read, its
// own or the next update's, and the last update's with the COMMIT. An
// update that makes no statement at all costs none.
func (s *Store) runBatch(batch []*groupcommit.Update) {
	results := make([]groupcommit.Result, len(batch))
	// Statements run under the batch's context, not a caller's: a cancelled
	// statement would abort the transaction the whole batch shares.
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		groupcommit.Fail(batch, results, translate(err, "begin write transaction"))
		return
	}
	p := newPipe(pc.Conn())
	defer release(ctx, pc, p)
	p.begin()
	shared := len(batch) > 1
	ran := 0
	for i, u := range batch {
		if err := u.Ctx.Err(); err != nil {
			results[i].Err = err
			continue
		}
		m := p.mark()
		p.owner = i
		if shared {
			p.frame(savepoint, "savepoint")
		}
		t := &tx{tx: p, p: p, writable: true, exclusive: true, fixed: ctx}
		// Its held writes go with the next statement, a later update's or
		// the COMMIT; an error of theirs is still its own (pipe.failed).
		results[i] = groupcommit.Call(u, t.areas())
		if broken := p.lost(); broken != nil {
			groupcommit.Fail(batch, results, broken)
			return
		}
		if results[i].OK() {
			ran++ // its savepoint stays until the commit: no RELEASE
			continue
		}
		if sent := p.undo(m); sent && shared {
			// Now, not with the next statement: a failed statement left the
			// transaction aborted, and the server then parses nothing else.
			p.frame(rollbackToSavepoint, "roll back to savepoint")
			if err := p.flush(ctx); err != nil {
				groupcommit.Fail(batch, results, err)
				return
			}
		} else if sent {
			groupcommit.Finish(batch, results) // release rolls it back
			return
		}
	}
	if shared {
		// Every update's held writes are now an earlier one's: one that
		// fails with the COMMIT is undone alone, and the COMMIT sent again.
		p.owner = len(batch)
	}
	ran -= failHeld(p, results)
	if ran == 0 || !p.used {
		// Nothing to commit: release rolls back what was sent, if anything.
		groupcommit.Finish(batch, results)
		return
	}
	held, err := p.finish(ctx, commit, "commit")
	failHeld(p, results)
	if held != nil && p.broken == nil {
		// A batch of one: its held write failed, and the server skipped
		// the COMMIT. Release rolls it back.
		results[0].Err = held
		groupcommit.Finish(batch, results)
		return
	}
	if err == nil {
		err = held
	}
	if err != nil {
		groupcommit.Fail(batch, results, err)
		return
	}
	groupcommit.Finish(batch, results)
}

// failHeld gives the updates whose held writes failed after they ended
// (pipe.failed) their errors, and returns how many it has failed.
func failHeld(p *pipe, results []groupcommit.Result) int {
	n := 0
	for i, err := range p.failed {
		if results[i].OK() {
			results[i].Err = err
			n++
		}
	}
	clear(p.failed)
	return n
}

// release ends p's transaction unless it was committed and hands the
// connection back to the pool. Not on the batch's context alone: a dead
// network must not hold it; a connection whose rollback failed is closed,
// and the pool drops it.
func release(ctx context.Context, pc *pgxpool.Conn, p *pipe) {
	if p.open && !pc.Conn().IsClosed() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if _, err := pc.Conn().Exec(ctx, "ROLLBACK"); err != nil {
			pc.Conn().Close(ctx)
		}
		cancel()
	}
	pc.Release()
}

// View runs fn in a read-only REPEATABLE READ transaction: all its reads see
// the database as of its first one, and nothing uncommitted.
//
// Its BEGIN goes with its first statement (pipe.go): a View with one read is
// two round trips, that read and the ROLLBACK that ends the snapshot.
func (s *Store) View(ctx context.Context, fn func(askd.Tx) error) error {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return fault(translate(err, "begin read transaction"))
	}
	p := newPipe(pc.Conn())
	defer release(ctx, pc, p) // nothing to commit: rolling back ends the snapshot
	p.frame(beginRead, "begin read transaction")
	t := &tx{tx: p, p: p}
	return fault(fn(t.areas()))
}

// ReadAsk reads ask id in one statement, outside any transaction: one round
// trip where View takes three (BEGIN, the SELECT, ROLLBACK). A single
// statement sees one snapshot anyway. App's waits read an answered ask this
// way when its notification could not carry it (Change.Ask nil).
func (s *Store) ReadAsk(ctx context.Context, id int64) (*askd.Ask, error) {
	a, err := scanAsk(s.pool.QueryRow(ctx, "SELECT "+askColumns+" FROM asks WHERE id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, askd.Errorf(askd.ENOTFOUND, "ask %d not found", id)
	}
	if err != nil {
		return nil, fault(translate(err, fmt.Sprintf("read ask %d", id)))
	}
	return a, nil
}

// rollback ends ptx unless it was committed. Not on ctx alone: a caller that
// went away (a cancelled request) would make pgx close the connection rather
// than send the rollback; a bound keeps a dead network from holding it.
func rollback(ctx context.Context, ptx pgx.Tx) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	ptx.Rollback(ctx)
}

// Watch registers fn, called in order on the listener's goroutine for every
// event committed by any process sharing the database (Change{EventID,
// AskID, Ask}, Ask nil when the notification could not carry it), for every
// ask settled (Change{AskID}, after its events), and with Change{Reset:
// true} after the listener reconnected. fn must not block.
func (s *Store) Watch(fn func(askd.Change)) { s.l.watch(fn) }

// Ping reports whether the database answers through the pool.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return translate(err, "ping postgres")
	}
	return nil
}

// Ready is Ping, and in addition an EUNAVAILABLE error while the listener is
// not connected (commits of other processes would go unheard): for /readyz.
func (s *Store) Ready(ctx context.Context) error {
	if err := s.Ping(ctx); err != nil {
		return err
	}
	if !s.Listening() {
		return askd.Errorf(askd.EUNAVAILABLE, "not listening for changes: reconnecting to PostgreSQL")
	}
	return nil
}

// Listening reports whether the listener's connection is up and listening.
func (s *Store) Listening() bool { return s.l.pid.Load() != 0 }

// ListenerPID is the server process id of the listener's connection (as
// pg_stat_activity and pg_terminate_backend know it), 0 while it is down.
func (s *Store) ListenerPID() uint32 { return s.l.pid.Load() }

// Close stops the listener and closes the pool, waiting for connections in
// use to be released.
func (s *Store) Close() error {
	s.writes.Close()
	s.l.close()
	s.pool.Close()
	return nil
}

// Probe writes one row (database_info.probed_at), as any update goes, and
// reports the write's fault, if any: readiness's check that writes work
// (app.Service.Ready).
func (s *Store) Probe(ctx context.Context) error {
	return s.Update(ctx, func(t askd.Tx) error {
		pt := txOf(t)
		_, err := pt.tx.Exec(pt.ctx(ctx), `UPDATE database_info SET probed_at = now() WHERE id = 1`)
		return translate(err, "probe a write")
	})
}
