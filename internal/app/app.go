// Package app holds askd's use cases — create, wait, answer, dismiss, withdraw,
// snooze, check, tell — and every rule they follow. The MCP server, the HTTP API,
// the hooks and the CLI call it and decide nothing themselves.
package app

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askd-dev/askd"
)

// Config holds the server settings the rules depend on (SPEC §3.3).
type Config struct {
	QuestionTimeout time.Duration // a question ask is cancelled (timeout) after this
	// ElicitationTimeout: a form ask (SPEC §9) is cancelled (timeout) after
	// this; zero: QuestionTimeout.
	ElicitationTimeout time.Duration
	ApprovalGrace      time.Duration // request_approval waits this long before returning pending
	ApprovalTimeout    time.Duration // a permission prompt is denied after this
	MaxPending         int           // pending asks per session
	// MaxPendingPerToken caps one agent token's pending asks across all its
	// sessions; MaxNewSessions the sessions it may start per minute.
	MaxPendingPerToken int
	MaxNewSessions     int
	Retain             time.Duration // settled asks older than this are purged; 0 keeps all
	PreviewHTML        bool          // option previews are HTML rather than Markdown

	// Tell is the channel of sessions that set none (askd serve --tell); the
	// zero value is the hook channel.
	Tell askd.Channel
	// Notifiers hear of every new ask (askd serve --notify-*); each has a
	// Type of askd.NotifyWebhook, NotifySlack or NotifyNtfy and a URL, or
	// askd.NotifyPush (Web Push to every push subscription, push.go).
	Notifiers []askd.Channel
	// Mail says people are mailed at their own addresses (askd serve
	// --notify-smtp; mail.go): an email channel of each person with an
	// address. The server's fallback address (--notify-email-to) is a
	// notifier of type askd.NotifyEmail in Notifiers.
	Mail bool
	// NotifyAs is the human token that notifications' answer buttons answer
	// as (askd serve --notify-as; see answerlinks.go): every answer given
	// through a signed link or a Slack button is recorded as this person's.
	// "" mints no links, and notifications carry only the inbox link.
	NotifyAs string
	// BeforeTell, when set, is asked before a person's answer to an ask that
	// will be told is accepted (askd serve --before-tell).
	BeforeTell Gate
	// TellAttempts is how many attempts a delivery gets before it fails.
	TellAttempts int
	// Backoff, when set, replaces the package's Backoff (with random jitter)
	// as the wait before retrying a delivery after failed attempt n; tests
	// shorten it.
	Backoff func(attempt int) time.Duration
	// TellCommands are the operator's command templates by name (askd serve
	// --tell-command NAME=ARGV): the only programs a command channel runs.
	// Agents choose one by name; with none, command channels are
	// unavailable. Each is valid by askd.ValidateTemplate.
	TellCommands map[string][]string
	// WebhookAllow is what agents' webhooks may reach although the guard
	// refuses it (askd serve --webhook-allow).
	WebhookAllow askd.WebhookAllow

	// OIDC, when set, lets people sign in with an OpenID Connect provider
	// (askd serve --oidc-*; oidc.go). ProxyCreatePeople: a trusted proxy's
	// header may make a person it names who is none yet, a viewer
	// (--auth-proxy-create-people; proxy.go). ProviderSessionMax bounds the
	// browser sessions either signs in (--oidc-session-max-age); 0 means
	// DefaultProviderSessionMax.
	OIDC               *OIDC
	ProxyCreatePeople  bool
	ProviderSessionMax time.Duration

	// TokenCheckInterval is how often the tokens held by open streams and
	// waits are looked up, so that a revoked token's streams and waits end;
	// 0 means the token cache's lifetime (5 s). Tests shorten it.
	TokenCheckInterval time.Duration

	// Now is the clock; tests inject their own.
	Now func() time.Time
	// Logger receives operational messages.
	Logger *slog.Logger
}

// DefaultConfig returns SPEC §3.3's defaults.
func DefaultConfig() Config {
	return Config{
		QuestionTimeout: 5 * time.Minute,
		ApprovalGrace:   30 * time.Second,
		ApprovalTimeout: 5 * time.Minute,
		MaxPending:      20,
		// Ten sessions' worth at the per-session default: room for a busy
		// fleet on one token, not for one token to bury the inbox.
		MaxPendingPerToken: 200,
		// A launcher starting a session a second for a minute is far past
		// any real use; a flood is stopped within a minute's worth.
		MaxNewSessions: 60,
		TellAttempts:   10,
	}
}

// Service is askd's application layer over one store.
type Service struct {
	store   askd.Store // the store, observed by health (health.go)
	raw     askd.Store // the store as given to New
	health  *health
	cfg     Config
	hub     *hub
	feed    *feed
	Metrics *Metrics
	tokens  tokenCache
	// notifyKept is people's notification settings, read once per tokenTTL
	// rather than with every new ask (notifypeople.go).
	notifyKept keptNotify
	// browsers remembers browser sessions by their id's hash (signin.go).
	browsers tokenCache
	live     liveTokens // tokens held by open streams and waits
	vapid    vapidCache // the VAPID keys, once read (push.go)

	closing   chan struct{}
	closeOnce sync.Once
	ticked    atomic.Int64 // Run's last tick, Unix nanoseconds (Ticked)

	deliveryKick chan struct{} // capacity 1: see DeliveryWake
}

// New returns a Service over store. Call Run to start its background work.
func New(store askd.Store, cfg Config) *Service {
	def := DefaultConfig()
	if cfg.QuestionTimeout <= 0 {
		cfg.QuestionTimeout = def.QuestionTimeout
	}
	if cfg.ElicitationTimeout <= 0 {
		cfg.ElicitationTimeout = cfg.QuestionTimeout
	}
	if cfg.ApprovalGrace < 0 {
		cfg.ApprovalGrace = 0
	}
	if cfg.ApprovalTimeout <= 0 {
		cfg.ApprovalTimeout = def.ApprovalTimeout
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = def.MaxPending
	}
	if cfg.MaxPendingPerToken <= 0 {
		cfg.MaxPendingPerToken = def.MaxPendingPerToken
	}
	if cfg.MaxNewSessions <= 0 {
		cfg.MaxNewSessions = def.MaxNewSessions
	}
	if cfg.TellAttempts <= 0 {
		cfg.TellAttempts = def.TellAttempts
	}
	if cfg.ProviderSessionMax <= 0 {
		cfg.ProviderSessionMax = DefaultProviderSessionMax
	}
	if cfg.TokenCheckInterval <= 0 {
		cfg.TokenCheckInterval = tokenTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	h := &health{}
	seen := observed{Store: store, h: h}
	s := &Service{store: seen, raw: store, health: h, cfg: cfg, hub: newHub(), feed: newFeed(seen), closing: make(chan struct{}), deliveryKick: make(chan struct{}, 1)}
	s.Metrics = newMetrics(s)
	h.faults = s.Metrics.storageErrors
	store.Watch(s.onChange)
	return s
}

// Config returns the service's settings.
func (s *Service) Config() Config { return s.cfg }

// Store returns the store the service runs on.
func (s *Service) Store() askd.Store { return s.store }

func (s *Service) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }

// onChange is called by the store after every commit, in any process.
func (s *Service) onChange(c askd.Change) {
	if c.Reset {
		s.hub.wakeAll()
		signal(s.feed.kick)
		s.kickDeliveries()
		return
	}
	switch {
	case c.EventID != 0:
		s.hub.wake(c.AskID, c.Ask)
		signal(s.feed.kick)
	case c.AskID != 0:
		// A bare notice that the ask was settled (PostgreSQL's
		// question_answered). It comes after its commit's events, whose
		// changes said how the ask is: keep that for the waiters. (Were it
		// first, a waiter would find no settled ask there and read it.)
		s.hub.nudge(c.AskID)
	}
}

// Run does the background work until ctx ends: it cancels asks whose deadline
// passed with no one waiting on them, purges old asks when Retain is set,
// loads events for the inbox streams, and checks the tokens of open streams
// and waits so that revoking one ends them.
//
// The sweep (expiry, escalation, purging) starts each second, one at a time,
// on a goroutine of its own: a sweep waiting on an unreachable database
// holds the next one back but not the loop, which ticks on (Ticked), so that
// a database outage shows in /readyz and not as askd itself hanging.
func (s *Service) Run(ctx context.Context) {
	feedDone := make(chan struct{})
	go func() { s.feed.run(ctx); close(feedDone) }()
	defer func() { <-feedDone }() // returns only once nothing of it uses the store
	tokensDone := make(chan struct{})
	go func() { s.watchTokens(ctx); close(tokensDone) }()
	defer func() { <-tokensDone }()
	signal(s.feed.kick)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	sweeping := make(chan struct{}, 1)        // held while a sweep runs
	defer func() { sweeping <- struct{}{} }() // the sweep under way ends before Run
	var lastPurge time.Time                   // the sweeps' own: one runs at a time
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s.ticked.Store(time.Now().UnixNano())
		select {
		case sweeping <- struct{}{}:
			go func() {
				defer func() { <-sweeping }()
				s.sweep(ctx, &lastPurge)
			}()
		default: // the last sweep still waits: skip this one
		}
	}
}

// Ticked is when Run's loop last ticked (real time, not the injected clock):
// each second while it runs, whether or not the database answers; the zero
// time before the first tick. askd serve's watchdog reads it.
func (s *Service) Ticked() time.Time {
	ns := s.ticked.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// sweep expires and escalates the asks that are due, and purges old ones
// once an hour when Retain is set.
func (s *Service) sweep(ctx context.Context, lastPurge *time.Time) {
	if err := s.ExpireDue(ctx); err != nil && ctx.Err() == nil {
		s.cfg.Logger.Warn("expire asks", "err", err)
	}
	if _, err := s.EscalateDue(ctx); err != nil && ctx.Err() == nil {
		s.cfg.Logger.Warn("escalate asks", "err", err)
	}
	if s.cfg.Retain > 0 && time.Since(*lastPurge) > time.Hour {
		*lastPurge = time.Now()
		if n, err := s.Purge(ctx); err != nil {
			s.cfg.Logger.Warn("purge asks", "err", err)
		} else if n > 0 {
			s.cfg.Logger.Info("purged settled asks", "count", n, "older_than", s.cfg.Retain)
		}
	}
}

// Close makes every wait in progress return a *ShutdownError (EUNAVAILABLE),
// which each front end words for its caller (call check_ask, GET the ask
// again), so a shutting-down server drops no caller silently.
func (s *Service) Close() {
	s.closeOnce.Do(func() { close(s.closing) })
}

// Closed reports whether Close was called; waits return at once from then on.
func (s *Service) Closed() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}

// Closing returns a channel closed by Close, for long-lived work that must end
// with the service (event streams), so a shutdown does not wait on it.
func (s *Service) Closing() <-chan struct{} { return s.closing }

// Subscribe opens a stream of events after cursor (-1: only new ones), for the
// inbox's live updates.
func (s *Service) Subscribe(ctx context.Context, cursor int64) (*Stream, error) {
	return s.feed.subscribe(ctx, cursor)
}
