package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/askd-dev/askd"
)

// The channels the listener hears, of those the migrations' triggers notify
// (012_event_snapshots.sql). Each event is also sent on askd_events, payload
// "<event id>:<ask id>", for older builds still running during an upgrade;
// this one does not listen there, so that it hears each event once.
const (
	channelAsks     = "askd_asks"         // payload "<event id>:<ask id>:<snapshot JSON, or nothing>"
	channelAnswered = "question_answered" // payload "<ask id>"
)

// Reconnection backoff of the listener: the first retry comes soon, for a
// connection cut by a restart or a terminated backend; later ones slow down
// to this cap while the server stays away.
const (
	backoffMin = 50 * time.Millisecond
	backoffMax = 2 * time.Second
)

// idleCheck is how long the listener waits for a notification before it
// pings its connection: a server that vanished without closing the socket is
// noticed within idleCheck plus pingTimeout.
const (
	idleCheck   = 30 * time.Second
	pingTimeout = 5 * time.Second
)

// ListenApplicationName is the application_name of a Store's LISTEN
// connection, so that pg_stat_activity tells it apart from the pool's
// connections (which keep whatever application_name the URL gives).
const ListenApplicationName = "askd-listen"

// listener is a Store's one LISTEN connection, kept apart from the pool (a
// pooled connection would be handed to others), and its watchers.
type listener struct {
	cfg *pgx.ConnConfig

	mu       sync.Mutex
	watchers []func(askd.Change)

	pid    atomic.Uint32 // the connection's backend pid, 0 while down
	cancel context.CancelFunc
	done   chan struct{}
}

// listen connects and listens, then keeps the connection up on a goroutine
// of its own until close.
func listen(ctx context.Context, cfg *pgx.ConnConfig) (*listener, error) {
	l := &listener{cfg: cfg.Copy(), done: make(chan struct{})}
	if l.cfg.RuntimeParams == nil {
		l.cfg.RuntimeParams = map[string]string{}
	}
	l.cfg.RuntimeParams["application_name"] = ListenApplicationName
	conn, err := l.connect(ctx)
	if err != nil {
		return nil, translate(err, "listen")
	}
	runCtx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go l.run(runCtx, conn)
	return l, nil
}

// connect opens a connection and listens on both channels.
func (l *listener) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+channelAsks+"; LISTEN "+channelAnswered); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	l.pid.Store(conn.PgConn().PID())
	return conn, nil
}

// run hands notifications to the watchers; when the connection fails it
// reconnects and resets the watchers, until ctx ends.
func (l *listener) run(ctx context.Context, conn *pgx.Conn) {
	defer close(l.done)
	for {
		err := l.receive(ctx, conn)
		l.pid.Store(0)
		conn.Close(context.Background())
		if ctx.Err() != nil {
			return
		}
		slog.Warn("postgres: lost the LISTEN connection; reconnecting", "err", err)
		if conn = l.reconnect(ctx); conn == nil {
			return
		}
		slog.Info("postgres: listening again")
		// Notifications sent while no one listened are gone: everyone re-reads.
		l.dispatch(askd.Change{Reset: true})
	}
}

// receive waits for notifications on conn and dispatches them, until the
// connection fails or ctx ends.
func (l *listener) receive(ctx context.Context, conn *pgx.Conn) error {
	for {
		wctx, cancel := context.WithTimeout(ctx, idleCheck)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			if c, ok := parseNotification(n); ok {
				l.dispatch(c)
			}
		case ctx.Err() != nil:
			return ctx.Err()
		case timedOut(err):
			// Quiet for a while: make sure the server is still there. A wait
			// that ran out leaves the connection usable.
			pctx, cancel := context.WithTimeout(ctx, pingTimeout)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return fmt.Errorf("ping: %w", err)
			}
		default:
			return err
		}
	}
}

// reconnect tries to connect until it succeeds, waiting backoffMin after the
// first failure and twice as long after each next one, up to backoffMax. It
// returns nil when ctx ends first.
func (l *listener) reconnect(ctx context.Context) *pgx.Conn {
	wait := backoffMin
	for {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		conn, err := l.connect(cctx)
		cancel()
		if err == nil {
			return conn
		}
		if ctx.Err() != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, backoffMax)
	}
}

// parseNotification turns a notification into the change it announces.
func parseNotification(n *pgconn.Notification) (askd.Change, bool) {
	switch n.Channel {
	case channelAsks:
		return parseEvent(n.Payload)
	case channelAnswered:
		askID, err := strconv.ParseInt(n.Payload, 10, 64)
		if err != nil {
			return askd.Change{}, false
		}
		return askd.Change{AskID: askID}, true
	}
	return askd.Change{}, false
}

// parseEvent is the change an askd_asks payload announces, "<event
// id>:<ask id>:<snapshot>", with the ask as the event left it (Change.Ask)
// when the payload carries its snapshot. A snapshot left out (too long for a
// payload), or one that does not decode (logged), leaves Ask nil: the
// watchers read the ask. Every watcher is given the same Ask.
func parseEvent(payload string) (askd.Change, bool) {
	e, rest, _ := strings.Cut(payload, ":")
	a, snapshot, ok := strings.Cut(rest, ":")
	if !ok {
		return askd.Change{}, false
	}
	eventID, err1 := strconv.ParseInt(e, 10, 64)
	askID, err2 := strconv.ParseInt(a, 10, 64)
	if err1 != nil || err2 != nil {
		return askd.Change{}, false
	}
	c := askd.Change{EventID: eventID, AskID: askID}
	if snapshot == "" {
		return c, true
	}
	ask, err := decodeSnapshot([]byte(snapshot))
	if err == nil && ask.ID != askID {
		err = fmt.Errorf("the snapshot is of ask %d", ask.ID)
	}
	if err != nil {
		// The event happened all the same: announce it, and let the
		// watchers read the ask.
		slog.Warn("postgres: the snapshot in an event's notification is unusable; the ask will be read",
			"event", eventID, "ask", askID, "err", err)
		return c, true
	}
	c.Ask = ask
	return c, true
}

func (l *listener) watch(fn func(askd.Change)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.watchers = append(l.watchers, fn)
}

// dispatch calls every watcher with c, in the order they registered.
func (l *listener) dispatch(c askd.Change) {
	l.mu.Lock()
	watchers := slices.Clone(l.watchers)
	l.mu.Unlock()
	for _, fn := range watchers {
		fn(c)
	}
}

// close stops the listener and waits for its goroutine to end.
func (l *listener) close() {
	l.cancel()
	<-l.done
}
