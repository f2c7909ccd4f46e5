package testserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// Binary returns the path of an askd binary built from cmd/askd, once per
// test process, for tests that run the real binary as a subprocess. A
// package that uses it calls RemoveBinary from its TestMain after the tests.
func Binary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "askd-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "askd")
		if runtime.GOOS == "windows" {
			binPath += ".exe"
		}
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/askd-dev/askd/cmd/askd").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build askd: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binPath
}

// Run runs the askd binary (Binary) with args, and returns what it wrote
// to standard output and standard error and its exit status. Failing to
// start it fails the test.
func Run(tb testing.TB, args ...string) (stdout, stderr string, code int) {
	tb.Helper()
	cmd := exec.Command(Binary(tb), args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		tb.Fatalf("askd %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// Output runs the askd binary with args and returns what it wrote to
// standard output; an exit status other than 0 fails the test, with what
// it wrote to standard error.
func Output(tb testing.TB, args ...string) string {
	tb.Helper()
	out, errOut, code := Run(tb, args...)
	if code != 0 {
		tb.Fatalf("askd %s: exit status %d\n%s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// RemoveBinary removes the binary Binary built, if any.
func RemoveBinary() {
	if binDir != "" {
		os.RemoveAll(binDir)
	}
}

// Served is the real askd binary serving a new SQLite file on 127.0.0.1:0,
// with the tokens its first start printed.
type Served struct {
	URL, DB      string
	Human, Agent string
}

// ServeBinary runs `askd serve` from the built binary (Binary) with args on
// a new SQLite file until the test ends, when it is stopped with SIGTERM; its
// log is shown if the test failed.
func ServeBinary(t testing.TB, args ...string) *Served {
	t.Helper()
	s := &Served{DB: filepath.Join(t.TempDir(), "askd.db")}
	cmd := exec.Command(Binary(t), append([]string{"serve", "--addr", "127.0.0.1:0", "--db", s.DB, "--log-level", "warn"}, args...)...)
	stderr := &SyncBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("askd serve log:\n%s", stderr.String())
		}
	})
	started := make(chan struct{})
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			l := lines.Text()
			if _, rest, ok := strings.Cut(l, " listening on "); ok {
				s.URL, _, _ = strings.Cut(rest, " ")
			}
			if _, tok, ok := strings.Cut(l, "human token (answers in the inbox): "); ok {
				s.Human = strings.TrimSpace(tok)
			}
			if _, tok, ok := strings.Cut(l, "agent token (asks):"); ok {
				s.Agent = strings.TrimSpace(tok)
			}
			if strings.HasPrefix(l, "Wire an agent:") {
				close(started)
				break
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case <-started:
	case <-time.After(60 * time.Second):
		t.Fatalf("askd serve did not start; log:\n%s", stderr.String())
	}
	if s.URL == "" || s.Human == "" || s.Agent == "" {
		t.Fatalf("askd serve printed no address or tokens; log:\n%s", stderr.String())
	}
	return s
}
