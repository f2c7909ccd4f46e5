package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/askd-dev/askd/internal/sdnotify"
)

// askd serve under systemd (a unit of Type=notify: contrib/systemd/askd.service)
// says READY=1 once it listens, its store open, and its HTTP server takes
// connections; STOPPING=1 when shutdown begins; and, with WatchdogSec=,
// WATCHDOG=1 each half interval while its own loops run: the service's loop
// ticks (app.Service.Ticked) and the listener takes a connection. Neither
// waits on the database: an outage shows in /readyz, and systemd does not
// restart askd for it. Without NOTIFY_SOCKET none of this runs.

// systemd is askd serve's side of the notify protocol. When no service
// manager listens (no NOTIFY_SOCKET) each of its methods does nothing.
type systemd struct {
	n        sdnotify.Notifier
	watchdog time.Duration // WatchdogSec=; 0: none
	log      *slog.Logger
	// accepted gets a signal for each connection the listener took
	// (capacity 1: a signal pending means "one since the last look").
	accepted chan struct{}
	stop     context.CancelFunc
	done     chan struct{} // closed when watch returned
}

// newSystemd reads NOTIFY_SOCKET and the watchdog's interval (an error:
// WATCHDOG_USEC is not one).
func newSystemd(getenv func(string) string, log *slog.Logger) (*systemd, error) {
	n := sdnotify.New(getenv)
	if !n.Enabled() {
		return &systemd{}, nil
	}
	w, err := sdnotify.WatchdogInterval(getenv, os.Getpid())
	if err != nil {
		return nil, err
	}
	return &systemd{n: n, watchdog: w, log: log, accepted: make(chan struct{}, 1)}, nil
}

// listener returns ln, counting the connections it hands out when systemd
// listens (accepts probes them).
func (d *systemd) listener(ln net.Listener) net.Listener {
	if !d.n.Enabled() {
		return ln
	}
	return acceptSignal{Listener: ln, accepted: d.accepted}
}

// start says READY=1 once the listener takes a connection, and then keeps
// the watchdog fed, on a goroutine of its own until stopping. addr is
// where to dial the listener (host:port); url is what STATUS= says.
func (d *systemd) start(addr, url string, ticked func() time.Time) {
	if !d.n.Enabled() {
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	d.stop, d.done = stop, make(chan struct{})
	go func() {
		defer close(d.done)
		d.watch(ctx, addr, url, ticked)
	}()
}

// stopping stops start's goroutine and says STOPPING=1.
func (d *systemd) stopping() {
	if !d.n.Enabled() {
		return
	}
	if d.stop != nil {
		d.stop()
		<-d.done
	}
	d.notify(sdnotify.Stopping, sdnotify.Status("shutting down"))
}

// readyWait bounds one look at the listener before READY=1; the watchdog's
// looks get at most a quarter of its interval, so that a slow look does
// not make a ping late.
const readyWait = 5 * time.Second

// watch says READY=1 once the listener takes a connection, then, with a
// watchdog, WATCHDOG=1 each half interval while askd is alive, until ctx
// ends.
func (d *systemd) watch(ctx context.Context, addr, url string, ticked func() time.Time) {
	for {
		err := d.accepts(ctx, addr, readyWait)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		d.log.Warn("systemd: not ready yet", "err", err)
	}
	d.notify(sdnotify.Ready, sdnotify.Status("serving on "+url))
	if d.watchdog == 0 {
		return
	}
	tick := time.NewTicker(d.watchdog / 2)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := d.alive(ctx, addr, ticked); err != nil {
			if ctx.Err() == nil {
				d.log.Error("systemd watchdog: askd is not alive, WATCHDOG=1 withheld (systemd restarts it once WatchdogSec passes)", "err", err)
			}
			continue
		}
		d.notify(sdnotify.Watchdog)
	}
}

// alive reports why askd is not alive, nil when it is: the service's loop
// ticked lately (each second while it runs, whatever the database does), and
// the listener takes a connection.
func (d *systemd) alive(ctx context.Context, addr string, ticked func() time.Time) error {
	// A tick each second: within half the interval, with room for a busy
	// machine when the interval is short.
	stale := max(d.watchdog/2, 3*time.Second)
	if since := time.Since(ticked()); since > stale {
		return fmt.Errorf("the service's loop last ticked %s ago", since.Round(time.Millisecond))
	}
	return d.accepts(ctx, addr, min(readyWait, d.watchdog/4))
}

// accepts dials the listener at addr and reports whether it took a
// connection (any: one it took after the dial shows its loop runs) within
// wait. The connection sends nothing and is closed: net/http ends it without
// a request, so the access log has no line for it.
func (d *systemd) accepts(ctx context.Context, addr string, wait time.Duration) error {
	select {
	case <-d.accepted: // taken before this look
	default:
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("the listener at %s: %w", addr, err)
	}
	defer conn.Close()
	select {
	case <-d.accepted:
		return nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("the listener at %s took no connection within %s", addr, wait)
		}
		return ctx.Err()
	}
}

// notify sends states, logging a failure: systemd then acts on what it
// misses (a start that times out, a watchdog that fires), and the log says why.
func (d *systemd) notify(states ...string) {
	if err := d.n.Notify(states...); err != nil {
		d.log.Warn("systemd: "+strings.Join(states, " "), "err", err)
	}
}

// acceptSignal is a listener that signals each connection it hands out.
type acceptSignal struct {
	net.Listener
	accepted chan struct{}
}

func (l acceptSignal) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		select {
		case l.accepted <- struct{}{}:
		default:
		}
	}
	return c, err
}
