//go:build unix

package main

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/askd-dev/askd/internal/sdnotify"
)

// records is a slog handler that hands each record to the test.
type records chan slog.Record

func (r records) Enabled(context.Context, slog.Level) bool        { return true }
func (r records) Handle(_ context.Context, rec slog.Record) error { r <- rec; return nil }
func (r records) WithAttrs([]slog.Attr) slog.Handler              { return r }
func (r records) WithGroup(string) slog.Handler                   { return r }

// next is the next record at level or above whose text holds what,
// within a minute; others are passed over (a look that failed on a busy
// machine, say).
func (r records) next(t *testing.T, level slog.Level, what string) slog.Record {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case rec := <-r:
			if rec.Level >= level && strings.Contains(recordText(rec), what) {
				return rec
			}
		case <-deadline:
			t.Fatalf("no %s record saying %q within a minute", level, what)
		}
	}
}

// manager is a service manager's notify socket: a datagram socket.
type manager struct{ conn *net.UnixConn }

func newManager(t *testing.T) (*manager, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &manager{conn}, path
}

// next is the next datagram, within a minute.
func (m *manager) next(t *testing.T) string {
	t.Helper()
	buf := make([]byte, 4096)
	m.conn.SetReadDeadline(time.Now().Add(time.Minute))
	n, err := m.conn.Read(buf)
	if err != nil {
		t.Fatalf("no datagram: %v", err)
	}
	return string(buf[:n])
}

// drain reads the datagrams already sent, without waiting, and returns them.
func (m *manager) drain(t *testing.T) []string {
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
			return true // never wait for more
		}); err != nil {
			t.Fatal(err)
		}
		if rerr != nil {
			return got // EAGAIN: nothing more there
		}
		got = append(got, string(buf[:n]))
	}
}

// TestSystemdWatchdog feeds the watchdog while the loop ticks and the
// listener takes connections, withholds it when either stops, and says
// STOPPING=1 at the end.
func TestSystemdWatchdog(t *testing.T) {
	m, socket := newManager(t)
	env := map[string]string{"NOTIFY_SOCKET": socket, "WATCHDOG_USEC": "2000000"}
	log := make(records, 64)
	d, err := newSystemd(func(k string) string { return env[k] }, slog.New(log))
	if err != nil {
		t.Fatal(err)
	}
	if d.watchdog != 2*time.Second {
		t.Fatalf("watchdog %v, want 2s", d.watchdog)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln = d.listener(ln)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	var stale atomic.Bool
	ticked := func() time.Time {
		if stale.Load() {
			return time.Now().Add(-time.Hour)
		}
		return time.Now()
	}
	d.start(ln.Addr().String(), "http://askd.example", ticked)

	if got, want := m.next(t), "READY=1\nSTATUS=serving on http://askd.example"; got != want {
		t.Fatalf("first datagram %q, want %q", got, want)
	}
	for range 2 {
		if got := m.next(t); got != sdnotify.Watchdog {
			t.Fatalf("datagram %q, want %q", got, sdnotify.Watchdog)
		}
	}

	// Each look that finds askd not alive logs an error and sends nothing:
	// between two such records no ping may come.
	withheld := func(why string) {
		t.Helper()
		log.next(t, slog.LevelError, why)
		m.drain(t) // pings sent before the first record
		log.next(t, slog.LevelError, why)
		if got := m.drain(t); len(got) > 0 {
			t.Fatalf("datagrams %q between two pings withheld for %q", got, why)
		}
	}
	stale.Store(true)
	withheld("the service's loop last ticked")
	stale.Store(false)
	if got := m.next(t); got != sdnotify.Watchdog {
		t.Fatalf("datagram %q once the loop ticks again, want %q", got, sdnotify.Watchdog)
	}
	ln.Close()
	withheld("the listener at")

	d.stopping()
	for _, got := range m.drain(t) {
		if got == sdnotify.Watchdog {
			continue // sent before the listener closed
		}
		if want := "STOPPING=1\nSTATUS=shutting down"; got != want {
			t.Fatalf("datagram %q, want %q", got, want)
		}
		return
	}
	t.Fatal("no STOPPING=1")
}

// recordText is a record's message and attributes.
func recordText(r slog.Record) string {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.String()); return true })
	return b.String()
}

// TestSystemdAbsent: without NOTIFY_SOCKET nothing is wrapped or sent.
func TestSystemdAbsent(t *testing.T) {
	d, err := newSystemd(func(string) string { return "" }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if got := d.listener(ln); got != ln {
		t.Fatalf("listener wrapped without NOTIFY_SOCKET: %T", got)
	}
	d.start(ln.Addr().String(), "http://x", time.Now)
	d.stopping()
}

// TestSystemdBadWatchdog: a WATCHDOG_USEC that is not a number refuses to start.
func TestSystemdBadWatchdog(t *testing.T) {
	env := map[string]string{"NOTIFY_SOCKET": "@askd-test-notify", "WATCHDOG_USEC": "30s"}
	if _, err := newSystemd(func(k string) string { return env[k] }, slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("no error for WATCHDOG_USEC=30s")
	}
}
