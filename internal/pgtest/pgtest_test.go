package pgtest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/askd-dev/askd/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestURLGivesFreshDatabases(t *testing.T) {
	ctx := context.Background()
	a, b := pgtest.URL(t), pgtest.URL(t)
	if a == b {
		t.Fatalf("two calls gave the same URL %s", a)
	}
	ca, cb := connect(t, a), connect(t, b)
	if _, err := ca.Exec(ctx, "CREATE TABLE t (x int)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := cb.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 't'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("second database sees the first's table")
	}
}

func TestTerminate(t *testing.T) {
	ctx := context.Background()
	conn := connect(t, pgtest.URL(t))
	pgtest.Shared(t).Terminate(t, conn.PgConn().PID())
	err := conn.Ping(ctx)
	var pe *pgconn.PgError
	if err == nil {
		t.Fatal("connection still works after its backend was terminated")
	}
	if errors.As(err, &pe) && pe.Code != "57P01" {
		t.Errorf("got %v, want admin_shutdown (57P01) or a closed connection", err)
	}
}

func TestRestartKeepsPortAndData(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.New(t)
	url := srv.NewDatabase(t)
	conn := connect(t, url)
	if _, err := conn.Exec(ctx, "CREATE TABLE t (x int); INSERT INTO t VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	srv.Restart(t)
	t.Logf("restart took %v", time.Since(start))
	if err := conn.Ping(ctx); err == nil {
		t.Error("old connection survived a restart")
	}
	var x int
	if err := connect(t, url).QueryRow(ctx, "SELECT x FROM t").Scan(&x); err != nil || x != 42 {
		t.Fatalf("after restart: x=%d err=%v, want 42", x, err)
	}
}
