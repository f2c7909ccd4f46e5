package sqlite

import (
	"database/sql"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/askd-dev/askd"
)

// resultCode returns the SQLite extended result code of err, 0 when err does
// not come from SQLite. Its low byte is the primary code.
func resultCode(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return 0
}

// says gives the caller-facing messages of translate's codes, by what the
// driver reported; an empty one is a generic message.
type says struct {
	notFound string // no rows
	missing  string // a FOREIGN KEY naming a row that is not there
	taken    string // a PRIMARY KEY value stored already
	dupe     string // a UNIQUE value stored already
}

// translate is the store's one map from driver errors to askd codes (as
// river's interpretError): no method looks at the driver's errors itself.
//
//	no rows (sql.ErrNoRows)                       ENOTFOUND, m.notFound
//	a FOREIGN KEY naming a row that is not there  ENOTFOUND, m.missing
//	a PRIMARY KEY value stored already            ECONFLICT, m.taken
//	a UNIQUE value stored already                 ECONFLICT, m.dupe
//
// The code's error comes first in the chain, then err, for logs; what says
// what was being done. Other errors are wrapped as they are, nil stays nil.
func translate(err error, what string, m says) error {
	var code, msg string
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrNoRows):
		code, msg = askd.ENOTFOUND, or(m.notFound, "not found")
	default:
		switch resultCode(err) {
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			code, msg = askd.ENOTFOUND, or(m.missing, "refers to a row that does not exist")
		case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			code, msg = askd.ECONFLICT, or(m.taken, "already exists")
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE:
			code, msg = askd.ECONFLICT, or(m.dupe, "already exists")
		default:
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return fmt.Errorf("%s: %w: %w", what, askd.Errorf(code, "%s", msg), err)
}

// or is s, or def when s is "".
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// fault classifies a storage error into an askd fault code, by SQLite's
// result code (no string matching), and keeps err in the chain:
//
//	SQLITE_FULL                     EFULL      the database disk is full
//	SQLITE_READONLY, SQLITE_PERM    EREADONLY  the database file is read-only
//	SQLITE_READONLY_DBMOVED         EUNAVAILABLE  deleted or replaced (errMoved)
//	SQLITE_CORRUPT, SQLITE_NOTADB   ECORRUPT   the database file is damaged (corrupt)
//	SQLITE_BUSY, SQLITE_LOCKED      EBUSY      the database is busy (after busy_timeout)
//	SQLITE_IOERR, SQLITE_CANTOPEN   EFULL when the file system has no space left,
//	                                EREADONLY when the files cannot be written
//	                                (an immutable file, a read-only mount),
//	                                EUNAVAILABLE otherwise
//
// An I/O error is looked at on disk because SQLite reports a failed write as
// SQLITE_IOERR_WRITE whatever its errno (EFBIG, EPERM, EROFS, EIO), except
// ENOSPC. Errors that already carry an askd code, and all others, are
// returned as they are; nil stays nil. path is the database file.
func fault(err error, path string) error {
	if err == nil {
		return nil
	}
	var ae *askd.Error
	if errors.As(err, &ae) {
		return err
	}
	rc := resultCode(err)
	var e *askd.Error
	switch {
	case rc == 0:
		return err
	case rc == sqlite3.SQLITE_READONLY_DBMOVED:
		e = errMoved
	}
	if e == nil {
		switch rc & 0xff {
		case sqlite3.SQLITE_FULL:
			e = askd.Fault(askd.EFULL)
		case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM:
			e = askd.Fault(askd.EREADONLY)
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			e = askd.Fault(askd.ECORRUPT)
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			e = askd.Fault(askd.EBUSY)
		case sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
			e = ioFault(path)
		default:
			return err
		}
	}
	return fmt.Errorf("%w: %w", e, err)
}

// busy reports whether err is SQLITE_BUSY, in any of its extended codes:
// another connection holds the lock SQLite needed.
func busy(err error) bool {
	return resultCode(err)&0xff == sqlite3.SQLITE_BUSY
}
