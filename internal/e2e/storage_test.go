package e2e

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/testserver"
	_ "modernc.org/sqlite"
)

// needRoot skips t unless the process runs as root, which mounting a tmpfs
// and chattr need; under CI=true, which runs as root, it fails instead.
func needRoot(t *testing.T, what string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s needs root, which CI has", what)
	}
	t.Skipf("%s needs root", what)
}

// sqliteServer makes a SQLite database at db with an agent and a human
// token, starts askd serve on it, and returns the process and both clients.
func sqliteServer(t *testing.T, db string, extra ...string) (*proc, *client.Client, *client.Client) {
	t.Helper()
	if out, err := exec.Command(testserver.Binary(t), "migrate", "--db", db).CombinedOutput(); err != nil {
		t.Fatalf("askd migrate: %v\n%s", err, out)
	}
	agentTok := token(t, db, "agent", "agent-1")
	humanTok := token(t, db, "human", "person-1")
	p := serve(t, "sqlite", "all", db, extra...)
	agent := client.New(p.URL, agentTok)
	agent.Session = "faults"
	return p, agent, client.New(p.URL, humanTok)
}

// ask creates a question ask, returning the client's error as it is.
func ask(agent *client.Client, title string) (*askd.Ask, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return agent.Create(ctx, &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{{
		Question: title, Header: "Pick", Options: []askd.Option{{Label: "a"}, {Label: "b"}},
	}}}, 0)
}

// refused checks that err is the client error with status and a message
// containing words.
func refused(t *testing.T, what string, err error, status int, words string) {
	t.Helper()
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != status || !strings.Contains(ce.Message, words) {
		t.Fatalf("%s: %v, want %d with %q", what, err, status, words)
	}
	t.Logf("%s: %d %s (%s)", what, ce.Status, ce.Message, ce.Code)
}

// readyBody returns the status and body of the process's /readyz.
func readyBody(p *proc) (int, string) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(p.URL + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// readyzSays waits for /readyz to answer status with words in its body.
func readyzSays(t *testing.T, p *proc, status int, words string) {
	t.Helper()
	testserver.Eventually(t, fmt.Sprintf("/readyz %d %q", status, words), func() bool {
		got, body := readyBody(p)
		return got == status && strings.Contains(body, words)
	})
}

// pendingCount is how many asks the inbox lists as pending.
func pendingCount(t *testing.T, people *client.Client) int {
	t.Helper()
	asks, err := people.List(t.Context(), client.ListOptions{Status: "pending", Limit: 1000})
	if err != nil {
		t.Fatalf("list pending: %v", err)
	}
	return len(asks)
}

// TestDiskFull serves from a 2 MiB tmpfs, fills it, and checks that creates
// are refused with 507 naming the full disk, /readyz says so, nothing stored
// is lost, and both recover by themselves once space is freed.
func TestDiskFull(t *testing.T) {
	needRoot(t, "mounting a tmpfs")
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", dir).CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount tmpfs: %v\n%s", err, out)
		}
		t.Skipf("mount tmpfs: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	db := filepath.Join(dir, "askd.db")
	p, agent, people := sqliteServer(t, db)
	readyz(t, p, "sqlite", http.StatusOK)
	var created int
	for i := range 5 {
		if _, err := ask(agent, fmt.Sprintf("Before %d?", i)); err != nil {
			t.Fatal(err)
		}
		created++
	}
	// Fill what is left of the disk.
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	for {
		if _, err := f.Write(chunk[:512]); err != nil {
			break
		}
	}
	f.Close()
	// Creates fail once the WAL has no room left to grow.
	var err2 error
	for i := 0; i < 500; i++ {
		if _, err2 = ask(agent, fmt.Sprintf("Full %d? %s", i, strings.Repeat("x", 900))); err2 != nil {
			break
		}
		created++
	}
	refused(t, "create on a full disk", err2, http.StatusInsufficientStorage, "the database disk is full")
	readyzSays(t, p, http.StatusServiceUnavailable, "the database disk is full")

	os.Remove(filler)
	readyzSays(t, p, http.StatusOK, "ok")
	if _, err := ask(agent, "After?"); err != nil {
		t.Fatalf("create once space is free: %v", err)
	}
	created++
	if n := pendingCount(t, people); n != created {
		t.Fatalf("%d pending asks, want the %d created", n, created)
	}
}

// TestImmutableFile makes the database files immutable (chattr +i, which
// stops even root) under a running server: writes are refused naming the
// read-only file, /readyz says so, and both recover once it is lifted. At
// start, such a file is refused.
func TestImmutableFile(t *testing.T) {
	needRoot(t, "chattr")
	if _, err := exec.LookPath("chattr"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chattr not found")
		}
		t.Skip("chattr not found")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "askd.db")
	p, agent, people := sqliteServer(t, db)
	if _, err := ask(agent, "Before?"); err != nil {
		t.Fatal(err)
	}
	chattr := func(flag string) {
		t.Helper()
		args := []string{flag}
		for _, n := range []string{db, db + "-wal"} {
			if _, err := os.Stat(n); err == nil {
				args = append(args, n)
			}
		}
		if out, err := exec.Command("chattr", args...).CombinedOutput(); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("chattr %s: %v\n%s", flag, err, out)
			}
			t.Skipf("chattr %s: %v\n%s", flag, err, out)
		}
	}
	chattr("+i")
	t.Cleanup(func() { exec.Command("chattr", "-i", db, db+"-wal").Run() })
	_, err := ask(agent, "Immutable?")
	refused(t, "create on an immutable file", err, http.StatusServiceUnavailable, "the database file is read-only")
	readyzSays(t, p, http.StatusServiceUnavailable, "the database file is read-only")
	chattr("-i")
	readyzSays(t, p, http.StatusOK, "ok")
	if _, err := ask(agent, "After?"); err != nil {
		t.Fatalf("create once writable: %v", err)
	}
	if n := pendingCount(t, people); n != 2 {
		t.Fatalf("%d pending, want 2", n)
	}

	// At start.
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()
	chattr("+i")
	out, err := exec.Command(testserver.Binary(t), "serve", "--addr", "127.0.0.1:0", "--db", db).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "the database file is read-only") {
		t.Fatalf("serve on an immutable file: %v\n%s", err, out)
	}
	t.Logf("serve on an immutable file: %s", out)
}

// TestFileDeletedOrReplaced deletes, then replaces, the database under a
// running server: writes and reads are refused naming the cause, /readyz
// fails, and a restart refuses rather than making or serving another
// database; --create allows it deliberately.
func TestFileDeletedOrReplaced(t *testing.T) {
	for _, tt := range []struct {
		name, refusal string
		do            func(t *testing.T, db string)
	}{
		{"deleted", "no database there, but askd served one at this path before", func(t *testing.T, db string) {
			for _, n := range []string{db, db + "-wal", db + "-shm"} {
				os.Remove(n)
			}
		}},
		{"replaced", "this is not the database askd served at this path", func(t *testing.T, db string) {
			other := filepath.Join(t.TempDir(), "other.db")
			if out, err := exec.Command(testserver.Binary(t), "migrate", "--db", other).CombinedOutput(); err != nil {
				t.Fatalf("migrate other: %v\n%s", err, out)
			}
			if err := os.Rename(other, db); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "askd.db")
			p, agent, _ := sqliteServer(t, db)
			if _, err := ask(agent, "Before?"); err != nil {
				t.Fatal(err)
			}
			tt.do(t, db)
			_, err := ask(agent, "After?")
			refused(t, "create with the file "+tt.name, err, http.StatusServiceUnavailable, "deleted or replaced")
			readyzSays(t, p, http.StatusServiceUnavailable, "deleted or replaced")

			p.cmd.Process.Signal(syscall.SIGTERM)
			p.cmd.Wait()
			out, err := exec.Command(testserver.Binary(t), "serve", "--addr", "127.0.0.1:0", "--db", db).CombinedOutput()
			if err == nil || !strings.Contains(string(out), tt.refusal) || strings.Contains(string(out), "First start") {
				t.Fatalf("restart with the file %s: %v\n%s", tt.name, err, out)
			}
			t.Logf("restart: %s", out)
			q := serve(t, "again", "all", db, "--create")
			readyz(t, q, "again", http.StatusOK)
		})
	}
}

// TestCorruptPage writes garbage over a page in the middle of a copy of a
// database: askd serve refuses it at start, saying how to restore.
func TestCorruptPage(t *testing.T) {
	db := filepath.Join(t.TempDir(), "askd.db")
	p, agent, _ := sqliteServer(t, db)
	for i := range 50 {
		agent.Session = fmt.Sprintf("corrupt-%d", i/10) // at most 20 pending per session
		if _, err := ask(agent, fmt.Sprintf("Ask %d? %s", i, strings.Repeat("y", 500))); err != nil {
			t.Fatal(err)
		}
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(db, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	page := fi.Size() / 4096 / 2
	if _, err := f.WriteAt([]byte(strings.Repeat("\xde\xad", 2048)), page*4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, err := exec.Command(testserver.Binary(t), "serve", "--addr", "127.0.0.1:0", "--db", db).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "the database file is damaged (corrupt)") || !strings.Contains(string(out), "restore") {
		t.Fatalf("serve on a damaged file: %v\n%s", err, out)
	}
	t.Logf("serve on a damaged file (page %d of %d): %s", page, fi.Size()/4096, out)
}

// TestExpiredWhileDown stops askd while an ask waits and starts it again
// after the ask's deadline: the first list after the start does not show it
// pending, and it is cancelled with reason timeout.
func TestExpiredWhileDown(t *testing.T) {
	db := filepath.Join(t.TempDir(), "askd.db")
	p, agent, people := sqliteServer(t, db, "--question-timeout", "2s")
	a, err := ask(agent, "Soon?")
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()
	// The deadline is the event waited for: the clock passing it.
	testserver.Eventually(t, "the deadline to pass", func() bool {
		return time.Now().After(a.Deadline.Add(10 * time.Millisecond))
	})
	q := serve(t, "again", "all", db)
	humans := client.New(q.URL, people.Token)
	if n := pendingCount(t, humans); n != 0 {
		t.Fatalf("%d pending right after the start, want 0: the ask's deadline passed while askd was down", n)
	}
	got, err := humans.Show(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != askd.StatusCancelled || got.CancelReason != askd.ReasonTimeout {
		t.Fatalf("ask %d is %s/%s, want cancelled/timeout", a.ID, got.Status, got.CancelReason)
	}
}

// TestBusyDatabase holds SQLite's write lock from another process's
// connection past askd's busy timeout (5 s): a create is refused with 503
// naming the busy database, /readyz says so (within its probe's bound), and
// once the lock goes both recover; the asks before and after it are there.
func TestBusyDatabase(t *testing.T) {
	db := filepath.Join(t.TempDir(), "askd.db")
	p, agent, people := sqliteServer(t, db)
	before, err := ask(agent, "Before the lock?")
	if err != nil {
		t.Fatal(err)
	}
	locker, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	conn, err := locker.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatalf("take the write lock: %v", err)
	}
	_, err = ask(agent, "While locked?")
	refused(t, "create while another process holds the write lock", err, http.StatusServiceUnavailable, "the database is busy")
	// /readyz answers within its probe's 2 s though the probe waits out the
	// busy timeout behind the lock.
	readyzSays(t, p, http.StatusServiceUnavailable, "busy")
	if _, err := conn.ExecContext(t.Context(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	readyzSays(t, p, http.StatusOK, "")
	after, err := ask(agent, "After the lock?")
	if err != nil {
		t.Fatalf("create once the lock is gone: %v", err)
	}
	for _, id := range []int64{before.ID, after.ID} {
		if d, err := people.Show(t.Context(), id); err != nil || d.Status != askd.StatusPending {
			t.Errorf("ask %d: %v %v, want pending", id, d, err)
		}
	}
}
