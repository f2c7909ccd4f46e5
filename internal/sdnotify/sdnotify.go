// Package sdnotify is the service side of systemd's notify protocol
// (sd_notify(3)): a unit of Type=notify learns that its service is ready,
// is stopping, and is alive (the watchdog) from datagrams the service sends
// to the socket named in $NOTIFY_SOCKET.
//
// It is written against the protocol rather than taken from a library: the
// protocol is a few newline-separated KEY=VALUE lines in one datagram to a
// unix socket ('@' naming an abstract one, which Go's net package already
// maps), stable since systemd 209; the common library for it
// (coreos/go-systemd's daemon package) would bring a module with a D-Bus
// dependency for those forty lines, and no more of the protocol than askd
// uses. The tests here hold it to a real datagram socket.
package sdnotify

import (
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"
)

// The states askd sends (sd_notify(3) names them).
const (
	Ready    = "READY=1"    // startup is finished: the service serves
	Stopping = "STOPPING=1" // shutdown has begun
	Watchdog = "WATCHDOG=1" // the service is alive: resets the unit's watchdog timer
)

// Status is the STATUS= line: one line of free text systemctl status shows.
func Status(s string) string {
	return "STATUS=" + strings.ReplaceAll(s, "\n", " ")
}

// Notifier sends states to the service manager. The zero Notifier (no
// $NOTIFY_SOCKET: not started by systemd, or by a unit not of Type=notify)
// sends nothing.
type Notifier struct {
	socket string // $NOTIFY_SOCKET: a path, or @name for an abstract socket
}

// New returns the notifier of the socket getenv("NOTIFY_SOCKET") names;
// without one it is the zero Notifier, which sends nothing.
func New(getenv func(string) string) Notifier {
	return Notifier{socket: getenv("NOTIFY_SOCKET")}
}

// Enabled reports whether a service manager listens: NOTIFY_SOCKET is set.
func (n Notifier) Enabled() bool { return n.socket != "" }

// Notify sends states as one datagram, each on a line of its own. It does
// nothing and returns nil when no service manager listens. A socket that is
// not a unix socket path or an abstract name (systemd's vsock: addresses,
// for virtual machines) is an error, as is a failed send.
func (n Notifier) Notify(states ...string) error {
	if n.socket == "" {
		return nil
	}
	if n.socket[0] != '/' && n.socket[0] != '@' {
		return fmt.Errorf("NOTIFY_SOCKET %q: only unix socket paths and @abstract names are supported", n.socket)
	}
	// A socket per message, as sd_notify does: nothing is held between
	// messages, so a service manager that re-executed is reached all the same.
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: n.socket, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("notify the service manager: %w", err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(strings.Join(states, "\n"))); err != nil {
		return fmt.Errorf("notify the service manager: %w", err)
	}
	return nil
}

// WatchdogInterval is the watchdog's timeout the service manager set for
// process pid (WatchdogSec=, passed as $WATCHDOG_USEC), 0 when it set none
// or set it for another process ($WATCHDOG_PID). The service must send
// Watchdog more often than that: sd_watchdog_enabled(3) advises every half.
// A value that is not a positive number of microseconds is an error.
func WatchdogInterval(getenv func(string) string, pid int) (time.Duration, error) {
	usec := getenv("WATCHDOG_USEC")
	if usec == "" {
		return 0, nil
	}
	if p := getenv("WATCHDOG_PID"); p != "" && p != strconv.Itoa(pid) {
		return 0, nil // meant for the process that started us
	}
	us, err := strconv.ParseUint(usec, 10, 63)
	if err != nil || us == 0 || us > math.MaxInt64/uint64(time.Microsecond) {
		return 0, errors.New("WATCHDOG_USEC: " + strconv.Quote(usec) + " is not a positive number of microseconds")
	}
	return time.Duration(us) * time.Microsecond, nil
}
