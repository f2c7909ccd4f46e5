//go:build unix

package sdnotify

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// listen opens a datagram socket as the service manager does, at name (a
// path, or @name: abstract), and returns a function that reads the next
// datagram, failing t when none comes within ten seconds.
func listen(t *testing.T, name string) func() string {
	t.Helper()
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return func() string {
		t.Helper()
		buf := make([]byte, 4096)
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("no datagram at %s: %v", name, err)
		}
		return string(buf[:n])
	}
}

func TestNotify(t *testing.T) {
	for _, tc := range []struct {
		name   string
		socket func(t *testing.T) string
	}{
		{"path", func(t *testing.T) string { return filepath.Join(t.TempDir(), "notify") }},
		{"abstract", func(t *testing.T) string { return "@askd-sdnotify-test-" + strings.ReplaceAll(t.TempDir(), "/", "-") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			socket := tc.socket(t)
			next := listen(t, socket)
			n := New(func(k string) string { return map[string]string{"NOTIFY_SOCKET": socket}[k] })
			if !n.Enabled() {
				t.Fatal("Enabled() = false with NOTIFY_SOCKET set")
			}
			if err := n.Notify(Ready, Status("listening on\nhttp://127.0.0.1:7777")); err != nil {
				t.Fatal(err)
			}
			if got, want := next(), "READY=1\nSTATUS=listening on http://127.0.0.1:7777"; got != want {
				t.Errorf("datagram %q, want %q", got, want)
			}
			for _, state := range []string{Watchdog, Stopping} {
				if err := n.Notify(state); err != nil {
					t.Fatal(err)
				}
				if got := next(); got != state {
					t.Errorf("datagram %q, want %q", got, state)
				}
			}
		})
	}
}

func TestNotifyWithoutSocket(t *testing.T) {
	n := New(func(string) string { return "" })
	if n.Enabled() {
		t.Fatal("Enabled() = true without NOTIFY_SOCKET")
	}
	if err := n.Notify(Ready); err != nil {
		t.Fatalf("Notify without a socket: %v, want nil (nothing sent)", err)
	}
}

func TestNotifyFails(t *testing.T) {
	for _, tc := range []struct{ name, socket string }{
		{"nobody listens", filepath.Join(t.TempDir(), "gone")},
		{"vsock", "vsock:2:1234"},
		{"relative", "notify.sock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := New(func(string) string { return tc.socket })
			if err := n.Notify(Ready); err == nil {
				t.Fatalf("Notify to %q: nil error", tc.socket)
			}
		})
	}
}

func TestWatchdogInterval(t *testing.T) {
	pid := os.Getpid()
	for _, tc := range []struct {
		name     string
		usec     string
		pid      string
		want     time.Duration
		wantsErr bool
	}{
		{name: "unset"},
		{name: "set", usec: "30000000", want: 30 * time.Second},
		{name: "for this process", usec: "1500000", pid: strconv.Itoa(pid), want: 1500 * time.Millisecond},
		{name: "for another process", usec: "30000000", pid: strconv.Itoa(pid + 1)},
		{name: "zero", usec: "0", wantsErr: true},
		{name: "not a number", usec: "30s", wantsErr: true},
		{name: "past a Duration", usec: "9223372036854775807", wantsErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"WATCHDOG_USEC": tc.usec, "WATCHDOG_PID": tc.pid}
			got, err := WatchdogInterval(func(k string) string { return env[k] }, pid)
			if (err != nil) != tc.wantsErr {
				t.Fatalf("error %v, want one: %v", err, tc.wantsErr)
			}
			if got != tc.want {
				t.Errorf("interval %v, want %v", got, tc.want)
			}
		})
	}
}
