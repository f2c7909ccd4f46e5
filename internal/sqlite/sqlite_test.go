package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/storetest"
)

// openTest opens a store on a new file in a temporary directory, closed when
// the test ends.
func openTest(t *testing.T) *Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "askd.db"))
}

// oldDatabase makes a database file as an askd from before migration
// before left it: the migrations below it applied and recorded, then stmts
// run (its rows). It returns the file's path, for a migration test to open.
func oldDatabase(t *testing.T, before string, stmts ...string) string {
	t.Helper()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "askd.db")
	db, err := openWriter(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := migrationList()
	if err != nil {
		t.Fatal(err)
	}
	all := []string{`CREATE TABLE schema_migrations (version TEXT NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT`}
	for _, m := range ms {
		if m.Version >= before {
			break
		}
		all = append(all, m.SQL, "INSERT INTO schema_migrations VALUES ('"+m.Version+"', 0)")
	}
	for _, stmt := range append(all, stmts...) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%.60s: %v", stmt, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// openAt opens a store on path, closed when the test ends.
func openAt(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) askd.Store { return openTest(t) }, reopen)
}

// The suite again with the search index written after every settling
// commit, and with it never written, so that both ways of finding a settled
// ask, in the index and in the queue (index.go), meet the whole suite.
func TestStoreSearchIndexed(t *testing.T) {
	storetest.Run(t, func(t *testing.T) askd.Store { return indexing(openTest(t), 1, time.Hour) }, reopen)
}

func TestStoreSearchQueued(t *testing.T) {
	storetest.Run(t, func(t *testing.T) askd.Store { return indexing(openTest(t), 1<<30, time.Hour) }, reopen)
}

// reopen opens another store on s's file, as another process would (askd
// token create beside a running server), closed when the test ends.
func reopen(t *testing.T, s askd.Store) askd.Store { return openAt(t, s.(*Store).path) }

// indexing makes s index its queue of settled asks once batch of them were
// written, or delay after the first.
func indexing(s *Store, batch int, delay time.Duration) *Store {
	s.index.mu.Lock()
	defer s.index.mu.Unlock()
	s.index.batch, s.index.delay = batch, delay
	return s
}

func TestMigrate(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "askd.db")
	all := []string{"001_asks_events_tokens", "002_channels_deliveries", "003_mcp_calls", "004_sessions", "005_browser_sessions", "006_search", "007_rules", "008_answer_links", "009_database_info", "010_push", "011_bridges", "012_forms", "013_teams", "014_audit", "015_policies", "016_gate_keys", "017_audit_purged", "018_identities", "019_agent_tools", "020_mcp_calls_answered", "021_notify_secret", "022_one_call", "023_notify_email", "024_history_indexes"}

	applied, err := Migrate(ctx, path)
	if err != nil {
		t.Fatalf("Migrate on a new file: %v", err)
	}
	if !slices.Equal(applied, all) {
		t.Errorf("Migrate on a new file applied %v, want %v", applied, all)
	}

	applied, err = Migrate(ctx, path)
	if err != nil {
		t.Fatalf("Migrate again: %v", err)
	}
	if len(applied) != 0 {
		t.Errorf("Migrate again applied %v, want nothing", applied)
	}

	// Opening twice, one store after the other, leaves one row per migration.
	for range 2 {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("Open a migrated file: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	s := openAt(t, path)
	var versions []string
	rows, err := s.read.QueryContext(ctx, "SELECT version FROM schema_migrations ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		versions = append(versions, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(versions, all) {
		t.Errorf("schema_migrations = %v, want %v", versions, all)
	}
}

func TestMigrateRefusesNewerDatabase(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "askd.db")
	s := openAt(t, path)
	writeSQL(t, s, "INSERT INTO schema_migrations (version, applied_at) VALUES ('999_from_the_future', 0)")
	_, err := Migrate(ctx, path)
	if err == nil || !strings.Contains(err.Error(), "999_from_the_future") {
		t.Errorf("Migrate on a database of a newer askd = %v, want an error naming its migration", err)
	}
}

func TestMigrateConcurrently(t *testing.T) {
	// Two processes starting on a new file at once: each migration is applied
	// exactly once, and neither fails.
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "askd.db")
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		applied []string
	)
	for range 4 {
		wg.Go(func() {
			got, err := Migrate(ctx, path)
			if err != nil {
				t.Errorf("Migrate: %v", err)
			}
			mu.Lock()
			applied = append(applied, got...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if want := []string{"001_asks_events_tokens", "002_channels_deliveries", "003_mcp_calls", "004_sessions", "005_browser_sessions", "006_search", "007_rules", "008_answer_links", "009_database_info", "010_push", "011_bridges", "012_forms", "013_teams", "014_audit", "015_policies", "016_gate_keys", "017_audit_purged", "018_identities", "019_agent_tools", "020_mcp_calls_answered", "021_notify_secret", "022_one_call", "023_notify_email", "024_history_indexes"}; !slices.Equal(applied, want) {
		t.Errorf("migrations applied by 4 concurrent Migrate calls: %v, want %v", applied, want)
	}
}

func TestPragmas(t *testing.T) {
	s := openTest(t)
	// A pool's connection, or the writer's (nil), which the writer holds.
	tests := []struct {
		name   string
		db     *sql.DB
		pragma string
		want   string
	}{
		{"writer journal_mode", nil, "journal_mode", "wal"},
		{"writer busy_timeout", nil, "busy_timeout", "5000"},
		{"writer foreign_keys", nil, "foreign_keys", "1"},
		{"writer synchronous", nil, "synchronous", "1"}, // NORMAL
		{"writer query_only", nil, "query_only", "0"},
		{"writer temp_store", nil, "temp_store", "2"},                    // MEMORY: savepoints' sub-journals
		{"writer wal_autocheckpoint", nil, "wal_autocheckpoint", "1000"}, // the fallback (checkpoint.go)
		{"checkpointer busy_timeout", s.ckpt.db, "busy_timeout", "5000"},
		{"reader journal_mode", s.read, "journal_mode", "wal"},
		{"reader busy_timeout", s.read, "busy_timeout", "5000"},
		{"reader foreign_keys", s.read, "foreign_keys", "1"},
		{"reader query_only", s.read, "query_only", "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			if tt.db == nil {
				got = writerValue(t, s, "PRAGMA "+tt.pragma)
			} else if err := tt.db.QueryRowContext(t.Context(), "PRAGMA "+tt.pragma).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("PRAGMA %s = %s, want %s", tt.pragma, got, tt.want)
			}
		})
	}

	t.Run("pool sizes", func(t *testing.T) {
		if got := s.write.Stats().MaxOpenConnections; got != 1 {
			t.Errorf("writer allows %d connections, want 1", got)
		}
		if got := s.read.Stats().MaxOpenConnections; got < 2 {
			t.Errorf("read pool allows %d connections, want several", got)
		}
	})
}

// The checkpointer checkpoints beside the writer: after checkpointEvery
// small commits (far fewer pages than the writer's own automatic checkpoint
// waits for) the WAL's pages are in the database file, which grows, with the
// store still open.
func TestCheckpointsBesideTheWriter(t *testing.T) {
	s := openTest(t)
	size := func() int64 {
		fi, err := os.Stat(s.path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	for i := range checkpointEvery {
		err := s.Update(t.Context(), func(tx askd.Tx) error {
			return tx.Asks.CreateAsk(t.Context(), &askd.Ask{Kind: askd.KindReady, Session: fmt.Sprintf("s%d", i), Agent: "a",
				Title: strings.Repeat("words to fill pages ", 100), Status: askd.StatusPending, CreatedAt: time.Now(), UpdatedAt: time.Now()})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-s.ckpt.ran:
	case <-time.After(time.Minute):
		t.Fatal("no checkpoint within a minute of checkpointEvery commits")
	}
	if after := size(); after <= before {
		t.Fatalf("the database file is %d bytes after the checkpoint, %d before: the pages stayed in the WAL", after, before)
	}
}

func TestOpenRefusesUnusablePaths(t *testing.T) {
	tests := []struct {
		name string
		path string
	}{
		{"empty", ""},
		{"in memory", ":memory:"},
		{"in-memory URI", "file::memory:"},
		{"in-memory URI with mode", "file:askd?mode=memory&cache=shared"},
		{"question mark", filepath.Join(t.TempDir(), "what?.db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if s, err := Open(t.Context(), tt.path); err == nil {
				s.Close()
				t.Errorf("Open(%q) succeeded, want an error", tt.path)
			}
		})
	}
}

// writeSQL runs query on the writer's connection, in a transaction of its
// own: the writer holds the write pool's one connection.
func writeSQL(t *testing.T, s *Store, query string, args ...any) {
	t.Helper()
	err := s.Update(t.Context(), func(tx askd.Tx) error {
		_, err := txOf(tx).tx.ExecContext(t.Context(), query, args...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// writerValue reads the one value query returns on the writer's connection.
func writerValue(t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	var v string
	err := s.Update(t.Context(), func(tx askd.Tx) error {
		return txOf(tx).tx.QueryRowContext(t.Context(), query, args...).Scan(&v)
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestWatchersRunBeforeUpdateReturns(t *testing.T) {
	// The app relies on it: when Update returns, every watcher has heard of
	// its events, on the committing goroutine.
	ctx := t.Context()
	s := openTest(t)
	var heard []askd.Change
	s.Watch(func(c askd.Change) { heard = append(heard, c) }) // no lock: same goroutine
	a := &askd.Ask{Kind: askd.KindReady, Session: "s1", Agent: "a", Status: askd.StatusPending, Revision: 1, Title: "t"}
	var e askd.Event
	err := s.Update(ctx, func(tx askd.Tx) error {
		if err := tx.Asks.CreateAsk(ctx, a); err != nil {
			return err
		}
		e = askd.Event{AskID: a.ID, Session: a.Session, Action: askd.ActionCreated}
		if err := tx.Events.AddEvent(ctx, &e); err != nil {
			return err
		}
		if len(heard) != 0 {
			t.Errorf("watcher heard %+v before the commit", heard)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []askd.Change{{EventID: e.ID, AskID: a.ID}}; !slices.Equal(heard, want) {
		t.Errorf("when Update returned the watcher had heard %+v, want %+v", heard, want)
	}
}

func TestTwoStoresOnOneFile(t *testing.T) {
	// Two processes on one file (a server and `askd token create`, say): each
	// has its own writer, and IMMEDIATE transactions with busy_timeout make
	// them queue instead of failing with SQLITE_BUSY.
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "askd.db")
	stores := []*Store{openAt(t, path), openAt(t, path)}
	const perStore, perGoroutine = 4, 25

	var wg sync.WaitGroup
	for i, s := range stores {
		for g := range perStore {
			wg.Go(func() {
				for n := range perGoroutine {
					err := s.Update(ctx, func(tx askd.Tx) error {
						tokens, err := tx.Tokens.Tokens(ctx)
						if err != nil {
							return err
						}
						name := fmt.Sprintf("store%d-g%d-n%d", i, g, n)
						return tx.Tokens.CreateToken(ctx, &askd.Token{
							Name: name, Role: askd.RoleAgent, Hash: fmt.Sprintf("%s-%d", name, len(tokens)), CreatedAt: time.Now(),
						})
					})
					if err != nil {
						t.Errorf("store %d, goroutine %d, transaction %d: %v", i, g, n, err)
						return
					}
				}
			})
		}
	}
	wg.Wait()

	err := stores[0].View(ctx, func(tx askd.Tx) error {
		tokens, err := tx.Tokens.Tokens(ctx)
		if err != nil {
			return err
		}
		if want := len(stores) * perStore * perGoroutine; len(tokens) != want {
			t.Errorf("%d tokens, want %d", len(tokens), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestTimes(t *testing.T) {
	// Times are kept to the microsecond, whatever their zone, across the range
	// askd can meet, and come back in UTC.
	ctx := t.Context()
	s := openTest(t)
	tests := []struct {
		name string
		at   time.Time
	}{
		{"zero", time.Time{}},
		{"before 1970", time.Date(1969, time.July, 20, 20, 17, 40, 123456789, time.UTC)},
		{"nanoseconds truncated", time.Date(2026, time.January, 2, 3, 4, 5, 999999999, time.FixedZone("UTC-7", -7*3600))},
		{"far future", time.Date(9999, time.December, 31, 23, 59, 59, 999999000, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &askd.Ask{Kind: askd.KindReady, Session: "s", Agent: "a", Status: askd.StatusPending, Revision: 1,
				Title: "t", CreatedAt: tt.at, UpdatedAt: tt.at, Deadline: &tt.at}
			var got *askd.Ask
			err := s.Update(ctx, func(tx askd.Tx) error {
				if err := tx.Asks.CreateAsk(ctx, a); err != nil {
					return err
				}
				var err error
				got, err = tx.Asks.Ask(ctx, a.ID)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			want := tt.at.UTC().Truncate(time.Microsecond)
			for name, g := range map[string]time.Time{"created_at": got.CreatedAt, "deadline": *got.Deadline} {
				if !g.Equal(want) || g.Location() != time.UTC {
					t.Errorf("%s = %s, want %s", name, g, want)
				}
			}
			if tt.at.IsZero() && !got.CreatedAt.IsZero() {
				t.Errorf("zero time came back as %s, not zero", got.CreatedAt)
			}
		})
	}
}

func TestUpdateAfterCancelledContext(t *testing.T) {
	// A transaction abandoned by its context must not keep the one writer.
	s := openTest(t)
	ctx, cancel := context.WithCancel(t.Context())
	err := s.Update(ctx, func(tx askd.Tx) error {
		cancel()
		return tx.Asks.CreateAsk(ctx, &askd.Ask{Kind: askd.KindReady, Session: "s", Agent: "a", Status: askd.StatusPending, Revision: 1, Title: "t"})
	})
	if err == nil {
		t.Fatal("Update with a cancelled context succeeded")
	}
	done, stop := context.WithTimeout(t.Context(), 10*time.Second)
	defer stop()
	if err := s.Update(done, func(tx askd.Tx) error { return nil }); err != nil {
		t.Fatalf("Update after a cancelled one: %v", err)
	}
}

// TestMigrateSessionsToTokens: a database from before sessions belonged to
// tokens (migrations 001–003 applied), with the asks and channels that
// storetest.CheckSessionsMigrated describes, migrates as it says.
func TestMigrateSessionsToTokens(t *testing.T) {
	path := oldDatabase(t, "004",
		`INSERT INTO asks (kind, session, agent, status, created_at, updated_at) VALUES
			('ready', 'shared', 'a', 'pending', 10, 10), ('ready', 'shared', 'b', 'pending', 20, 20),
			('question', 'mine', 'a', 'answered', 30, 30), ('question', 'mine', 'a', 'pending', 40, 40)`,
		`INSERT INTO channels VALUES ('shared', '{"type":"webhook","url":"https://b.example/steal","secret":"k"}', 5),
			('mine', '{"type":"webhook","url":"https://a.example/tell","secret":"k"}', 6),
			('unused', '{"type":"hook"}', 7)`)

	s := openAt(t, path)
	storetest.CheckSessionsMigrated(t, s)
}

// Closing a store twice (a test server restarted, then cleaned up) is not
// an error the second time, and panics in nothing it runs.
func TestCloseTwice(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "askd.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
