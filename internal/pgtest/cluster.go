//go:build unix

package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// dirPrefix starts the name of every cluster directory under os.TempDir().
const dirPrefix = "askd-pgtest-"

// cluster is a throwaway PostgreSQL server: a data directory initialised in a
// temporary directory, and a postgres process run as a child of the test
// process, listening on 127.0.0.1 at a free port and on a unix socket in that
// directory. Durability is off (fsync, synchronous_commit, full_page_writes):
// the data only needs to outlive a restart, not a crash of the machine.
type cluster struct {
	postgres string // the server binary
	dir      string // holds data/, server.log and the unix socket
	port     int
	cred     *syscall.Credential // the user to run as when we are root, else nil

	mu   sync.Mutex
	proc *os.Process
	done chan struct{} // closed when proc has exited
}

var clusters struct {
	sync.Mutex
	all []*cluster
}

// stopAll stops and removes every cluster still running.
func stopAll() {
	clusters.Lock()
	all := clusters.all
	clusters.all = nil
	clusters.Unlock()
	for _, c := range all {
		c.stop()
		os.RemoveAll(c.dir)
	}
}

// startCluster runs initdb in a new temporary directory and starts the server.
func startCluster() (*cluster, error) {
	initdb, postgres, err := findBinaries()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	removeStale()
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, err
	}
	c := &cluster{postgres: postgres, dir: dir, cred: cred}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		if err := checkTraversable(filepath.Dir(dir)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	cmd := exec.Command(initdb, "-D", c.data(), "-A", "trust", "-U", "postgres",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	cmd.SysProcAttr = procAttr(cred, false)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	// A free port can be taken by someone else before the server binds it:
	// try a few.
	for attempt := 0; ; attempt++ {
		if c.port, err = freePort(); err == nil {
			err = c.start()
		}
		if err == nil || attempt == 2 {
			break
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	clusters.Lock()
	clusters.all = append(clusters.all, c)
	clusters.Unlock()
	return c, nil
}

// remove stops the cluster and deletes its directory.
func (c *cluster) remove() {
	clusters.Lock()
	for i, o := range clusters.all {
		if o == c {
			clusters.all = append(clusters.all[:i], clusters.all[i+1:]...)
			break
		}
	}
	clusters.Unlock()
	c.stop()
	os.RemoveAll(c.dir)
}

func (c *cluster) data() string { return filepath.Join(c.dir, "data") }

func (c *cluster) adminURL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// start starts the server and waits until it accepts connections.
func (c *cluster) start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc != nil {
		return errors.New("server already running")
	}
	logPath := filepath.Join(c.dir, "server.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.postgres, "-D", c.data(), "-p", strconv.Itoa(c.port), "-k", c.dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		// Every Store holds a pool and a listening connection; tests open many.
		"-c", "max_connections=300")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = procAttr(c.cred, true)
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		// The kernel's parent-death signal follows the thread that started
		// the child, not the process: keep this thread for as long as the
		// server runs (a goroutine that ends locked takes its thread along).
		runtime.LockOSThread()
		err := cmd.Start()
		started <- err
		if err == nil {
			cmd.Wait()
		}
		logFile.Close()
		close(done)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgconn.Connect(ctx, c.adminURL())
		cancel()
		if err == nil {
			conn.Close(context.Background())
			c.proc, c.done = cmd.Process, done
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("postgres exited at start:\n%s", tail(logPath))
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Signal(syscall.SIGQUIT)
			<-done
			return fmt.Errorf("postgres not ready after 60 s:\n%s", tail(logPath))
		}
	}
}

// stop shuts the server down, fast (SIGINT: sessions are ended, a checkpoint
// written), or at once (SIGQUIT) when that takes longer than 30 s.
func (c *cluster) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return
	}
	c.proc.Signal(syscall.SIGINT)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		c.proc.Signal(syscall.SIGQUIT)
		<-c.done
	}
	c.proc, c.done = nil, nil
}

func (c *cluster) running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.proc != nil
}

// findBinaries finds initdb and postgres on PATH, else in the directory
// `pg_config --bindir` prints (distributions keep the server binaries out of
// PATH, in a per-version directory).
func findBinaries() (initdb, postgres string, err error) {
	initdb, err1 := exec.LookPath("initdb")
	postgres, err2 := exec.LookPath("postgres")
	if err1 == nil && err2 == nil {
		return initdb, postgres, nil
	}
	pgConfig, err := exec.LookPath("pg_config")
	if err != nil {
		return "", "", errNoServer
	}
	out, err := exec.Command(pgConfig, "--bindir").Output()
	if err != nil {
		return "", "", errNoServer
	}
	bin := strings.TrimSpace(string(out))
	initdb, postgres = filepath.Join(bin, "initdb"), filepath.Join(bin, "postgres")
	for _, p := range []string{initdb, postgres} {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", "", errNoServer
		}
	}
	return initdb, postgres, nil
}

// credential returns the user to run the server as: nobody else when we are
// not root, the "postgres" user when we are (initdb and postgres refuse root).
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, the server must run as another user, and there is no \"postgres\" user: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// checkTraversable makes sure another user can reach a directory inside dir.
func checkTraversable(dir string) error {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("the server runs as user postgres, which cannot enter %s; set TMPDIR to a directory it can reach", d)
		}
		if parent := filepath.Dir(d); parent == d {
			return nil
		}
	}
}

// removeStale deletes cluster directories that earlier test processes left
// behind when they died without stopping their server: no live postmaster,
// and untouched for ten minutes.
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < 10*time.Minute {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(d, "data", "postmaster.pid")); err == nil {
			first, _, _ := bytes.Cut(b, []byte("\n"))
			if pid, err := strconv.Atoi(string(first)); err == nil {
				if err := syscall.Kill(pid, 0); err == nil || err == syscall.EPERM {
					continue // still running
				}
			}
		}
		os.RemoveAll(d)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tail returns the last lines of the server log, for error messages.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}
