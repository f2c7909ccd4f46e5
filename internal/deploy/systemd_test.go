package deploy

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/testserver"
)

// manager is a service manager's side of the notify protocol: the datagram
// socket systemd names in NOTIFY_SOCKET.
type manager struct {
	path string
	conn *net.UnixConn
}

func newManager(t *testing.T) *manager {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &manager{path: path, conn: conn}
}

// next is the next datagram askd sent, within a minute.
func (m *manager) next(t *testing.T) string {
	t.Helper()
	return m.nextWithin(t, time.Minute)
}

// nextWithin is the next datagram askd sent, within d.
func (m *manager) nextWithin(t *testing.T, d time.Duration) string {
	t.Helper()
	buf := make([]byte, 4096)
	m.conn.SetReadDeadline(time.Now().Add(d))
	n, err := m.conn.Read(buf)
	if err != nil {
		t.Fatalf("no datagram on NOTIFY_SOCKET within %s: %v", d, err)
	}
	return string(buf[:n])
}

// sent is what askd sent that is still unread, without waiting.
func (m *manager) sent(t *testing.T) []string {
	t.Helper()
	raw, err := m.conn.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	buf := make([]byte, 4096)
	for {
		var n int
		var rerr error
		if err := raw.Read(func(fd uintptr) bool {
			n, _, rerr = syscall.Recvfrom(int(fd), buf, syscall.MSG_DONTWAIT)
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if rerr != nil {
			return got
		}
		got = append(got, string(buf[:n]))
	}
}

// pings waits for n WATCHDOG=1 datagrams and fails t on any other.
func (m *manager) pings(t *testing.T, n int, during string) {
	t.Helper()
	for i := range n {
		if got := m.next(t); got != "WATCHDOG=1" {
			t.Fatalf("%s: datagram %d is %q, want WATCHDOG=1", during, i+1, got)
		}
	}
}

// pingsFor reads WATCHDOG=1 datagrams sent from now on for d, failing t on
// any other, or on a gap past twice the interval (systemd would have
// restarted askd). What was sent before is dropped: pings queued while the
// test looked elsewhere prove nothing of now.
func (m *manager) pingsFor(t *testing.T, d, interval time.Duration, during string) {
	t.Helper()
	m.sent(t)
	for start := time.Now(); time.Since(start) < d; {
		if got := m.nextWithin(t, 2*interval); got != "WATCHDOG=1" {
			t.Fatalf("%s: datagram %q, want WATCHDOG=1", during, got)
		}
	}
}

// freezer is a TCP proxy in front of PostgreSQL that can stop passing bytes
// while keeping every connection open: a database that stops answering, as
// behind a network partition, which a refused connection does not show.
type freezer struct {
	ln       net.Listener
	upstream string
	mu       sync.Mutex
	thawed   chan struct{} // closed while bytes flow
}

func newFreezer(t *testing.T, upstream string) *freezer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{ln: ln, upstream: upstream, thawed: make(chan struct{})}
	close(f.thawed)
	t.Cleanup(func() { f.thaw(); ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.pipe(c)
		}
	}()
	return f
}

func (f *freezer) pipe(c net.Conn) {
	u, err := net.Dial("tcp", f.upstream)
	if err != nil {
		c.Close()
		return
	}
	go f.copy(u, c)
	f.copy(c, u)
}

// copy passes bytes from src to dst, holding each read while frozen.
func (f *freezer) copy(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		f.mu.Lock()
		thawed := f.thawed
		f.mu.Unlock()
		<-thawed
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (f *freezer) freeze() {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.thawed:
		f.thawed = make(chan struct{})
	default:
	}
}

func (f *freezer) thaw() {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.thawed:
	default:
		close(f.thawed)
	}
}

// through is the database URL db with its host and port those of the proxy.
func (f *freezer) through(t *testing.T, db string) string {
	t.Helper()
	u, err := url.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = f.ln.Addr().String()
	return u.String()
}

// hostPort is the host:port of the postgres:// URL db.
func hostPort(t *testing.T, db string) string {
	t.Helper()
	u, err := url.Parse(db)
	if err != nil || u.Port() == "" {
		t.Fatalf("database URL %q has no host:port: %v", db, err)
	}
	return u.Host
}

// notifyServe starts the askd binary's serve on a free loopback port with
// NOTIFY_SOCKET (and WATCHDOG_USEC, when watchdog is not 0) as systemd sets
// them, and returns the process and what it wrote on standard error.
func notifyServe(t *testing.T, m *manager, watchdog time.Duration, args ...string) (*exec.Cmd, *testserver.SyncBuffer) {
	t.Helper()
	cmd := exec.Command(testserver.Binary(t), append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "warn"}, args...)...)
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+m.path)
	if watchdog > 0 {
		cmd.Env = append(cmd.Env, "WATCHDOG_USEC="+strconv.FormatInt(watchdog.Microseconds(), 10))
	}
	stderr := &testserver.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("askd serve log:\n%s", stderr.String())
		}
	})
	return cmd, stderr
}

var serving = regexp.MustCompile(`^READY=1\nSTATUS=serving on (http://\S+)$`)

// readyz is the status of url's /readyz (0: no answer).
func readyz(url string) int {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestNotifyProtocol runs askd serve on PostgreSQL as systemd runs the unit
// (Type=notify, WatchdogSec=4s) against a real NOTIFY_SOCKET: READY=1 comes
// once the port answers; WATCHDOG=1 keeps coming while the database stops
// answering (every byte held) and while it is down (the cluster stopped),
// each shown meanwhile by /readyz failing; STOPPING=1 comes on SIGTERM.
func TestNotifyProtocol(t *testing.T) {
	cluster := pgtest.New(t)
	db := cluster.NewDatabase(t)
	proxy := newFreezer(t, hostPort(t, db))
	m := newManager(t)
	// Pings every 2 s; askd gives its listener 1 s to take its connection.
	const watchdog = 4 * time.Second
	cmd, _ := notifyServe(t, m, watchdog, "--db", proxy.through(t, db))

	first := m.next(t)
	match := serving.FindStringSubmatch(first)
	if match == nil {
		t.Fatalf("first datagram %q, want READY=1 and where askd serves", first)
	}
	base := match[1]
	// READY=1 comes only once the port answers: at once, with no retry.
	get(t, base+"/healthz", http.StatusOK)
	if code := readyz(base); code != http.StatusOK {
		t.Fatalf("/readyz %d once ready, want 200", code)
	}
	m.pings(t, 2, "serving")

	proxy.freeze()
	testserver.Eventually(t, "/readyz failing while the database does not answer", func() bool { return readyz(base) == http.StatusServiceUnavailable })
	// Long enough for a loop held by the database to show: askd withholds
	// the ping once its loop has not ticked for 3 s.
	m.pingsFor(t, 8*time.Second, watchdog, "while the database does not answer")
	if code := readyz(base); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz %d while the database does not answer, want 503", code)
	}
	proxy.thaw()
	testserver.Eventually(t, "/readyz answering once the database does", func() bool { return readyz(base) == http.StatusOK })

	cluster.Stop(t)
	testserver.Eventually(t, "/readyz failing while the database is down", func() bool { return readyz(base) == http.StatusServiceUnavailable })
	m.pingsFor(t, 8*time.Second, watchdog, "while the database is down")
	cluster.Start(t)
	testserver.Eventually(t, "/readyz answering once the database is back", func() bool { return readyz(base) == http.StatusOK })
	m.pings(t, 1, "once the database is back")

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for {
		got := m.next(t)
		if got == "WATCHDOG=1" {
			continue // sent before the signal came
		}
		if want := "STOPPING=1\nSTATUS=shutting down"; got != want {
			t.Fatalf("datagram %q after SIGTERM, want %q", got, want)
		}
		break
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("askd serve after SIGTERM: %v, want exit status 0", err)
	}
}

// TestNotifyNotReady: askd serve that cannot listen (the port is taken)
// exits without READY=1.
func TestNotifyNotReady(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	m := newManager(t)
	cmd, stderr := notifyServe(t, m, 0, "--db", filepath.Join(t.TempDir(), "askd.db"), "--addr", taken.Addr().String())
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) {
		t.Fatalf("askd serve on a taken port: %v, want a failure; log:\n%s", err, stderr.String())
	}
	if got := m.sent(t); len(got) > 0 {
		t.Fatalf("askd serve that could not listen sent %q", got)
	}
}

// TestUnitVerifies runs systemd-analyze verify on contrib/systemd/askd.service
// as installed: the file unchanged, under --root, in a directory laid out as
// a machine's, with askd at its ExecStart path (/usr/local/bin/askd) and the
// system's own units beside it (the targets the unit names). The same
// without the binary must fail, which shows verify looked for it. The
// unit's hardening is held to systemd-analyze security's exposure (at most
// 2.0, "OK").
func TestUnitVerifies(t *testing.T) {
	analyze := tool(t, "systemd-analyze", "systemd")
	unit, err := os.ReadFile(filepath.Join(repoRoot(t), "contrib", "systemd", "askd.service"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(unit), "\nExecStart=/usr/local/bin/askd serve\n") {
		t.Fatal("askd.service: no ExecStart=/usr/local/bin/askd serve")
	}
	root := t.TempDir()
	units := strings.TrimSpace(output(t, "", nil, "systemd-path", "systemd-system-unit"))
	copyTree(t, units, filepath.Join(root, units))
	write(t, filepath.Join(root, "etc", "systemd", "system", "askd.service"), unit, 0o644)
	bin, err := os.ReadFile(testserver.Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	askdPath := filepath.Join(root, "usr", "local", "bin", "askd")
	write(t, askdPath, bin, 0o755)

	out, errOut, err := runIn("", nil, analyze, "verify", "--root="+root, "askd.service")
	if err != nil || strings.TrimSpace(out+errOut) != "" {
		t.Fatalf("systemd-analyze verify askd.service: %v\n%s%s", err, out, errOut)
	}
	out, errOut, err = runIn("", nil, analyze, "security", "--offline=true", "--threshold=20", "--root="+root, "askd.service")
	if err != nil {
		t.Fatalf("systemd-analyze security askd.service: exposure past 2.0: %v\n%s%s", err, out, errOut)
	}
	if i := strings.Index(out, "Overall exposure level"); i >= 0 {
		t.Log(strings.TrimSpace(out[i:]))
	}

	if err := os.Remove(askdPath); err != nil {
		t.Fatal(err)
	}
	out, errOut, err = runIn("", nil, analyze, "verify", "--root="+root, "askd.service")
	if err == nil || !strings.Contains(out+errOut, "/usr/local/bin/askd") {
		t.Fatalf("systemd-analyze verify without askd at its ExecStart path: %v, %q; want a failure naming it", err, out+errOut)
	}
}

func write(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the directory src to dst: its files, its directories and
// its symbolic links as they are.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case info.IsDir():
			return os.MkdirAll(to, 0o755)
		default:
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(to, data, 0o644)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}
