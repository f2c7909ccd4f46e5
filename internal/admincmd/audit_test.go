package admincmd

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/sqlite"
	"github.com/askd-dev/askd/internal/testserver"
)

// The audit trail from the command line, with the real binary: config
// changes made by the CLI are rows with their actor; verify passes on the
// database and on an export, and names the row (and line) of an edit, a
// deletion and a swap, each in a copy, exiting 1; an unreadable export
// exits 2.

// auditFixture makes a database with asks' events and config rows, and
// returns its path.
func auditFixture(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "askd.db")
	s, err := sqlite.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for i := range 3 {
		err := s.Update(ctx, func(tx askd.Tx) error {
			now := time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC)
			a := &askd.Ask{Kind: askd.KindQuestion, Session: "s", Agent: "bot", Status: askd.StatusPending, Revision: 1, Title: "Proceed?", CreatedAt: now, UpdatedAt: now}
			if err := tx.Asks.CreateAsk(ctx, a); err != nil {
				return err
			}
			return tx.Events.AddEvent(ctx, &askd.Event{AskID: a.ID, Session: "s", Action: askd.ActionCreated, Actor: "bot", At: now})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	for _, args := range [][]string{
		{"token", "create", "--human", "alice", "--role", "admin"},
		{"token", "create", "--agent", "ci"},
		{"team", "create", "ops"},
		{"team", "add", "ops", "alice"},
		{"token", "set-owner", "ci", "--owner", "team:ops"},
		{"token", "revoke", "ci"},
	} {
		if _, errOut, code := testserver.Run(t, append(args, "--db", db)...); code != 0 {
			t.Fatalf("askd %v: exit %d: %s", args, code, errOut)
		}
	}
	return db
}

// copyFile copies the database at src (closed) to a new file.
func copyFile(t *testing.T, src string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

var brokenAt = regexp.MustCompile(`history row (\d+)`)

// mustBreakAt runs verify with args and wants exit 1 naming row id (and,
// for an export, the line).
func mustBreakAt(t *testing.T, id, line string, args ...string) {
	t.Helper()
	_, errOut, code := testserver.Run(t, append([]string{"audit", "verify"}, args...)...)
	m := brokenAt.FindStringSubmatch(errOut)
	if code != 1 || m == nil || m[1] != id || line != "" && !strings.Contains(errOut, "line "+line+":") {
		t.Errorf("verify %v: exit %d, %q; want exit 1 naming row %s (line %q)", args, code, errOut, id, line)
	}
}

func TestAuditCLI(t *testing.T) {
	db := auditFixture(t)
	out, errOut, code := testserver.Run(t, "audit", "verify", "--db", db)
	if code != 0 || !strings.Contains(out, "9 rows verified") {
		t.Fatalf("verify: exit %d, %q %q; want 9 rows verified", code, out, errOut)
	}
	export := filepath.Join(t.TempDir(), "audit.jsonl")
	if _, errOut, code := testserver.Run(t, "audit", "export", "--out", export, "--db", db); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	if out, errOut, code := testserver.Run(t, "audit", "verify", export); code != 0 || !strings.Contains(out, "9 rows verified") {
		t.Fatalf("verify export: exit %d, %q %q", code, out, errOut)
	}
	b, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	if !strings.Contains(lines[3], `"action":"config.token.created"`) || !regexp.MustCompile(`"actor":"cli:[^"]+"`).MatchString(lines[3]) {
		t.Errorf("line 4 = %s, want alice's token made by cli:<user>", lines[3])
	}
	if !strings.Contains(lines[8], `"action":"config.token.revoked"`) {
		t.Errorf("line 9 = %s, want the revocation", lines[8])
	}

	t.Run("a partial export", func(t *testing.T) {
		part := filepath.Join(t.TempDir(), "part.jsonl")
		if _, errOut, code := testserver.Run(t, "audit", "export", "--since", "2026-01-01T00:01:00Z", "--until", "2026-01-01T00:02:00Z", "--out", part, "--db", db); code != 0 {
			t.Fatalf("export: exit %d: %s", code, errOut)
		}
		if out, errOut, code := testserver.Run(t, "audit", "verify", part); code != 0 || !strings.Contains(out, "1 rows verified; head: row 2") {
			t.Errorf("verify part: exit %d, %q %q; want row 2 alone", code, out, errOut)
		}
	})

	tamper := []struct {
		name, sql, id string
	}{
		{"an edited row", `UPDATE events SET actor = 'mallory' WHERE id = 5`, "5"},
		{"a deleted row", `DELETE FROM events WHERE id = 4`, "5"},
		// Ids swap through a free one, as the key is checked per row.
		{"two rows swapped", `UPDATE events SET id = 1000 WHERE id = 6; UPDATE events SET id = 6 WHERE id = 7; UPDATE events SET id = 7 WHERE id = 1000`, "6"},
		{"a row without a hash", `UPDATE events SET hash = NULL WHERE id = 8`, "8"},
	}
	for _, tt := range tamper {
		t.Run("database: "+tt.name, func(t *testing.T) {
			c := copyFile(t, db)
			conn, err := sql.Open("sqlite", c)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conn.ExecContext(context.Background(), tt.sql); err != nil {
				t.Fatal(err)
			}
			conn.Close()
			mustBreakAt(t, tt.id, "", "--db", c)
		})
	}

	exportTamper := []struct {
		name   string
		change func(ls []string) []string
		id     string
		line   string
	}{
		{"an edited line", func(ls []string) []string {
			ls[4] = strings.Replace(ls[4], `"actor":"cli:`, `"actor":"cli:x`, 1)
			return ls
		}, "5", "5"},
		{"a deleted line", func(ls []string) []string { return append(ls[:3:3], ls[4:]...) }, "5", "4"},
		{"two lines swapped", func(ls []string) []string {
			ls[5], ls[6] = ls[6], ls[5]
			return ls
		}, "7", "6"},
	}
	for _, tt := range exportTamper {
		t.Run("export: "+tt.name, func(t *testing.T) {
			ls := tt.change(append([]string(nil), lines...))
			f := filepath.Join(t.TempDir(), "tampered.jsonl")
			if err := os.WriteFile(f, []byte(strings.Join(ls, "")), 0o600); err != nil {
				t.Fatal(err)
			}
			mustBreakAt(t, tt.id, tt.line, f)
		})
	}

	// The forger of issue 38: a change of configuration is deleted from the
	// middle of the chain, and a purge's record (in the form purges left
	// when they removed rows) is appended after the head to bridge the gap,
	// its hash computed over the documented content, in either version. No
	// existing row's hash is recomputed.
	for _, v1 := range []bool{false, true} {
		hashOf := askd.AuditHash
		if v1 {
			hashOf = askd.AuditHashV1
		}
		t.Run(fmt.Sprintf("database: a deleted config row bridged by a forged purge (first version %t)", v1), func(t *testing.T) {
			c := copyFile(t, db)
			conn, err := sql.Open("sqlite", c)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var gone, head string
			if err := conn.QueryRow(`SELECT (SELECT hash FROM events WHERE id = 8), (SELECT hash FROM audit_head)`).Scan(&gone, &head); err != nil {
				t.Fatal(err)
			}
			at := time.Now().UTC().Truncate(time.Microsecond)
			note := fmt.Sprintf(`{"after":7,"through":8,"rows":1,"last_hash":%q}`, gone)
			hash := hashOf(head, 0, "", askd.ActionPurged, "askd", at, note)
			if _, err := conn.Exec(`DELETE FROM events WHERE id = 8;
				INSERT INTO events (ask_id, session, action, actor, at, note, hash) VALUES (NULL, '', 'purged', 'askd', ?, ?, ?);
				UPDATE audit_head SET hash = ?`, at.UnixMicro(), note, hash, hash); err != nil {
				t.Fatal(err)
			}
			conn.Close()
			mustBreakAt(t, "9", "", "--db", c)
		})
		t.Run(fmt.Sprintf("export: a removed line bridged by a forged purge (first version %t)", v1), func(t *testing.T) {
			var gone, head askd.AuditRow
			if err := json.Unmarshal([]byte(lines[7]), &gone); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(lines[8]), &head); err != nil {
				t.Fatal(err)
			}
			r := askd.AuditRow{ID: head.ID + 1, Action: askd.ActionPurged, Actor: "askd", At: time.Now().UTC().Truncate(time.Microsecond), Prev: head.Hash,
				Note: fmt.Sprintf(`{"after":7,"through":8,"rows":1,"last_hash":%q}`, gone.Hash)}
			r.Hash = hashOf(head.Hash, 0, "", r.Action, r.Actor, r.At, r.Note)
			forged, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			// lines' last has no newline of its own.
			ls := append(append(append([]string(nil), lines[:7]...), lines[8]+"\n"), string(forged)+"\n")
			f := filepath.Join(t.TempDir(), "forged.jsonl")
			if err := os.WriteFile(f, []byte(strings.Join(ls, "")), 0o600); err != nil {
				t.Fatal(err)
			}
			mustBreakAt(t, "9", "8", f)
		})
	}

	t.Run("a real purge from the middle", func(t *testing.T) {
		c := copyFile(t, db)
		st, err := sqlite.Open(t.Context(), c)
		if err != nil {
			t.Fatal(err)
		}
		// Ask 2 is answered; asks 1 and 3, around it, stay pending.
		settled := time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC)
		err = st.Update(t.Context(), func(tx askd.Tx) error {
			a, err := tx.Asks.Ask(t.Context(), 2)
			if err != nil {
				return err
			}
			a.Settle(askd.StatusAnswered, "", &askd.Answer{Answer: "ok"}, "alice", settled)
			if err := tx.Asks.UpdateAsk(t.Context(), a); err != nil {
				return err
			}
			return tx.Events.AddEvent(t.Context(), &askd.Event{AskID: 2, Session: "s", Action: askd.ActionAnswered, Actor: "alice", At: settled})
		})
		if err != nil {
			t.Fatal(err)
		}
		n, err := app.New(st, app.Config{Retain: 24 * time.Hour}).Purge(t.Context())
		st.Close()
		if err != nil || n != 1 {
			t.Fatalf("purge: %d asks, %v; want ask 2", n, err)
		}
		// Rows: the 9, ask 2's answer, the retention and two records (ask
		// 2's rows are 2 and 10, two runs).
		out, errOut, code := testserver.Run(t, "audit", "verify", "--db", c)
		if code != 0 || !strings.Contains(out, "13 rows verified") {
			t.Fatalf("verify after a purge: exit %d, %q %q", code, out, errOut)
		}
		purgedExport := filepath.Join(t.TempDir(), "purged.jsonl")
		if _, errOut, code := testserver.Run(t, "audit", "export", "--out", purgedExport, "--db", c); code != 0 {
			t.Fatalf("export: exit %d: %s", code, errOut)
		}
		b, err := os.ReadFile(purgedExport)
		if err != nil {
			t.Fatal(err)
		}
		pl := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
		if !strings.Contains(pl[1], `"purged":true`) || !strings.Contains(pl[1], `"body":"`) || !strings.Contains(pl[1], `"session":""`) {
			t.Errorf("line 2 = %s, want ask 2's row purged, in its place", pl[1])
		}
		if out, errOut, code := testserver.Run(t, "audit", "verify", purgedExport); code != 0 || !strings.Contains(out, "13 rows verified") {
			t.Fatalf("verify the export after a purge: exit %d, %q %q", code, out, errOut)
		}
		// A forger who makes a whole row of a purged ask's out of its body
		// is named: the row's hash covers the body.
		pl[1] = strings.Replace(pl[1], `"session":""`, `"session":"s"`, 1)
		f := filepath.Join(t.TempDir(), "unpurged.jsonl")
		if err := os.WriteFile(f, []byte(strings.Join(pl, "")), 0o600); err != nil {
			t.Fatal(err)
		}
		mustBreakAt(t, "2", "2", f)
	})

	t.Run("unreadable", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "bad.jsonl")
		if err := os.WriteFile(f, []byte(lines[0]+"{not json\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, errOut, code := testserver.Run(t, "audit", "verify", f); code != 2 || !strings.Contains(errOut, "line 2") {
			t.Errorf("verify of a bad line: exit %d, %q; want exit 2 naming line 2", code, errOut)
		}
		if _, _, code := testserver.Run(t, "audit", "verify", filepath.Join(t.TempDir(), "missing.jsonl")); code != 2 {
			t.Errorf("verify of a missing file: exit %d, want 2", code)
		}
	})
}
