package admincmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/sqlite"
	"github.com/askd-dev/askd/internal/testserver"
)

// TestBackupWhileServing: askd backup copies a database a server is using
// into a new owner-only file that opens with every ask and token in it;
// it never overwrites a file, and refuses a missing database.
func TestBackupWhileServing(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	a, err := srv.Agent("s1").Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "before the backup"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Human().Answer(ctx, a.ID, &askd.Answer{Answer: "done"}); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "copy.db")
	if out, errOut, err := runCLI(t, "backup", "--db", srv.DBPath, dest); err != nil || !strings.Contains(out, "backed up") {
		t.Fatalf("askd backup: %v %q %q", err, out, errOut)
	}
	if st, err := os.Stat(dest); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v, mode %v; want owner-only", err, st.Mode().Perm())
	}
	// The server goes on writing into the original meanwhile.
	if _, err := srv.Agent("s1").Create(ctx, &askd.AskInput{Kind: askd.KindBlocked, Title: "after the backup"}, 0); err != nil {
		t.Fatal(err)
	}

	copyStore, err := sqlite.Open(ctx, dest)
	if err != nil {
		t.Fatalf("open the backup: %v", err)
	}
	defer copyStore.Close()
	var got *askd.Ask
	var tokens []*askd.Token
	err = copyStore.View(ctx, func(tx askd.Tx) (err error) {
		if got, err = tx.Asks.Ask(ctx, a.ID); err != nil {
			return err
		}
		tokens, err = tx.Tokens.Tokens(ctx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != askd.StatusAnswered || got.Answer == nil || got.Answer.Answer != "done" || len(tokens) != 2 {
		t.Errorf("backup holds %s %+v and %d tokens; want the answered ask and both tokens", got.Status, got.Answer, len(tokens))
	}

	before, _ := os.ReadFile(dest)
	if _, _, err := runCLI(t, "backup", "--db", srv.DBPath, dest); err == nil || !strings.Contains(err.Error(), "does not overwrite") {
		t.Errorf("askd backup onto an existing file: %v", err)
	}
	if after, _ := os.ReadFile(dest); string(after) != string(before) {
		t.Error("the refused backup changed the existing file")
	}
	if _, _, err := runCLI(t, "backup", "--db", filepath.Join(t.TempDir(), "none.db"), filepath.Join(t.TempDir(), "x.db")); err == nil || !strings.Contains(err.Error(), "no database") {
		t.Errorf("askd backup of a missing database: %v", err)
	}
}
