package admincmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/testserver"
)

func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	testserver.RemoveBinary()
	os.Exit(code)
}

// commands are this package's commands by the names askd's command table
// gives them.
var commands = map[string]func(context.Context, *cli.Env, []string) error{
	"token": Token, "team": Team, "signin-link": SignInLink, "audit": Audit, "backup": Backup, "migrate": Migrate,
}

// runCLI runs the command args name with the rest of args, as askd does,
// and returns its stdout, stderr and error.
func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &cli.Env{Stdout: &out, Stderr: &errOut, Getenv: os.Getenv}
	err := commands[args[0]](t.Context(), e, args[1:])
	return out.String(), errOut.String(), err
}

// askdCLI runs the CLI and returns its output, failing the test on an error.
func askdCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := runCLI(t, args...)
	if err != nil {
		t.Fatalf("askd %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// TestTokenCommandsNeedTheDatabase: askd token and signin-link in a
// directory without the server's database refuse, and create no file; a
// token made now lists when it was made.
func TestTokenCommandsNeedTheDatabase(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "askd.db")
	for _, args := range [][]string{
		{"token", "list", "--db", missing},
		{"token", "create", "--agent", "a1", "--db", missing},
		{"token", "revoke", "a1", "--db", missing},
		{"signin-link", "--db", missing},
	} {
		_, _, err := runCLI(t, args...)
		if err == nil || !strings.Contains(err.Error(), "no database at") {
			t.Errorf("askd %v: %v, want no database", args, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Fatalf("askd %v left %s in the directory", args, entries[0].Name())
		}
	}
	_, _, err := runCLI(t, "migrate", "--db", filepath.Join(dir, "nope", "askd.db"))
	if err == nil || !strings.Contains(err.Error(), "directory") || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("askd migrate into a missing directory: %v", err)
	}

	db := filepath.Join(dir, "made.db")
	askdCLI(t, "migrate", "--db", db)
	askdCLI(t, "token", "create", "--agent", "a1", "--db", db)
	out := askdCLI(t, "token", "list", "--db", db)
	if !regexp.MustCompile(`a1\s+agent\s+-\s+-\s+20\d\d-\d\d-\d\d \d\d:\d\d`).MatchString(out) {
		t.Errorf("token list:\n%s\nwant a1 with its creation time", out)
	}
	out = askdCLI(t, "token", "revoke", "--db", db, "a1")
	if !strings.Contains(out, "within 5 s") {
		t.Errorf("revoke said %q; want it to say open sessions end within 5 s", out)
	}
}
