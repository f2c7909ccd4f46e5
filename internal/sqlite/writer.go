package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
)

// writer is the write pool's one connection, held from the store's first
// write to Close, and the statements prepared on it: its transactions are
// run with prepared BEGIN IMMEDIATE and COMMIT statements rather than
// database/sql's, which parsed both anew each time and started a goroutine
// per transaction (after an idle pause, a write transaction of one UPDATE
// took 250 µs that way and 140 µs this way: docs/benchmarks.md). Only the
// writer goroutine uses it (runBatch, and indexQueued before it starts).
type writer struct {
	db    *sql.DB
	conn  *sql.Conn // closed once let go (gone), until the next begin
	gone  bool
	stmts map[string]*sql.Stmt
	once  []*sql.Stmt // prepared past maxPrepared: closed when the transaction ends
	open  bool        // a transaction is open on conn
}

// begin starts a write transaction, taking the connection first if the
// writer does not hold it (at the first write, or after it went bad).
func (w *writer) begin(ctx context.Context) error {
	if w.conn == nil || w.gone {
		conn, err := w.db.Conn(ctx)
		if err != nil {
			return err
		}
		w.conn, w.gone = conn, false
	}
	if err := w.exec(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	w.open = true
	return nil
}

// commit commits the open transaction. When it fails, the transaction is
// rolled back, as database/sql's Commit did.
func (w *writer) commit(ctx context.Context) error {
	err := w.exec(ctx, "COMMIT")
	if err == nil {
		w.end()
		return nil
	}
	w.rollback(ctx)
	return err
}

// rollback ends the open transaction, if any, undoing it. SQLite may have
// rolled it back itself (a full disk, an I/O error), and says so by failing
// ROLLBACK: that is the outcome wanted.
func (w *writer) rollback(ctx context.Context) {
	if !w.open {
		return
	}
	w.open = false // before ROLLBACK, whose failure may drop the connection (check)
	_ = w.exec(ctx, "ROLLBACK")
	w.end()
}

// end closes the statements prepared for the transaction alone.
func (w *writer) end() {
	w.open = false
	for _, st := range w.once {
		st.Close()
	}
	w.once = w.once[:0]
}

// exec runs one statement of the writer's own (BEGIN, COMMIT, a savepoint).
func (w *writer) exec(ctx context.Context, query string) error {
	st, err := w.get(ctx, query)
	if err == nil {
		_, err = st.ExecContext(ctx)
	}
	w.check(err)
	return err
}

// get returns the statement for query, prepared on the writer's connection
// the first time and kept: askd's queries are a fixed set. Past
// maxPrepared, queries are prepared for the transaction alone.
func (w *writer) get(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := w.stmts[query]; ok {
		return st, nil
	}
	if w.conn == nil || w.gone {
		return nil, errWriterGone
	}
	st, err := w.conn.PrepareContext(ctx, query)
	if err != nil {
		w.check(err)
		return nil, err
	}
	if len(w.stmts) >= maxPrepared {
		w.once = append(w.once, st)
		return st, nil
	}
	if w.stmts == nil {
		w.stmts = map[string]*sql.Stmt{}
	}
	w.stmts[query] = st
	return st, nil
}

// errWriterGone fails the rest of a transaction whose connection went bad.
var errWriterGone = errors.New("the write connection was lost; the transaction is rolled back")

// queryRow runs query without a statement of its own, for an error that
// preparing it reported: the Row carries it. (On a connection let go, that
// is sql.ErrConnDone: never a read outside the transaction.)
func (w *writer) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return w.conn.QueryRowContext(ctx, query, args...)
}

// check lets the connection go when database/sql has given up on it (the
// driver found it bad): the next transaction takes a new one from the pool.
func (w *writer) check(err error) {
	if errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn) {
		w.drop()
	}
}

// drop closes the statements and gives the connection back to the pool,
// rolling back the transaction open on it, if any.
func (w *writer) drop() error {
	w.rollback(context.Background())
	var errs []error
	for _, st := range w.stmts {
		errs = append(errs, st.Close())
	}
	w.stmts = nil
	w.end()
	if w.conn != nil && !w.gone {
		if err := w.conn.Close(); err != nil && !errors.Is(err, sql.ErrConnDone) {
			errs = append(errs, fmt.Errorf("close the writer's connection: %w", err))
		}
		w.gone = true
	}
	return errors.Join(errs...)
}
