package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/askd-dev/askd"
)

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
	// SafeToRetry: the statement never reached the server (a closed
	// connection). ErrConnClosed is pgx's "conn closed", which it documents
	// as possibly wrapped in errors other than the SafeToRetry one.
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.SafeToRetry(err) ||
		errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}

// translate maps a driver error to an askd code, keeping err in the chain, and
// says what was being done. Context cancellation stays as it is.
func translate(err error, what string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, classify(err))
}

// fault is classify for Update's and View's results: fn's own errors, and
// those translate has seen, keep their code.
func fault(err error) error {
	if err == nil {
		return nil
	}
	return classify(err)
}

// classify is the store's one map from driver errors to askd codes:
//
//	no rows                                       ENOTFOUND
//	a lost or refused connection (unavailable)    EUNAVAILABLE
//	unique violation                              ECONFLICT
//	U+0000 in text                                EINVALID
//	disk_full                                     EFULL      the database disk is full
//	read_only_sql_transaction (a standby, or      EREADONLY  the database file is read-only
//	  default_transaction_read_only)
//	statement_timeout, lock_timeout (query_       EBUSY      the database is busy
//	  canceled, lock_not_available), deadlock,
//	  serialization failure
//	data_corrupted, index_corrupted               ECORRUPT   the database file is damaged (corrupt)
//	io_error, out of memory, disk or memory       EUNAVAILABLE
//	  resources otherwise short
//
// Errors already carrying a code, context cancellation and anything else are
// returned as they are.
func classify(err error) error {
	var ae *askd.Error
	var pe *pgconn.PgError
	var e *askd.Error
	switch {
	case errors.As(err, &ae), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, pgx.ErrNoRows):
		e = askd.Errorf(askd.ENOTFOUND, "not found")
	case unavailable(err):
		e = askd.Errorf(askd.EUNAVAILABLE, "the database is unavailable; try again shortly")
	case !errors.As(err, &pe):
		return err
	default:
		switch pe.Code {
		case pgerrcode.UniqueViolation:
			e = askd.Errorf(askd.ECONFLICT, "already exists")
		case pgerrcode.CharacterNotInRepertoire:
			// PostgreSQL text cannot hold U+0000, which SQLite takes.
			e = askd.Errorf(askd.EINVALID, "text may not contain the NUL character (U+0000)")
		case pgerrcode.DiskFull:
			e = askd.Fault(askd.EFULL)
		case pgerrcode.ReadOnlySQLTransaction:
			e = askd.Fault(askd.EREADONLY)
		case pgerrcode.QueryCanceled, pgerrcode.LockNotAvailable, pgerrcode.DeadlockDetected, pgerrcode.SerializationFailure:
			e = askd.Fault(askd.EBUSY)
		case pgerrcode.DataCorrupted, pgerrcode.IndexCorrupted:
			e = askd.Fault(askd.ECORRUPT)
		case pgerrcode.IOError, pgerrcode.InsufficientResources, pgerrcode.OutOfMemory:
			e = askd.Errorf(askd.EUNAVAILABLE, "the database server is short of resources (%s); try again shortly", pe.Code)
		default:
			return err
		}
	}
	return fmt.Errorf("%w: %w", e, err)
}

// The predicates below are for methods that say more than classify can (which
// row was missing, which value was taken): they read the driver's errors here
// so that no method does.

// foreignKeyViolation reports whether err is PostgreSQL's refusal of a row
// that names one that is not there (foreign_key_violation).
func foreignKeyViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == pgerrcode.ForeignKeyViolation
}

// uniqueViolation reports whether err is PostgreSQL's refusal of a value
// stored already (unique_violation); violatedConstraint says which.
func uniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == pgerrcode.UniqueViolation
}

// violatedConstraint is the name of the constraint err violated
// ("tokens_pkey"), for a table with more than one; "" when err names none.
func violatedConstraint(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.ConstraintName
	}
	return ""
}

// timedOut reports whether err is a wait that ran out (its context's
// deadline, or pgconn's own timeout), which leaves the connection usable.
func timedOut(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err)
}
