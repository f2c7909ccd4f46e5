package admincmd

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
)

const auditUsage = `Usage: askd audit export [--since T] [--until T] [--out FILE] [--db PATH|URL]
       askd audit verify [FILE] [--db PATH|URL]

The audit trail (works on the database directly): every history row, an
ask's event or a change of configuration (tokens, roles, owners, teams,
rules, policies, with who made it), carries the SHA-256 of its content and
of the row before it, one chain per database.

export writes the rows at or after --since and before --until (RFC 3339
times, or dates) as JSON Lines, each with the hash it is chained to (prev)
and its own (hash), to --out or standard output.

verify checks the database's chain, or with FILE an export, and prints the
chain's head. A row that does not fit is named by its id (and, in an export,
its line) and askd exits 1; a chain it cannot read exits 2. Keep the head
printed somewhere the database's writers cannot reach: a later verify that
still has that row with that hash shows nothing before it was rewritten.`

// auditSubcommands are askd audit's subcommands, each with its synopsis.
var auditSubcommands = map[string]string{
	"export": "[--since T] [--until T] [--out FILE]",
	"verify": "[FILE]",
}

// Audit is askd audit: export the audit trail of the database --db names,
// or verify it or an export; a break exits 1, a trail it cannot read 2.
func Audit(ctx context.Context, e *cli.Env, args []string) error {
	sub, args, err := cli.Subcommand(e, "audit", auditUsage, args, "export", "verify")
	if sub == "" {
		return err
	}
	fs := cli.Flags(e, "audit "+sub, auditSubcommands[sub]+" [--db PATH|URL]")
	db := fs.String("db", "./askd.db", "the database askd serve uses: a SQLite file, or a postgres:// URL")
	var since, until, out *string
	if sub == "export" {
		since = fs.String("since", "", "the rows at or after this time (RFC 3339, or a date)")
		until = fs.String("until", "", "the rows before this time (RFC 3339, or a date)")
		out = fs.String("out", "", "write to this file (default: standard output)")
	}
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	if sub == "export" {
		if fs.NArg() > 0 {
			return cli.UsageError(fmt.Sprintf("audit export: unexpected argument %q", fs.Arg(0)))
		}
		from, err := auditTime("--since", *since)
		if err != nil {
			return err
		}
		to, err := auditTime("--until", *until)
		if err != nil {
			return err
		}
		return auditExport(ctx, e, *db, from, to, *out)
	}
	switch fs.NArg() {
	case 0:
		return auditVerifyDB(ctx, e, *db)
	case 1:
		return auditVerifyFile(e, fs.Arg(0))
	}
	return cli.UsageError(fmt.Sprintf("audit verify: unexpected argument %q", fs.Arg(1)))
}

// auditTime parses a --since or --until: RFC 3339, or a date (midnight
// UTC); "" is the zero time, no bound.
func auditTime(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, cli.UsageError(fmt.Sprintf("%s: %q is not an RFC 3339 time (2026-01-02T15:04:05Z) or a date (2026-01-02)", flag, s))
}

// readChain reads the database's whole chain.
func readChain(ctx context.Context, db string) ([]askd.AuditRow, error) {
	svc, done, err := openApp(ctx, db)
	if err != nil {
		return nil, err
	}
	defer done()
	return svc.AuditChain(ctx, localAdmin())
}

func auditExport(ctx context.Context, e *cli.Env, db string, from, until time.Time, out string) error {
	rows, err := readChain(ctx, db)
	if err != nil {
		return err
	}
	askd.ChainAudit(rows)
	w := e.Stdout
	var f *os.File
	if out != "" {
		if f, err = os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range rows {
		r := &rows[i]
		if !from.IsZero() && r.At.Before(from) || !until.IsZero() && !r.At.Before(until) {
			continue
		}
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if f != nil {
		return f.Close()
	}
	return nil
}

func auditVerifyDB(ctx context.Context, e *cli.Env, db string) error {
	rows, err := readChain(ctx, db)
	if err != nil {
		return unreadable{err}
	}
	return reportVerify(e, rows, false)
}

func auditVerifyFile(e *cli.Env, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return unreadable{err}
	}
	defer f.Close()
	rows, err := readExport(f)
	if err != nil {
		return unreadable{fmt.Errorf("%s: %w", path, err)}
	}
	return reportVerify(e, rows, true)
}

// readExport reads an export's JSON Lines.
func readExport(r io.Reader) ([]askd.AuditRow, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	var rows []askd.AuditRow
	for line := 1; sc.Scan(); line++ {
		var row askd.AuditRow
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		rows = append(rows, row)
	}
	return rows, sc.Err()
}

// reportVerify verifies rows and says so: the head when the chain holds, the
// first row that does not fit (exit 1) when not.
func reportVerify(e *cli.Env, rows []askd.AuditRow, fromExport bool) error {
	if b := askd.VerifyAudit(rows, fromExport); b != nil {
		return fmt.Errorf("audit chain broken: %w", b)
	}
	if len(rows) == 0 {
		fmt.Fprintln(e.Stdout, "the chain is empty")
		return nil
	}
	last := rows[len(rows)-1]
	fmt.Fprintf(e.Stdout, "%d rows verified; head: row %d, hash %s\n", len(rows), last.ID, last.Hash)
	return nil
}

// unreadable is an audit trail that could not be read (exit status 2).
type unreadable struct{ err error }

func (u unreadable) Error() string { return u.err.Error() }
func (u unreadable) Unwrap() error { return u.err }

// ExitCode is 2: the trail could not be read, which is not a break.
func (u unreadable) ExitCode() int { return 2 }
