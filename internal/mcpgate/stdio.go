package mcpgate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// conn is one side of the gate: the client it serves, or the server it
// stands in front of. Messages cross it whole, as bytes.
type conn interface {
	// read returns the next message; io.EOF once the other side is done.
	read(ctx context.Context) (*message, error)
	// write sends m. It may be called from several goroutines.
	write(ctx context.Context, m *message) error
	// close ends the connection; read then returns io.EOF or an error.
	close() error
}

// maxLine bounds one message on stdio. A tool's arguments may hold a file;
// askd takes at most 256 KiB of them, and the gate refuses the rest itself.
const maxLine = 64 << 20

// lineConn is MCP's stdio transport: one JSON-RPC message per line, in
// both directions. Messages pass as read; one that came from HTTP with line
// breaks in it is compacted (only the space between its tokens changes).
type lineConn struct {
	r      *bufio.Reader
	mu     sync.Mutex // one write at a time: lines never interleave
	w      io.Writer
	closer func() error
}

func newLineConn(r io.Reader, w io.Writer, closer func() error) *lineConn {
	return &lineConn{r: bufio.NewReaderSize(r, 64<<10), w: w, closer: closer}
}

// errLineTooLong ends a conn whose peer sent a line over maxLine.
var errLineTooLong = fmt.Errorf("a message of more than %d MiB", maxLine>>20)

func (c *lineConn) read(ctx context.Context) (*message, error) {
	for {
		line, err := c.readLine()
		if len(bytes.TrimSpace(line)) > 0 {
			m, perr := parseMessage(line)
			if perr != nil {
				return &message{raw: bytes.TrimSpace(line)}, &badMessage{perr}
			}
			return m, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (c *lineConn) readLine() ([]byte, error) {
	var line []byte
	for {
		part, err := c.r.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > maxLine {
			return nil, errLineTooLong
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// badMessage is a line that is not a JSON-RPC message the gate can pass:
// the connection goes on.
type badMessage struct{ err error }

func (e *badMessage) Error() string { return e.err.Error() }
func (e *badMessage) Unwrap() error { return e.err }

func (c *lineConn) write(ctx context.Context, m *message) error {
	raw := m.raw
	if bytes.ContainsAny(raw, "\r\n") {
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return err
		}
		raw = buf.Bytes()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	line := make([]byte, 0, len(raw)+1)
	_, err := c.w.Write(append(append(line, raw...), '\n'))
	return err
}

func (c *lineConn) close() error {
	if c.closer == nil {
		return nil
	}
	return c.closer()
}

// child is the MCP server the gate starts (COMMAND ARGS...): its stdin and
// stdout are the gate's conn to it, its stderr the gate's own.
type child struct {
	*lineConn
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan struct{} // closed once it has exited and err is set
	err    error         // how it exited
	// grace is how long it has to exit after its stdin closes, and again
	// after SIGTERM.
	grace time.Duration
}

// startChild starts argv with env (the gate's environment less every
// ASKD_* variable: askd's token is never the server's), its stderr to
// stderr.
func startChild(argv []string, env []string, stderr io.Writer, grace time.Duration) (*child, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = childEnv(env)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the MCP server %s: %w", argv[0], err)
	}
	c := &child{cmd: cmd, stdin: stdin, exited: make(chan struct{}), grace: grace}
	c.lineConn = newLineConn(stdout, stdin, c.stop)
	go func() {
		c.err = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// childEnv is env without any ASKD_* variable.
func childEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(strings.ToUpper(name), "ASKD_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// stop ends the child as MCP's stdio transport says: its stdin closed
// first, then SIGTERM if it has not exited a while later, then SIGKILL.
func (c *child) stop() error {
	c.stdin.Close()
	select {
	case <-c.exited:
		return nil
	case <-time.After(c.grace):
	}
	c.cmd.Process.Signal(terminate)
	select {
	case <-c.exited:
		return nil
	case <-time.After(c.grace):
	}
	c.cmd.Process.Kill()
	<-c.exited
	return nil
}

// exitError says how the child exited, for the client and the gate's
// stderr.
func (c *child) exitError() error {
	<-c.exited
	var exit *exec.ExitError
	switch {
	case c.err == nil:
		return fmt.Errorf("the MCP server %s exited", c.cmd.Path)
	case errors.As(c.err, &exit):
		return fmt.Errorf("the MCP server %s exited: %s", c.cmd.Path, exit.ProcessState)
	}
	return fmt.Errorf("the MCP server %s: %w", c.cmd.Path, c.err)
}

// gone is why the child's stdout ended (err): how it exited, once it has,
// within its grace.
func (c *child) gone(err error) error {
	select {
	case <-c.exited:
		return c.exitError()
	case <-time.After(c.grace):
		return err
	}
}

// stdioEnv is the gate's own process environment, for its child.
func stdioEnv() []string { return os.Environ() }

// terminate asks a child to stop (where there is no SIGTERM, Signal fails
// and the child is killed once its grace is over).
var terminate os.Signal = syscall.SIGTERM
