// Package postgres implements askd.Store on PostgreSQL through pgx, for askd
// processes that share one database: any number of inbox and agent processes,
// each told of the others' commits by LISTEN/NOTIFY.
//
// # Transactions
//
// Update runs at READ COMMITTED, which gives the guarantees the app relies on
// without SERIALIZABLE's retries:
//   - a write transaction reads asks FOR NO KEY UPDATE, so a read-then-write
//     of an ask (answering it, timing it out, replacing it) holds the row
//     until commit and a concurrent one waits, then sees the committed row;
//   - LockSession takes a transaction advisory lock on the session's name,
//     which serializes what row locks cannot: counting a session's pending
//     asks and then inserting one;
//   - AddEvent takes one transaction advisory lock for the event log, so
//     event ids are handed out in commit order and a reader that has seen id
//     n has seen every event below it (SSE resumes by id without gaps).
//
// Locks are taken in that order within the app's transactions (session, ask
// rows, event log), so they do not deadlock; AddEvent belongs at the end of a
// transaction, as the event log lock is held until commit. Should a caller
// break that order and two transactions wait on each other, PostgreSQL fails
// one of them after deadlock_timeout (1 s by default). This is not
// SERIALIZABLE: a transaction that reads asks by a condition (FindAsks) and
// writes on that basis is safe from concurrent inserts only under
// LockSession. View runs at REPEATABLE READ, read only: one snapshot for all
// of its reads.
//
// # Changes
//
// Triggers created by the migrations NOTIFY askd_events ('<event id>:<ask
// id>') for each event and question_answered ('<ask id>') when an ask becomes
// answered or cancelled; notifications are sent at commit, in commit order. A
// Store keeps one connection of its own, outside the pool, listening to both,
// and calls its watchers from there: for commits of every process, its own
// included. When that connection drops it reconnects with backoff, listens
// again, and then calls the watchers with Change{Reset: true}, so whatever
// was committed while it was away is re-read.
//
// Errors are translated to askd codes here, at the edge: no rows is
// ENOTFOUND, a unique violation ECONFLICT, a lost or refused connection
// EUNAVAILABLE; each keeps the driver's error in its chain for logs.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/askd-dev/askd"
)

// Store is an askd.Store on a PostgreSQL database. It is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	l    *listener
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
	return &Store{pool: pool, l: l}, nil
}

// Update runs fn in a READ COMMITTED transaction and commits it when fn
// returns nil; fn's error is returned as is, and nothing it did is kept. See
// the package comment for how concurrent transactions are kept apart.
// Watchers hear of the commit's events shortly after, from the listener.
func (s *Store) Update(ctx context.Context, fn func(askd.Tx) error) error {
	ptx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return translate(err, "begin write transaction")
	}
	// A no-op after Commit; when fn fails or panics it rolls back and hands the
	// connection back to the pool.
	defer rollback(ctx, ptx)
	if err := fn(&tx{tx: ptx, writable: true}); err != nil {
		return err
	}
	if err := ptx.Commit(ctx); err != nil {
		return translate(err, "commit")
	}
	return nil
}

// View runs fn in a read-only REPEATABLE READ transaction: all its reads see
// the database as of its first one, and nothing uncommitted.
func (s *Store) View(ctx context.Context, fn func(askd.Tx) error) error {
	ptx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return translate(err, "begin read transaction")
	}
	// Nothing to commit: rolling back ends the snapshot.
	defer rollback(ctx, ptx)
	return fn(&tx{tx: ptx})
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
// AskID}), for every ask settled (Change{AskID}), and with Change{Reset: true}
// after the listener reconnected. fn must not block.
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
	s.l.close()
	s.pool.Close()
	return nil
}

// unavailable reports whether err means the database cannot be reached or
// has gone away: a failed connect, a broken connection, or the server
// refusing sessions (shutting down, starting up, too many connections).
func unavailable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pgerrcode.IsConnectionException(pe.Code),
			pe.Code == pgerrcode.AdminShutdown, pe.Code == pgerrcode.CrashShutdown,
			pe.Code == pgerrcode.CannotConnectNow, pe.Code == pgerrcode.TooManyConnections:
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	// SafeToRetry: the statement never reached the server (a closed connection).
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.SafeToRetry(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}

// translate maps a driver error to an askd code, keeping err in the chain, and
// says what was being done. Context cancellation stays as it is.
func translate(err error, what string) error {
	var ae *askd.Error
	var pe *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
	case errors.Is(err, pgx.ErrNoRows):
		err = fmt.Errorf("%w: %w", askd.Errorf(askd.ENOTFOUND, "not found"), err)
	case unavailable(err):
		err = fmt.Errorf("%w: %w", askd.Errorf(askd.EUNAVAILABLE, "the database is unavailable; try again shortly"), err)
	case errors.As(err, &pe) && pe.Code == pgerrcode.UniqueViolation:
		err = fmt.Errorf("%w: %w", askd.Errorf(askd.ECONFLICT, "already exists"), err)
	case errors.As(err, &pe) && pe.Code == pgerrcode.CharacterNotInRepertoire:
		// PostgreSQL text cannot hold U+0000, which SQLite takes.
		err = fmt.Errorf("%w: %w", askd.Errorf(askd.EINVALID, "text may not contain the NUL character (U+0000)"), err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
