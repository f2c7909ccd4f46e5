package sqlite

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/askd-dev/askd"
)

// errMoved is the refusal of every read and write once the file at the
// store's path is no longer the one it opened (deleted, or replaced by
// another): writing on would put answers into a file no one will open again,
// or a checkpoint over the replacement.
var errMoved = askd.Errorf(askd.EUNAVAILABLE, "the database file was deleted or replaced while askd was running; "+
	"askd stopped using it: restart askd to open the file now at its path (see docs/operations.md)")

// ioFault says what an I/O error on the database at path most likely was,
// from the file system as it is now.
func ioFault(path string) *askd.Error {
	name := filePath(path)
	if name == "" {
		return askd.Errorf(askd.EUNAVAILABLE, "the database file could not be read or written (I/O error)")
	}
	if noSpace(name) {
		return askd.Fault(askd.EFULL)
	}
	if cause := unwritable(name); cause != nil {
		return askd.Fault(askd.EREADONLY)
	}
	return askd.Errorf(askd.EUNAVAILABLE, "the database file could not be read or written (I/O error)")
}

// dirOf is the directory of the file name.
func dirOf(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if os.IsPathSeparator(name[i]) {
			if i == 0 {
				return "/"
			}
			return name[:i]
		}
	}
	return "."
}

// fileID is what identifies a file on this machine: its device and inode.
type fileID struct{ dev, ino uint64 }

// Probe writes one row (database_info.probed_at) through the writer, as any
// update goes, and reports the write's fault, if any; EFULL without trying
// when the file system has no space left. It is readiness's check that
// writes work (app.Service.Ready).
func (s *Store) Probe(ctx context.Context) error {
	if name := filePath(s.path); name != "" && noSpace(name) {
		return askd.Fault(askd.EFULL)
	}
	return s.Update(ctx, func(t askd.Tx) error {
		_, err := txOf(t).tx.ExecContext(ctx, `UPDATE database_info SET probed_at = ? WHERE id = 1`, time.Now().UnixMicro())
		return err
	})
}

// DatabaseID returns the id drawn for the database when it was made
// (database_info.database_id), which a backup keeps.
func (s *Store) DatabaseID(ctx context.Context) (string, error) {
	var id string
	err := s.View(ctx, func(t askd.Tx) error {
		return txOf(t).tx.QueryRowContext(ctx, `SELECT database_id FROM database_info WHERE id = 1`).Scan(&id)
	})
	if err != nil {
		return "", fmt.Errorf("read the database id: %w", err)
	}
	return id, nil
}

// QuickCheck runs PRAGMA quick_check on the whole file and returns ECORRUPT,
// with the first problems SQLite found, unless it says ok. It reads every
// page: about as long as reading the file.
func (s *Store) QuickCheck(ctx context.Context) error {
	var problems []string
	err := s.View(ctx, func(t askd.Tx) error {
		rows, err := txOf(t).tx.QueryContext(ctx, `PRAGMA quick_check(5)`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return err
			}
			if line != "ok" {
				problems = append(problems, line)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return fmt.Errorf("quick_check: %w", err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: quick_check: %s", askd.Fault(askd.ECORRUPT), strings.Join(problems, "; "))
	}
	return nil
}

// Writable returns an EREADONLY error naming what cannot be written when the
// database file at path, its -wal file or the directory they are in cannot
// be written (access(2), which refuses an immutable file or a read-only
// mount even to root), and nil otherwise or where that cannot be told.
func Writable(path string) error {
	name := filePath(path)
	if name == "" {
		return nil
	}
	if err := unwritable(name); err != nil {
		return fmt.Errorf("%w: %w", askd.Fault(askd.EREADONLY), err)
	}
	return nil
}
