// Package sqlite implements askd.Store on one SQLite file through
// modernc.org/sqlite, a pure-Go SQLite: no cgo, so the askd binary
// cross-compiles.
//
// The file is in WAL mode. Writes go through a single connection in IMMEDIATE
// transactions; reads (View) use a separate pool that runs beside the writer.
// Times are stored as microseconds since the Unix epoch and come back in UTC;
// lists and objects are stored as JSON text. Errors are translated to askd
// codes at the edge, from the driver's result codes, in translate.go, the one
// file that reads them (translate, fault).
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/groupcommit"
)

// Store is an askd.Store on one SQLite file. It is safe for concurrent use.
type Store struct {
	write *sql.DB // exactly one connection: SQLite has one writer at a time
	read  *sql.DB // View's pool; in WAL mode readers never wait for the writer

	writes *groupcommit.Queue // Update's queue to the writer goroutine
	ckpt   *checkpointer      // checkpoints beside the writer (checkpoint.go)

	mu       sync.Mutex
	watchers []func(askd.Change)

	index indexer // when asks_search_queue is indexed (index.go)

	writer    writer   // the writer goroutine's connection and statements (writer.go)
	readStmts prepared // View's statements

	path string // as given to Open, for the fault checks (fault.go)
	// file is the identity of the database file the store opened, which
	// every write and read checks against the file now at path: the zero
	// value where it cannot be known (see checkFile). wal is its -wal
	// file's, which stays while the store has it open.
	file, wal fileID
}

var _ askd.Store = (*Store)(nil)

// Connection settings, as DSN parameters of modernc.org/sqlite. The driver
// applies busy_timeout first whatever the order, then the _pragma list.
const (
	// busy_timeout(5000): a connection that finds the file locked (another
	// process such as `askd token create` beside a running server, or a WAL
	// checkpoint) retries for up to 5 s instead of failing at once with
	// SQLITE_BUSY.
	pragmaBusyTimeout = "_pragma=busy_timeout(5000)"
	// journal_mode(WAL): readers see the last commit while a write is in
	// progress and never block the writer; commits append to the WAL instead
	// of rewriting pages. The mode is stored in the file, so the writer sets it
	// once for every connection.
	pragmaJournalWAL = "_pragma=journal_mode(WAL)"
	// foreign_keys(1): SQLite leaves foreign keys off on each new connection;
	// events rely on ON DELETE CASCADE to go with their ask.
	pragmaForeignKeys = "_pragma=foreign_keys(1)"
	// synchronous(NORMAL): in WAL mode a commit is fsynced at checkpoints, not
	// one by one. The file can never be corrupted by a crash; a power cut may
	// lose the last few commits, which is the price of thousands of commits a
	// second instead of hundreds (FULL).
	pragmaSyncNormal = "_pragma=synchronous(NORMAL)"
	// _txlock=immediate: BEGIN IMMEDIATE takes the write lock when the
	// transaction starts. A deferred transaction that reads and then writes
	// must upgrade its lock, and if another connection committed in between
	// SQLite fails it with SQLITE_BUSY at once, busy_timeout or not, because
	// waiting could not help its stale snapshot. Taking the lock first makes
	// writers queue on busy_timeout instead.
	txLockImmediate = "_txlock=immediate"
	// temp_store(MEMORY): a shared batch runs each update in a savepoint, and
	// SQLite keeps the pages a savepoint changes in a sub-journal, a temporary
	// file once past 64 KiB: a dozen updates' worth. Under load that was an
	// open, many pwrites and a close per batch, 13 % of askd's CPU with 64
	// agents; in memory it is a copy. A batch is at most maxBatch updates.
	pragmaTempMemory = "_pragma=temp_store(MEMORY)"
	// _query_only=1: the read pool cannot write, even by mistake. (mode=ro
	// would need a file: URI and escaping of the path; query_only does the
	// same job on a plain path.)
	queryOnly = "_query_only=1"
)

// writeDSN is the data source name of the writer connection.
func writeDSN(path string) string {
	return path + "?" + strings.Join([]string{
		pragmaBusyTimeout, pragmaJournalWAL, pragmaForeignKeys, pragmaSyncNormal, pragmaTempMemory, txLockImmediate,
	}, "&")
}

// readDSN is the data source name of the read pool. It leaves journal_mode to
// the writer, which opens first and has made the file WAL already.
func readDSN(path string) string {
	return path + "?" + strings.Join([]string{
		pragmaBusyTimeout, pragmaForeignKeys, queryOnly,
	}, "&")
}

// readConns is the size of the read pool: enough for concurrent inbox loads
// and long-polls without one connection per request.
func readConns() int { return max(4, runtime.NumCPU()) }

// Open opens the SQLite database file at path, creating it when missing,
// applies any migrations it lacks, and returns the store, which the caller
// closes. ctx bounds the opening only. path is a file name; ":memory:" is
// refused, since each of the store's connections would get its own empty
// database. Its errors carry askd's storage codes (fault): a damaged file is
// ECORRUPT from the start.
func Open(ctx context.Context, path string) (*Store, error) {
	s, err := open(ctx, path)
	if err != nil {
		return nil, fault(err, path)
	}
	return s, nil
}

func open(ctx context.Context, path string) (*Store, error) {
	write, err := openWriter(ctx, path)
	if err != nil {
		return nil, err
	}
	if _, err := migrate(ctx, write); err != nil {
		write.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}

	read, err := sql.Open("sqlite", readDSN(path))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open %s for reading: %w", path, err)
	}
	read.SetMaxOpenConns(readConns())
	read.SetMaxIdleConns(readConns())
	if err := read.PingContext(ctx); err != nil {
		read.Close()
		write.Close()
		return nil, fmt.Errorf("open %s for reading: %w", path, err)
	}
	s := &Store{write: write, read: read, index: indexer{batch: indexBatch, delay: indexDelay}, path: path}
	// Taken once the writer holds the file open: from here on, a different
	// file at path is a replacement (or none, a deletion).
	if name := filePath(path); name != "" {
		s.file, _ = statID(name)
		s.wal, _ = statID(name + "-wal")
	}
	s.writer.db, s.readStmts.db = write, read
	// Asks settled before askd last stopped, and not indexed then.
	if err := s.indexQueued(ctx); err != nil {
		err = errors.Join(err, s.writer.drop(), s.readStmts.close(), read.Close(), write.Close())
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if s.ckpt, err = startCheckpointer(ctx, path); err != nil {
		err = errors.Join(err, s.writer.drop(), s.readStmts.close(), read.Close(), write.Close())
		return nil, err
	}
	s.writes = groupcommit.New(1, maxBatch, errClosed, s.runBatch) // one writer: SQLite has one at a time
	return s, nil
}

// Migrate applies to the database file at path the migrations it lacks, in
// order and in one transaction, and returns the names of those it applied
// (none when it was up to date). It creates the file when missing. It fails
// when the database holds a migration this build does not know, that is, when
// a newer askd has used it.
func Migrate(ctx context.Context, path string) (applied []string, err error) {
	db, err := openWriter(ctx, path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", path, cerr)
		}
	}()
	applied, err = migrate(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	return applied, nil
}

// openWriter opens the single write connection and checks that it answers.
func openWriter(ctx context.Context, path string) (*sql.DB, error) {
	if err := checkPath(path); err != nil {
		return nil, err
	}
	if err := ownerOnly(path); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", writeDSN(path))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// One writer: SQLite allows one at a time, and more connections would only
	// take turns through SQLITE_BUSY. Kept open for good, so the pragmas stay.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := pingWriter(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// pingWriter opens the writer's connection, which runs the DSN's pragmas.
// Turning a new file to WAL takes an exclusive lock that SQLite does not wait
// for under busy_timeout: when two processes open a new file at once (say
// `askd migrate` and `askd serve`), one can get SQLITE_BUSY straight away. So
// that is retried, for as long as busy_timeout would have waited.
func pingWriter(ctx context.Context, db *sql.DB) error {
	const retryFor, pause = 5 * time.Second, 10 * time.Millisecond
	deadline := time.Now().Add(retryFor)
	for {
		err := db.PingContext(ctx)
		if err == nil || !busy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}

// checkPath refuses paths the store cannot work with.
func checkPath(path string) error {
	switch {
	case path == "":
		return errors.New("open sqlite: no database path")
	case strings.Contains(path, ":memory:") || strings.Contains(path, "mode=memory"):
		return fmt.Errorf("open sqlite: %q is in memory; the store needs a file shared by its connections", path)
	case strings.Contains(path, "?"):
		// The driver reads everything after '?' as its own parameters.
		return fmt.Errorf("open sqlite: %q: the path may not contain '?'", path)
	}
	return nil
}

// Update runs fn in a write transaction and commits it when fn returns nil.
// Writers take turns (askd.Store.Update): a store's transactions queue for
// its single writer, and the writers of other stores and processes on the
// file wait for the lock BEGIN IMMEDIATE takes (busy_timeout). After
// the commit, and before Update returns, each watcher is called for every
// event fn added, in order. fn's error is returned as is, and nothing it did
// is kept; a panic in fn is re-raised in the caller. fn must not call Update
// itself: it would wait for the writer it holds.
//
// Group commit: updates that queue while the writer is busy run together in
// one SQLite transaction, each inside its own SAVEPOINT, so one fn failing
// undoes only its own writes. A commit is the expensive part of a write (the
// WAL append); sharing it is what lets concurrent agents go past one commit
// per ask.
//
// Storage faults (a full disk, a read-only or damaged file, a lock held past
// busy_timeout, the file deleted or replaced) come back with their askd code
// and a message naming the cause (see fault).
func (s *Store) Update(ctx context.Context, fn func(askd.Tx) error) error {
	return fault(s.writes.Do(ctx, fn), s.path)
}

var errClosed = errors.New("sqlite store is closed")

// maxBatch bounds how many updates share one commit.
const maxBatch = 128

// runBatch runs the updates in one transaction and answers each.
func (s *Store) runBatch(batch []*groupcommit.Update) {
	results := make([]groupcommit.Result, len(batch))
	changes := make([][]askd.Change, len(batch))
	// Statements run under a context no caller can cancel: an interrupted
	// write would make SQLite roll back the whole shared transaction.
	bctx := context.Background()
	if err := s.checkFile(); err != nil {
		groupcommit.Fail(batch, results, err)
		return
	}
	w := &s.writer
	if err := w.begin(bctx); err != nil {
		groupcommit.Fail(batch, results, fmt.Errorf("begin write transaction: %w", err))
		return
	}
	defer w.rollback(bctx) // nothing to undo after the commit
	shared := len(batch) > 1
	savepoint := func(stmt string) error {
		if !shared {
			return nil
		}
		return w.exec(bctx, stmt)
	}
	ran, settled := 0, 0
	for i, u := range batch {
		if err := u.Ctx.Err(); err != nil {
			results[i].Err = err
			continue
		}
		if err := savepoint("SAVEPOINT upd"); err != nil {
			groupcommit.Fail(batch, results, fmt.Errorf("savepoint: %w", err))
			return
		}
		t := &tx{tx: sqlConn{fixed: bctx, stmts: w}, writable: true}
		results[i] = groupcommit.Call(u, t.areas())
		if !results[i].OK() {
			if !shared {
				groupcommit.Finish(batch, results) // the deferred rollback undoes it
				return
			}
			if err := savepoint("ROLLBACK TO upd"); err != nil {
				groupcommit.Fail(batch, results, fmt.Errorf("rollback to savepoint: %w", err))
				return
			}
		} else {
			changes[i] = t.changes
			settled += t.settled
			ran++
		}
		if err := savepoint("RELEASE upd"); err != nil {
			groupcommit.Fail(batch, results, fmt.Errorf("release savepoint: %w", err))
			return
		}
	}
	if ran == 0 {
		groupcommit.Finish(batch, results)
		return
	}
	if err := w.commit(bctx); err != nil {
		groupcommit.Fail(batch, results, fmt.Errorf("commit: %w", err))
		return
	}
	s.ckpt.committed()
	for _, c := range changes {
		s.notify(c)
	}
	// The queue's indexing is armed (or found due) before the batch has its
	// answers, and done after: the next batch waits for it, none of this
	// one. A failure leaves the queue for the next time, and searches find
	// its asks meanwhile.
	indexNow := s.queued(settled)
	groupcommit.Finish(batch, results)
	if indexNow {
		_ = s.indexQueued(bctx)
	}
}

// View runs fn in a read-only transaction: it sees the database as of its
// first read, and none of the writes of transactions not yet committed.
// Its storage faults are classified as Update's.
func (s *Store) View(ctx context.Context, fn func(askd.Tx) error) error {
	if err := s.checkFile(); err != nil {
		return err
	}
	sqlTx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fault(fmt.Errorf("begin read transaction: %w", err), s.path)
	}
	// Nothing to commit: rolling back ends the read snapshot.
	defer sqlTx.Rollback()
	t := &tx{tx: sqlConn{stmts: &stmtCache{tx: sqlTx, db: &s.readStmts}}}
	return fault(fn(t.areas()), s.path)
}

// ReadAsk reads ask id in a View: a read transaction on SQLite costs no
// round trip, so there is no shorter way.
func (s *Store) ReadAsk(ctx context.Context, id int64) (a *askd.Ask, err error) {
	err = s.View(ctx, func(tx askd.Tx) error {
		a, err = tx.Asks.Ask(ctx, id)
		return err
	})
	return a, err
}

// checkFile returns errMoved when the file at the store's path is not the
// one the store opened: deleted (rm askd.db*) or replaced (mv other.db
// askd.db), or its -wal file deleted (commits would go to a WAL no one opens
// again). It is two stat(2) calls, a few microseconds. A file that cannot be
// stat'ed for another reason is left to SQLite to report.
func (s *Store) checkFile() error {
	if s.file == (fileID{}) {
		return nil
	}
	name := filePath(s.path)
	for _, f := range []struct {
		name string
		id   fileID
	}{{name, s.file}, {name + "-wal", s.wal}} {
		if f.id == (fileID{}) {
			continue
		}
		id, err := statID(f.name)
		if err == nil && id != f.id || errors.Is(err, fs.ErrNotExist) {
			return errMoved
		}
	}
	return nil
}

// Watch registers fn, called after each commit for every event it added. Only
// commits through this Store are seen: another process writing the same file
// (none does while askd serves, apart from token commands) is not.
func (s *Store) Watch(fn func(askd.Change)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchers = append(s.watchers, fn)
}

// notify calls every watcher with each change, in order.
func (s *Store) notify(changes []askd.Change) {
	if len(changes) == 0 {
		return
	}
	s.mu.Lock()
	watchers := slices.Clone(s.watchers)
	s.mu.Unlock()
	for _, c := range changes {
		for _, fn := range watchers {
			fn(c)
		}
	}
}

// Ping reports whether the read pool answers, and the file at the store's
// path is still the one it opened (errMoved). It does not wait for the
// writer's one connection: a write waiting out another process's lock holds
// it for the whole busy timeout, and readiness would then say only that its
// own deadline passed. Whether writes work is what their outcomes say, and
// the readiness probe's own write (Probe).
func (s *Store) Ping(ctx context.Context) error {
	if err := s.checkFile(); err != nil {
		return err
	}
	if err := s.read.PingContext(ctx); err != nil {
		return fault(fmt.Errorf("ping sqlite readers: %w", err), s.path)
	}
	return nil
}

// Close stops the writer and closes both pools. Updates not yet started fail.
// Settled asks not indexed yet are indexed when the file is opened next.
func (s *Store) Close() error {
	s.stopIndexing()
	s.writes.Close()
	return errors.Join(s.ckpt.close(), s.writer.drop(), s.readStmts.close(), s.read.Close(), s.write.Close())
}

// tx is one transaction, read-write from Update or read-only from View.
type tx struct {
	tx       sqlConn
	writable bool
	changes  []askd.Change // events added, for the watchers after commit
	// settled counts the settled asks the transaction wrote, which the
	// triggers may have put in asks_search_queue (see index.go).
	settled int
	// stored is, in a write transaction, each ask's values as Ask read them
	// or UpdateAsk last wrote them (remember).
	stored map[int64][]any
	// matches is, in a read transaction, the full-text index's count of
	// each search's words (indexedMatches): a page of the history counts
	// its matches, then reads them.
	matches map[string]int
}

// areas is t as the askd.Tx it serves: t does every area.
func (t *tx) areas() askd.Tx {
	return askd.Tx{
		Sessions: t, Asks: t, Events: t, Audit: t, Tokens: t, SignIns: t, Identities: t, Push: t,
		Channels: t, Deliveries: t, Rules: t, Policies: t, Teams: t, AnswerLinks: t, MCPCalls: t,
	}
}

// txOf is the store's own transaction behind t, one that areas made.
func txOf(t askd.Tx) *tx { return t.Asks.(*tx) }

// LockSession does nothing: every write transaction is IMMEDIATE on the one
// writer connection, so writes are already serialized whole.
func (t *tx) LockSession(ctx context.Context, agent, session string) error { return nil }

// mustWrite fails a write attempted in a View, with what was being done.
func (t *tx) mustWrite(what string) error {
	if !t.writable {
		return fmt.Errorf("%s: in a read-only transaction", what)
	}
	return nil
}

// collect reads every row of rows with scan, and closes rows; what names the
// read in errors. err is the query's own error, so that a call reads
// collect(t.tx.QueryContext(...)) in the manner of pgx.CollectRows.
func collect[T any](rows *sql.Rows, err error, what string, scan func(scanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// sqlConn is a transaction's way to the database. Each query text is
// prepared once per connection and kept (parsing SQL was a fifth of the
// server's CPU under load), and in a write batch every statement runs under
// the batch's context instead of the caller's (see runBatch).
type sqlConn struct {
	fixed context.Context
	stmts statements // the writer's (writer.go), or a View's (stmtCache)
}

// statements gives a transaction its prepared statements.
type statements interface {
	get(ctx context.Context, query string) (*sql.Stmt, error)
	// queryRow runs query unprepared, for the error preparing it gave.
	queryRow(ctx context.Context, query string, args ...any) *sql.Row
}

func (c sqlConn) ctx(ctx context.Context) context.Context {
	if c.fixed != nil {
		return c.fixed
	}
	return ctx
}

func (c sqlConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = c.ctx(ctx)
	st, err := c.stmts.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (c sqlConn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = c.ctx(ctx)
	st, err := c.stmts.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (c sqlConn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = c.ctx(ctx)
	if st, err := c.stmts.get(ctx, query); err == nil {
		return st.QueryRowContext(ctx, args...)
	}
	// Without a statement the driver reports any error through the Row.
	return c.stmts.queryRow(ctx, query, args...)
}

// stmtCache holds one transaction's statements, closed with it: each is the
// pool's prepared statement for its query, bound to the transaction (on a
// connection that has prepared it before, without preparing it again).
type stmtCache struct {
	tx *sql.Tx
	db *prepared
	m  map[string]*sql.Stmt // allocated on first use
}

func (c *stmtCache) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return c.tx.QueryRowContext(ctx, query, args...)
}

func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := c.m[query]; ok {
		return st, nil
	}
	var st *sql.Stmt
	if ps := c.db.get(query); ps != nil {
		st = c.tx.StmtContext(ctx, ps)
	} else {
		var err error
		if st, err = c.tx.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
	}
	if c.m == nil {
		c.m = map[string]*sql.Stmt{}
	}
	c.m[query] = st
	return st, nil
}

// prepared holds a pool's statements, prepared once for the life of the
// store. A query is prepared in the background the first time it is seen, by
// a goroutine that holds no connection while it waits for one (the writer
// has a single connection, held by the transaction asking); until then
// transactions prepare it themselves. askd's queries are a fixed set; past
// maxPrepared, queries are no longer kept.
type prepared struct {
	mu sync.Mutex
	db *sql.DB
	m  map[string]*sql.Stmt // nil while being prepared, or if it failed
	// running counts background prepares, which close waits for: one may be
	// opening a connection, and so the database's files, as the store closes.
	running sync.WaitGroup
}

const maxPrepared = 256

// get returns the pool's statement for query, or nil for now.
func (p *prepared) get(query string) *sql.Stmt {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st, ok := p.m[query]; ok || p.db == nil || len(p.m) >= maxPrepared {
		return st
	}
	if p.m == nil {
		p.m = map[string]*sql.Stmt{}
	}
	p.m[query] = nil
	p.running.Add(1)
	go p.prepare(p.db, query)
	return nil
}

func (p *prepared) prepare(db *sql.DB, query string) {
	defer p.running.Done()
	st, err := db.Prepare(query)
	if err != nil {
		return // the transactions' own prepares report it
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.db == nil { // closed meanwhile
		st.Close()
		return
	}
	p.m[query] = st
}

// close closes the statements, once every background prepare has ended
// (those ending after p.db is cleared close their own statement).
func (p *prepared) close() error {
	p.mu.Lock()
	p.db = nil
	p.mu.Unlock()
	p.running.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for _, st := range p.m {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	p.m = nil
	p.db = nil
	return errors.Join(errs...)
}
