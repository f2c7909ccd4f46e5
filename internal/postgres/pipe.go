package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/askd-dev/askd"
)

// querier is what a transaction's statements run on: a pipe.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// pipe is a write batch's connection, or a View's. It holds statements
// back and sends them in one round trip with the next statement whose
// answer is needed (a pipeline: one Sync for all), so that an update costs a
// round trip per read plus one, and a View a round trip per read plus its
// ROLLBACK:
//   - the transaction's BEGIN and write lock, and each shared update's
//     SAVEPOINT, go with the first statement after them;
//   - held writes (UpdateAsk, AddEvent: see hold) go with the next read,
//     their update's own or, in a shared batch, a later update's, or with
//     the COMMIT.
//
// In a pipeline, a statement that fails makes the server skip the rest up to
// the Sync. Every statement sent is read back in order, so the first error
// is the one reported, by the item it belongs to: a held write's by its own
// check, the statement's by the caller, BEGIN's and the other framing
// statements' as broken (the whole batch fails). A held write of an earlier
// update of a shared batch that fails is that update's error (failed): it
// alone is undone, and what the server skipped after it is sent again
// (resend).
type pipe struct {
	conn  *pgx.Conn
	b     *pgx.Batch
	reads []queued // one per statement queued by frame or hold, in order
	sends int      // round trips so far
	used  bool     // a statement other than framing was queued
	open  bool     // BEGIN has been sent and no COMMIT or ROLLBACK since
	// owner is the update of a shared write batch (its index) whose
	// statements are being queued; runBatch sets it.
	owner int
	// failed are the errors of held writes of updates before owner, by
	// update, that came back with a later update's statement or the
	// COMMIT: runBatch's to give those updates.
	failed map[int]error
	// broken is the error of a framing statement: the transaction is lost.
	broken error
}

// queued is a statement queued by frame or hold: how its result is read,
// and the update that queued it.
type queued struct {
	read  func(pgx.BatchResults) error
	owner int
}

func newPipe(conn *pgx.Conn) *pipe { return &pipe{conn: conn, b: &pgx.Batch{}} }

// The framing statements of a write batch, and of a View.
const (
	beginWrite = "BEGIN ISOLATION LEVEL READ COMMITTED"
	beginRead  = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
	// Each update of a shared batch runs inside a savepoint of this one
	// name: a savepoint of a name already taken hides the older one until
	// it is rolled back to, released or committed, so rolling back to it
	// undoes the latest update only.
	savepoint           = "SAVEPOINT s"
	rollbackToSavepoint = "ROLLBACK TO SAVEPOINT s"
	commit              = "COMMIT"
)

// prepareFraming prepares the framing statements on a new connection of
// the pool, under their own text as name. pgx would otherwise prepare each
// on first use and forget every statement of a batch that failed, and a
// transaction left aborted by the failure refuses to prepare again what it
// needs next (the rollback to the savepoint, the commit), or finds the
// forgotten name still taken.
func prepareFraming(ctx context.Context, conn *pgx.Conn) error {
	for _, sql := range []string{beginWrite, beginRead, lockEventLog, savepoint, rollbackToSavepoint, commit} {
		if _, err := conn.Prepare(ctx, sql, sql); err != nil {
			return err
		}
	}
	return nil
}

// frame queues a statement of the transaction's own (BEGIN, SAVEPOINT, ...):
// its failure breaks the batch.
func (p *pipe) frame(sql, what string) {
	p.b.Queue(sql)
	p.reads = append(p.reads, queued{owner: p.owner, read: func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			p.broken = translate(err, what)
			return p.broken
		}
		return nil
	}})
}

// begin queues BEGIN and the write lock, sent with the first statement of
// the batch.
func (p *pipe) begin() {
	p.frame(beginWrite, "begin write transaction")
	p.frame(lockEventLog, "take the write lock")
}

// hold queues a write whose outcome check reads from its own result: check
// gets what br.Exec or br.QueryRow would (it must read exactly one result)
// and returns the write's error, translated. The write is sent with the
// next statement that needs an answer, or by flush. A read whose answer can
// wait for the next statement's is held the same way, check reading it.
func (p *pipe) hold(sql string, args []any, check func(pgx.BatchResults) error) {
	p.used = true
	p.b.Queue(sql, args...)
	p.reads = append(p.reads, queued{read: check, owner: p.owner})
}

// mark is the point a shared update starts from, for undo.
type mark struct{ sends, queued int }

func (p *pipe) mark() mark { return mark{p.sends, len(p.reads)} }

// undo drops what was queued since m and not sent, and reports whether
// anything since m was sent (so that the transaction has to roll back to
// the savepoint). Everything unsent since a sent round trip is the failed
// update's own: a round trip sends all that was queued before it.
func (p *pipe) undo(m mark) (sent bool) {
	keep := m.queued
	if p.sends != m.sends {
		keep = 0
	}
	p.b.QueuedQueries = p.b.QueuedQueries[:keep]
	p.reads = p.reads[:keep]
	return p.sends != m.sends
}

// lost is the error that ends the whole batch, if any: a framing
// statement's, or the connection's loss.
func (p *pipe) lost() error {
	if p.broken != nil {
		return p.broken
	}
	if p.conn.IsClosed() {
		return askd.Errorf(askd.EUNAVAILABLE, "lost the connection to PostgreSQL in a write transaction")
	}
	return nil
}

// pending reports whether statements are queued.
func (p *pipe) pending() bool { return len(p.reads) > 0 }

// send sends everything queued in one round trip and reads back all but the
// last statement queued when last is true, returning the results positioned
// at it; with last false it reads everything and closes. The first failing
// item's error is returned.
func (p *pipe) send(ctx context.Context, last bool) (pgx.BatchResults, error) {
	b, reads := p.b, p.reads
	p.b, p.reads = &pgx.Batch{}, nil
	if b.Len() == 0 {
		return nil, nil
	}
	p.open = true // BEGIN is the first of a write batch's statements
	p.sends++
	br := p.conn.SendBatch(ctx, b)
	for k, q := range reads {
		if err := q.read(br); err != nil {
			br.Close()
			if q.owner < p.owner && p.broken == nil && !p.conn.IsClosed() {
				return p.resend(ctx, b, reads, k, err, last)
			}
			return nil, err
		}
	}
	if last {
		return br, nil
	}
	return nil, br.Close()
}

// resend is send's after the held write reads[k] of an earlier update
// failed with err in round trip b: that update's error is err (failed), and
// it alone is undone, by rolling back to its savepoint, the newest the
// server ran; what the server skipped after it, of later updates, is sent
// again, with the statement b ends with when last.
func (p *pipe) resend(ctx context.Context, b *pgx.Batch, reads []queued, k int, err error, last bool) (pgx.BatchResults, error) {
	undone := reads[k].owner
	if p.failed == nil {
		p.failed = map[int]error{}
	}
	p.failed[undone] = err
	// Alone: the transaction is aborted, and the server parses nothing else
	// until it is rolled back.
	p.frame(rollbackToSavepoint, "roll back to savepoint")
	if err := p.flush(ctx); err != nil {
		return nil, err
	}
	// Queued anew: pgx forgets the statements of a batch that failed.
	for j := k + 1; j < len(reads); j++ {
		if reads[j].owner > undone {
			q := b.QueuedQueries[j]
			p.b.Queue(q.SQL, q.Arguments...)
			p.reads = append(p.reads, reads[j])
		}
	}
	if last {
		q := b.QueuedQueries[len(b.QueuedQueries)-1]
		p.b.Queue(q.SQL, q.Arguments...)
	}
	return p.send(ctx, last)
}

// flush sends what is queued, if anything.
func (p *pipe) flush(ctx context.Context) error {
	if !p.pending() {
		return nil
	}
	_, err := p.send(ctx, false)
	return err
}

// finish queues sql (COMMIT or ROLLBACK) after what is queued and sends it
// all. held is the error of a held write or framing statement sent with it,
// which made the server skip sql; ended is sql's own error.
func (p *pipe) finish(ctx context.Context, sql, what string) (held, ended error) {
	p.b.Queue(sql)
	br, err := p.send(ctx, true)
	if err != nil {
		return err, nil
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil && sql == commit && tag.String() == "ROLLBACK" {
		// What a transaction already aborted answers to COMMIT: a statement
		// failed whose error an update did not return.
		p.open = false
		err = pgx.ErrTxCommitRollback
	}
	if err != nil {
		return nil, translate(err, what)
	}
	p.open = false
	return nil, nil
}

// Exec runs sql with what is queued before it.
func (p *pipe) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	p.used = true
	p.b.Queue(sql, args...)
	br, err := p.send(ctx, true)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

// Query runs sql with what is queued before it; closing the rows ends the
// round trip.
func (p *pipe) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	p.used = true
	p.b.Queue(sql, args...)
	br, err := p.send(ctx, true)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return nil, err
	}
	return &pipeRows{Rows: rows, br: br}, nil
}

// QueryRow runs sql with what is queued before it when its row is scanned.
func (p *pipe) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return &pipeRow{p: p, ctx: ctx, sql: sql, args: args}
}

// pipeRows are a pipelined query's rows: closing them reads the rest of the
// round trip.
type pipeRows struct {
	pgx.Rows
	br  pgx.BatchResults
	err error
}

func (r *pipeRows) Close() {
	if r.br == nil {
		return
	}
	r.Rows.Close()
	r.err = r.br.Close()
	r.br = nil
}

func (r *pipeRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// pipeRow is a pipelined single-row query, run by Scan.
type pipeRow struct {
	p    *pipe
	ctx  context.Context
	sql  string
	args []any
}

func (r *pipeRow) Scan(dest ...any) error {
	r.p.used = true
	r.p.b.Queue(r.sql, r.args...)
	br, err := r.p.send(r.ctx, true)
	if err != nil {
		return err
	}
	err = br.QueryRow().Scan(dest...)
	if cerr := br.Close(); err == nil || errors.Is(err, pgx.ErrNoRows) && cerr != nil {
		err = cerr
	}
	return err
}
