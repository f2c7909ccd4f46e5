package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/pgtest"
)

// The shapes a connection cut under askd takes are all EUNAVAILABLE, which
// a waiting call retries (app.Service.Poll); errors of the request are not.
func TestTranslate(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"backend terminated (admin shutdown)", &pgconn.PgError{Severity: "FATAL", Code: pgerrcode.AdminShutdown}, askd.EUNAVAILABLE},
		{"server crashed", &pgconn.PgError{Severity: "FATAL", Code: pgerrcode.CrashShutdown}, askd.EUNAVAILABLE},
		{"server starting", &pgconn.PgError{Severity: "FATAL", Code: pgerrcode.CannotConnectNow}, askd.EUNAVAILABLE},
		{"connection failure", &pgconn.PgError{Code: pgerrcode.ConnectionFailure}, askd.EUNAVAILABLE},
		{"conn closed", fmt.Errorf("begin: %w", pgconn.ErrConnClosed), askd.EUNAVAILABLE},
		{"unexpected EOF", fmt.Errorf("failed to receive message: %w", io.ErrUnexpectedEOF), askd.EUNAVAILABLE},
		{"EOF", fmt.Errorf("failed to receive message: %w", io.EOF), askd.EUNAVAILABLE},
		{"connection reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, askd.EUNAVAILABLE},
		{"closed socket", fmt.Errorf("write: %w", net.ErrClosed), askd.EUNAVAILABLE},
		{"no rows", pgx.ErrNoRows, askd.ENOTFOUND},
		{"unique violation", &pgconn.PgError{Code: pgerrcode.UniqueViolation}, askd.ECONFLICT},
		{"syntax error", &pgconn.PgError{Code: pgerrcode.SyntaxError}, askd.EINTERNAL},
		{"disk full", &pgconn.PgError{Code: pgerrcode.DiskFull}, askd.EFULL},
		{"statement_timeout", &pgconn.PgError{Code: pgerrcode.QueryCanceled}, askd.EBUSY},
		{"lock_timeout", &pgconn.PgError{Code: pgerrcode.LockNotAvailable}, askd.EBUSY},
		{"deadlock", &pgconn.PgError{Code: pgerrcode.DeadlockDetected}, askd.EBUSY},
		{"read-only transaction", &pgconn.PgError{Code: pgerrcode.ReadOnlySQLTransaction}, askd.EREADONLY},
		{"data corrupted", &pgconn.PgError{Code: pgerrcode.DataCorrupted}, askd.ECORRUPT},
		{"I/O error", &pgconn.PgError{Code: pgerrcode.IOError}, askd.EUNAVAILABLE},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := translate(c.err, "read ask 1")
			if got := askd.ErrorCode(err); got != c.want {
				t.Errorf("translate(%v) has code %q, want %q", c.err, got, c.want)
			}
			if !errors.Is(err, c.err) {
				t.Errorf("translate(%v) = %v: the driver's error is not in the chain", c.err, err)
			}
		})
	}
	if err := translate(context.Canceled, "x"); !errors.Is(err, context.Canceled) || askd.ErrorCode(err) != askd.EINTERNAL {
		t.Errorf("a cancelled context became %v (%s)", err, askd.ErrorCode(err))
	}
}

// The errors pgx gives on a connection whose backend was terminated, as they
// come: the statement after the cut, and every one after that.
func TestTranslateTerminatedConnection(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	pgtest.Shared(t).Terminate(t, conn.PgConn().PID())
	for _, what := range []string{"first statement after the cut", "next statement"} {
		_, err := conn.Exec(ctx, "SELECT 1")
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		if got := askd.ErrorCode(translate(err, what)); got != askd.EUNAVAILABLE {
			t.Errorf("%s: %v (%T) translated to %q, want %q", what, err, err, got, askd.EUNAVAILABLE)
		}
	}
}

// The predicates methods use to say which row was missing or which value was
// taken see the driver's error through any wrapping, and nothing else.
func TestViolations(t *testing.T) {
	for _, c := range []struct {
		name       string
		err        error
		foreignKey bool
		unique     bool
		constraint string
	}{
		{"foreign key", fmt.Errorf("insert: %w", &pgconn.PgError{Code: pgerrcode.ForeignKeyViolation, ConstraintName: "rules_agent_fkey"}), true, false, "rules_agent_fkey"},
		{"unique", fmt.Errorf("insert: %w", &pgconn.PgError{Code: pgerrcode.UniqueViolation, ConstraintName: "tokens_pkey"}), false, true, "tokens_pkey"},
		{"another code", &pgconn.PgError{Code: pgerrcode.SerializationFailure}, false, false, ""},
		{"no rows", pgx.ErrNoRows, false, false, ""},
		{"nil", nil, false, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := foreignKeyViolation(c.err); got != c.foreignKey {
				t.Errorf("foreignKeyViolation(%v) = %t, want %t", c.err, got, c.foreignKey)
			}
			if got := uniqueViolation(c.err); got != c.unique {
				t.Errorf("uniqueViolation(%v) = %t, want %t", c.err, got, c.unique)
			}
			if got := violatedConstraint(c.err); got != c.constraint {
				t.Errorf("violatedConstraint(%v) = %q, want %q", c.err, got, c.constraint)
			}
		})
	}
}
