// Package pgtest gives tests PostgreSQL databases of their own.
//
// The server is the one named by ASKD_TEST_POSTGRES_URL (an admin URL that may
// create databases) when that is set; otherwise a throwaway cluster that this
// package starts once per test process from the server binaries found on PATH
// or in the directory `pg_config --bindir` prints. Without either, tests that
// ask for a database are skipped with a loud message, or fail when CI=true.
//
// A package using it calls Main from TestMain, so the throwaway cluster is
// stopped and its files removed once the tests are done:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// Should a test process end without that (a panic, a kill), the server
// receives SIGQUIT from the kernel when the process dies (Linux), and a later
// run removes the leftover directory.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the environment variable holding an admin URL to an existing
// server. When set, the shared server is that one and no cluster is started.
const EnvURL = "ASKD_TEST_POSTGRES_URL"

// SkipMessage is what a test is skipped with when no PostgreSQL can be had.
const SkipMessage = "PostgreSQL not available: install postgresql or set " + EnvURL + "; these tests are SKIPPED"

// Server is a PostgreSQL server tests may create databases on: the external
// one of ASKD_TEST_POSTGRES_URL, or a throwaway cluster this package runs.
type Server struct {
	admin string   // URL of the server's "postgres" database as a superuser
	c     *cluster // nil for an external server
}

// errNoServer means no PostgreSQL server binaries were found.
var errNoServer = errors.New("no initdb and postgres on PATH or in `pg_config --bindir`")

var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Main runs m's tests, stops every cluster this package started, and exits
// with the tests' status. Call it from TestMain.
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run is Main without the exit, for a TestMain with more to clean up: it
// runs m's tests, stops every cluster this package started, and returns the
// tests' status.
func Run(m *testing.M) int {
	code := m.Run()
	stopAll()
	return code
}

// URL returns the URL of a new, empty database on the shared server, dropped
// when t ends. It skips t (fails it when CI=true) if no PostgreSQL is available.
func URL(t testing.TB) string {
	t.Helper()
	return Shared(t).NewDatabase(t)
}

// Shared returns the server all tests of the process share, starting the
// throwaway cluster on first use. It skips t (fails it when CI=true) if no
// PostgreSQL is available.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.once.Do(func() {
		if u := os.Getenv(EnvURL); u != "" {
			shared.srv = &Server{admin: u}
			return
		}
		c, err := startCluster()
		if err != nil {
			shared.err = err
			return
		}
		shared.srv = &Server{admin: c.adminURL(), c: c}
	})
	if shared.err != nil {
		unavailable(t, shared.err)
	}
	return shared.srv
}

// New starts a throwaway cluster of t's own, stopped and removed when t ends,
// for tests that stop, restart or otherwise disturb the server. It needs the
// server binaries even when ASKD_TEST_POSTGRES_URL is set.
func New(t testing.TB) *Server {
	t.Helper()
	c, err := startCluster()
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(c.remove)
	return &Server{admin: c.adminURL(), c: c}
}

// unavailable ends t: skipped when PostgreSQL is simply not installed, failed
// when it is there but would not start, and failed either way under CI=true,
// where every test must run.
func unavailable(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, errNoServer) && !inCI() {
		skipNotice.Do(func() { fmt.Fprintln(os.Stderr, "pgtest: "+SkipMessage) })
		t.Skip(SkipMessage)
	}
	if errors.Is(err, errNoServer) {
		t.Fatalf("%s (CI=true, so this is a failure): %v", strings.TrimSuffix(SkipMessage, "; these tests are SKIPPED"), err)
	}
	t.Fatalf("pgtest: %v", err)
}

var skipNotice sync.Once

func inCI() bool {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return ci
}

// AdminURL is the URL of the server's "postgres" database as a superuser: for
// creating databases and looking at or ending other sessions.
func (s *Server) AdminURL() string { return s.admin }

// Throwaway reports whether this package runs the server (and so can stop and
// restart it).
func (s *Server) Throwaway() bool { return s.c != nil }

// NewDatabase creates an empty database and returns its URL. The database is
// dropped when t ends, along with any sessions still connected to it.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := "askd_test_" + randomHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// WITH (FORCE) ends the sessions a test left open (PostgreSQL 13+).
		if err := s.exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil && !s.stopped() {
			t.Logf("pgtest: drop database %s: %v", name, err)
		}
	})
	u, err := withDatabase(s.admin, name)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return u
}

// Terminate ends the server session with backend process id pid, as
// pg_terminate_backend does, and waits up to 5 s for it to be gone.
func (s *Server) Terminate(t testing.TB, pid uint32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.admin)
	if err != nil {
		t.Fatalf("pgtest: terminate backend %d: %v", pid, err)
	}
	defer conn.Close(ctx)
	var ok bool
	if err := conn.QueryRow(ctx, "SELECT pg_terminate_backend($1, 5000)", int32(pid)).Scan(&ok); err != nil {
		t.Fatalf("pgtest: terminate backend %d: %v", pid, err)
	}
	if !ok {
		t.Fatalf("pgtest: backend %d was not terminated", pid)
	}
}

// Stop shuts the server down (fast shutdown: sessions are ended). Start brings
// it back on the same port with the same data. Both skip t for an external
// server.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	s.throwaway(t).stop()
}

// Start starts a stopped server again on its port, with its data.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	if err := s.throwaway(t).start(); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
}

// Restart stops the server and starts it again on the same port with the same
// data; every session is cut.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop(t)
	s.Start(t)
}

func (s *Server) throwaway(t testing.TB) *cluster {
	t.Helper()
	if s.c == nil {
		t.Skipf("pgtest: stopping the server needs the throwaway cluster, not the external %s", EnvURL)
	}
	return s.c
}

func (s *Server) stopped() bool { return s.c != nil && !s.c.running() }

func (s *Server) exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, s.admin)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// withDatabase returns connection string u naming database db instead.
func withDatabase(u, db string) (string, error) {
	if strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://") {
		p, err := url.Parse(u)
		if err != nil {
			return "", fmt.Errorf("%s: %w", EnvURL, err)
		}
		p.Path = "/" + db
		p.RawPath = ""
		return p.String(), nil
	}
	// keyword=value form: a later keyword overrides an earlier one.
	return u + " dbname=" + db, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
