// Package tell sends askd's outbox: it tells agents the outcome of their asks
// through webhook and command channels (hook channels wait for the agent to
// fetch them; command channels run only the operator's templates; agents'
// webhooks never reach the server's own networks, see newGuardedClient),
// notifies people of new asks through webhooks, Slack, ntfy, Web Push and
// email, with answer buttons (notify.go, mail.go), takes the clicks of Slack's buttons
// (SlackInteractions), and asks the optional before-tell gate. The rules —
// what is due, retries, backoff, giving up, marking asks told, what an
// answer link does — are the app's; this package only does the I/O.
//
// Any number of askd processes may run a Worker on one database: claims are
// leased (PostgreSQL: FOR UPDATE SKIP LOCKED), so no two processes send one
// delivery while its lease runs. The lease is twice the attempt timeout; a
// process killed mid-send leaves its claims to be taken again once their
// lease ends, by whichever process runs next (also itself after a restart).
package tell

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/askd-dev/askd/internal/app"
)

// Options configure a Worker.
type Options struct {
	// Timeout bounds one attempt: a webhook's request, a command's run.
	// Default 30 s. Leases are twice this.
	Timeout time.Duration
	// Concurrency is how many deliveries are sent at once; default 8.
	Concurrency int
	// Tick is how often the worker looks for due deliveries when nothing woke
	// it (other processes' retries); default 1 s.
	Tick time.Duration
	// PublicURL is the inbox's URL, for links in notifications.
	PublicURL string
	// LinkBase is the URL answer links are made on (askd serve
	// --public-url): people open them on their phones, so askd serve never
	// sets it to an address only this machine can open. Empty: no answer
	// links are minted, and notifications carry only the inbox link.
	LinkBase string
	// SlackInteractive says a Slack app's signing secret is configured
	// (SlackInteractions serves its clicks): Slack buttons then answer in
	// place rather than opening their link's confirm page.
	SlackInteractive bool
	// Mail sends email notifications (SPEC §16; smtp.go); nil: none are
	// sent, and an email delivery fails saying so.
	Mail *Mail
	// UserAgent of webhook requests; default "askd".
	UserAgent string
	Logger    *slog.Logger
	// Resolver resolves the hosts of agents' webhooks before the guard
	// judges the addresses they reach; nil is the system's. Tests inject one.
	Resolver *net.Resolver
}

// Worker sends due deliveries until its Run ends.
type Worker struct {
	svc  *app.Service
	opts Options
	log  *slog.Logger
	// http sends what the operator configured (notifiers, the --tell
	// default's webhook); guarded sends agents' webhooks and people's own
	// notifications.
	http, guarded *http.Client
	lease         time.Duration

	slots chan struct{} // a token per send in flight
	freed chan struct{} // capacity 1: a send finished, a slot is free
	wg    sync.WaitGroup
}

// New returns a worker over svc.
func New(svc *app.Service, opts Options) *Worker {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	if opts.Tick <= 0 {
		opts.Tick = time.Second
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "askd"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Worker{
		svc: svc, opts: opts, log: opts.Logger, lease: 2 * opts.Timeout,
		http:    newHTTPClient(opts.Timeout),
		guarded: newGuardedClient(svc.Config().WebhookAllow, opts.Resolver, opts.Timeout),
		slots:   make(chan struct{}, opts.Concurrency), freed: make(chan struct{}, 1),
	}
}

// newHTTPClient is a client for webhooks: no redirects (a receiver that
// moved answers 3xx, which is retried and in the end reported), each request
// bounded by timeout.
func newHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Run sends deliveries as they become due until ctx ends, then waits for
// the sends in flight. It wakes when this process writes a delivery
// (app.Service.DeliveryWake), when the next retry is due, and every Tick.
func (w *Worker) Run(ctx context.Context) {
	defer w.wg.Wait()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		wait := w.opts.Tick
		if next := w.pass(ctx); !next.IsZero() {
			wait = min(wait, max(time.Until(next), time.Millisecond))
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-w.svc.DeliveryWake():
		case <-w.freed:
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// pass claims as many due deliveries as there are free slots, and starts
// sending them, until none are due or every slot is taken. It returns when
// the next delivery becomes due, zero if none will or it cannot tell. It
// claims (a write) only when a delivery is due: most wake-ups are settlements
// with nothing for the worker, and the look (a read) is cheaper.
func (w *Worker) pass(ctx context.Context) time.Time {
	for ctx.Err() == nil {
		next, err := w.svc.NextDeliveryAt(ctx)
		if err != nil {
			if ctx.Err() == nil {
				w.log.Warn("tell: look for due deliveries", "err", err)
			}
			return time.Time{}
		}
		free := cap(w.slots) - len(w.slots)
		if next.IsZero() || next.After(time.Now()) || free == 0 {
			return next
		}
		claims, err := w.svc.ClaimDeliveries(ctx, w.lease, free)
		if err != nil {
			if ctx.Err() == nil {
				w.log.Warn("tell: claim deliveries", "err", err)
			}
			return time.Time{}
		}
		for _, cl := range claims {
			w.slots <- struct{}{}
			w.wg.Go(func() {
				defer func() {
					<-w.slots
					select {
					case w.freed <- struct{}{}:
					default:
					}
				}()
				w.send(ctx, cl)
			})
		}
		if len(claims) == 0 {
			// Due but not claimed (another process has it, or its row is
			// locked): look again after a tick rather than spin.
			return time.Time{}
		}
	}
	return time.Time{}
}

// send makes one attempt at a claimed delivery and reports the outcome. When
// ctx ends mid-send (shutdown) it reports nothing: the lease runs out and
// the delivery is tried again.
func (w *Worker) send(ctx context.Context, cl *app.Claimed) {
	actx, cancel := context.WithTimeout(ctx, w.opts.Timeout)
	defer cancel()
	how, err := w.attempt(actx, cl)
	if ctx.Err() != nil {
		return
	}
	rctx := context.WithoutCancel(ctx)
	d := cl.Delivery
	if err == nil {
		if err := w.svc.Delivered(rctx, cl, how); err != nil {
			w.log.Error("tell: record a sent delivery", "key", d.Key, "err", err)
		}
		w.log.Debug("tell: sent", "key", d.Key, "by", how, "attempt", d.Attempts)
		return
	}
	permanent := false
	if f, ok := err.(*failure); ok {
		permanent = f.permanent
	}
	w.log.Info("tell: attempt failed", "key", d.Key, "by", how, "attempt", d.Attempts, "err", err)
	if err := w.svc.DeliveryFailed(rctx, cl, err.Error(), permanent); err != nil {
		w.log.Error("tell: record a failed attempt", "key", d.Key, "err", err)
	}
}

// failure is a failed attempt; permanent ones are not retried.
type failure struct {
	msg       string
	permanent bool
}

func (f *failure) Error() string { return f.msg }
