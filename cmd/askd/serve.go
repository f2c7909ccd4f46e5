package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/httpapi"
	"github.com/askd-dev/askd/internal/mcpserver"
	"github.com/askd-dev/askd/internal/tell"
	"github.com/askd-dev/askd/internal/web"
)

// serveConfig is askd serve's flags.
type serveConfig struct {
	addr, db, role, previewFormat, retain, publicURL, debugAddr string
	create                                                      bool // --create
	logLevel, logFormat                                         string
	cfg                                                         app.Config

	tell, tellSecret, beforeTell           string
	notifyAs, slackSecret                  string
	tellCommands, webhookAllow             listFlag
	notifyWebhook, notifySlack, notifyNtfy listFlag
	allowedHosts                           listFlag
	hosts                                  []string // the Host names served besides loopback ones
	tellTimeout, bodyTimeout               time.Duration
	notifyPush                             bool
}

// listFlag collects a repeatable flag's values (each may also be
// comma-separated).
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func cmdServe(ctx context.Context, e *env, args []string) error {
	sc := serveConfig{cfg: app.DefaultConfig()}
	fs := flags(e, "serve", "[flags]")
	fs.StringVar(&sc.addr, "addr", "127.0.0.1:7777", "address to listen on; on all interfaces (:7777, 0.0.0.0:7777) askd prints a URL for each\n"+
		"of this machine's addresses, and its links use --public-url, else 127.0.0.1")
	fs.StringVar(&sc.db, "db", "./askd.db", "database: a SQLite file, or a postgres:// URL for PostgreSQL")
	fs.BoolVar(&sc.create, "create", false, "SQLite: make a new database although askd served one at --db before (its marker, .NAME.id, is\n"+
		"there), or serve the file there although it is not the one served before; without it both are refused")
	fs.StringVar(&sc.role, "role", "all", "which side to serve: all, agent (MCP, hooks, agent API) or inbox (page, human API); agent and inbox need PostgreSQL")
	fs.DurationVar(&sc.cfg.QuestionTimeout, "question-timeout", sc.cfg.QuestionTimeout, "how long a question waits for an answer before it times out")
	fs.DurationVar(&sc.cfg.ApprovalGrace, "approval-grace", sc.cfg.ApprovalGrace, "how long request_approval waits before returning pending")
	fs.DurationVar(&sc.cfg.ApprovalTimeout, "approval-timeout", sc.cfg.ApprovalTimeout, "how long a permission prompt waits before it is denied")
	fs.IntVar(&sc.cfg.MaxPending, "max-pending", sc.cfg.MaxPending, "pending asks allowed per session")
	fs.IntVar(&sc.cfg.MaxPendingPerToken, "max-pending-per-token", sc.cfg.MaxPendingPerToken, "pending asks allowed per agent token, across all its sessions")
	fs.IntVar(&sc.cfg.MaxNewSessions, "max-new-sessions", sc.cfg.MaxNewSessions, "new sessions an agent token may start per minute")
	fs.StringVar(&sc.previewFormat, "preview-format", "markdown", "option previews are markdown or html")
	fs.StringVar(&sc.retain, "retain", "", "purge settled asks older than this, e.g. 90d or 720h (default: keep all)")
	fs.StringVar(&sc.publicURL, "public-url", "", "the inbox's URL as people reach it, for links (the sign-in link, notifications'); its host is served.\n"+
		"Default: http://ADDR, or http://127.0.0.1:PORT on all interfaces. Required with --notify-ntfy and\n"+
		"--notify-slack (their answer buttons open it on phones); askd warns when --notify-webhook links\n"+
		"would open only on this machine")
	fs.Var(&sc.allowedHosts, "allowed-hosts", "further host names requests may be addressed to (the Host header), e.g. askd.lan or *.example.com\n"+
		"(repeat, or comma-separate); loopback names, the --public-url host and the listen address are always served,\n"+
		"and any IP address when listening on all (0.0.0.0); others are refused, so DNS rebinding gets nowhere")
	fs.DurationVar(&sc.bodyTimeout, "body-timeout", 30*time.Second, "how long a request's headers and body (at most 1 MiB) may take to arrive;\n"+
		"waits and event streams, which read nothing more, are not cut by it")
	fs.StringVar(&sc.logLevel, "log-level", "info", "debug, info, warn or error: info has a line per request (the access log); warn keeps\n"+
		"only its failed authentications (a wrong token or sign-in code); debug adds the MCP library's lines")
	fs.StringVar(&sc.logFormat, "log-format", "text", "the log's form on stderr: text (key=value) or json (one object a line)")
	fs.StringVar(&sc.debugAddr, "debug-addr", "", "serve Go's pprof profiles on this address (loopback only), e.g. 127.0.0.1:6060")
	fs.StringVar(&sc.tell, "tell", "hook", "how agents of sessions that set no channel are told of answers:\n"+
		"hook (the Stop hook, check_ask or askd check), webhook=URL[,secret=S] (POST, signed with S),\n"+
		"command=NAME (a --tell-command template), or command=ARGV (your own program, a JSON array or\n"+
		"words split on spaces; defined as the template \"default\", which agents may name too)")
	fs.Var(&sc.tellCommands, "tell-command", "a command template agents may choose by name for their session's channel, NAME=ARGV\n"+
		"with ARGV a JSON array, e.g. resume='[\"claude\",\"-p\",\"--resume\",\"{session}\",\"{prompt}\"]' (repeat; in\n"+
		"ASKD_TELL_COMMAND separate several with spaces). Run without a shell; {session}, {prompt} and {id}\n"+
		"each fill within one argument; a value that would start an argument with \"-\" is not run.\n"+
		"The only programs command channels run: with none, command channels are unavailable")
	fs.Var(&sc.webhookAllow, "webhook-allow", "let agents' webhooks reach this host name or IP/CIDR although it is loopback, private,\n"+
		"link-local, multicast or otherwise not public (repeat, or comma-separate); a name matches the URL's\n"+
		"host, an IP or CIDR the address dialled. --notify-*, --before-tell and the --tell webhook are exempt")
	fs.StringVar(&sc.tellSecret, "tell-secret", "", "the secret of a --tell webhook, when not in its value (better: ASKD_TELL_SECRET)")
	fs.DurationVar(&sc.tellTimeout, "tell-timeout", 30*time.Second, "how long one attempt to tell (a webhook request, a command) may take; a claim's lease is twice this")
	fs.IntVar(&sc.cfg.TellAttempts, "tell-attempts", sc.cfg.TellAttempts, "attempts to tell (or notify) before giving up, with exponential backoff from 2s up to 10m")
	fs.StringVar(&sc.beforeTell, "before-tell", "", "a gate asked before a person's answer to an ask that will be told is accepted:\n"+
		"an http(s) URL (POSTed {action, by, ask, answer}; 2xx allows) or a command (gets that JSON on stdin;\n"+
		"exit 0 allows); a refusal answers 403 and the ask stays pending; an unreachable gate refuses")
	fs.Var(&sc.notifyWebhook, "notify-webhook", "POST JSON about each new ask to this URL (repeat, or comma-separate)")
	fs.Var(&sc.notifySlack, "notify-slack", "post each new ask to this Slack incoming webhook URL (repeat, or comma-separate)")
	fs.Var(&sc.notifyNtfy, "notify-ntfy", "publish each new ask to this ntfy topic URL (repeat, or comma-separate)")
	fs.BoolVar(&sc.notifyPush, "notify-push", false, "Web Push: people who allow notifications in the inbox (installed, or open in a browser) get each\n"+
		"new ask on that device, with up to two answer buttons answering as them. Needs --public-url (https, or\n"+
		"localhost); push services' addresses are held to --webhook-allow's guard like agents' webhooks")
	fs.StringVar(&sc.notifyAs, "notify-as", "", "the human token that answer buttons in ntfy and Slack notifications answer as: every such answer\n"+
		"is recorded as this person's (\"via link\", \"via Slack (user ...)\"). Default: the only human token; with several, required")
	fs.StringVar(&sc.slackSecret, "slack-signing-secret", "", "a Slack app's signing secret: POST /slack/interactions then takes its buttons' clicks, and\n"+
		"--notify-slack buttons answer in place instead of opening a confirm page (better: ASKD_SLACK_SIGNING_SECRET)")
	flagsUsage := fs.Usage
	fs.Usage = func() {
		flagsUsage()
		fmt.Fprint(fs.Output(), serveRules)
	}
	if err := parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Sprintf("serve: unexpected argument %q", fs.Arg(0)))
	}
	switch sc.role {
	case httpapi.RoleAll, httpapi.RoleAgent, httpapi.RoleInbox:
	default:
		return usageError(fmt.Sprintf("--role: %q is not all, agent or inbox", sc.role))
	}
	if sc.role != httpapi.RoleAll && !isPostgres(sc.db) {
		return usageError(fmt.Sprintf("--role %s needs PostgreSQL (--db postgres://...): on SQLite one process serves both sides, so run --role all", sc.role))
	}
	switch sc.previewFormat {
	case "markdown":
	case "html":
		sc.cfg.PreviewHTML = true
	default:
		return usageError(fmt.Sprintf("--preview-format: %q is not markdown or html", sc.previewFormat))
	}
	if sc.retain != "" {
		d, err := askd.ParseDays(sc.retain) // bounded: days that would wrap past the longest Duration are refused
		if err != nil || d <= 0 {
			return usageError(fmt.Sprintf("--retain: %q is not a duration such as 90d or 720h", sc.retain))
		}
		sc.cfg.Retain = d
	}
	if err := hostsConfig(&sc); err != nil {
		return err
	}
	if sc.bodyTimeout <= 0 {
		return usageError("--body-timeout: must be positive")
	}
	if err := tellConfig(&sc); err != nil {
		return err
	}
	if err := linksConfig(&sc); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(sc.logLevel)); err != nil {
		return usageError(fmt.Sprintf("--log-level: %q is not debug, info, warn or error", sc.logLevel))
	}
	log, err := newLogger(e.stderr, sc.logFormat, level)
	if err != nil {
		return err
	}
	sc.cfg.Logger = log
	return serve(ctx, e, sc, log)
}

// newLogger is askd serve's logger: text or json lines on w from level up.
func newLogger(w io.Writer, format string, level slog.Level) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: level}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usageError(fmt.Sprintf("--log-format: %q is not text or json", format))
}

// serveRules follows askd serve's flags in its help: the rules of the HTTP
// edge that no flag sets.
const serveRules = `
Rules at the door (see README, "The HTTP edge"):
  A request's Host must be a loopback name, the listen address, the --public-url
  host or an --allowed-hosts name (any IP when listening on all); others get 403.
  Failed authentication is throttled per client address: 10 wrong tokens, then one
  every 6 s; past that 429 with Retry-After, except for tokens already in use.
  A request refused for its token or role is answered without reading its body.
  askd token revoke ends the token's event streams and waits within 5 s.
`

func serve(ctx context.Context, e *env, sc serveConfig, log *slog.Logger) error {
	store, check, err := openServed(ctx, sc.db, sc.create)
	if err != nil {
		return err
	}
	defer store.Close()

	ln, err := net.Listen("tcp", sc.addr)
	if err != nil {
		return err
	}
	// Tokens are made once the address is ours: a first start that cannot
	// listen must not make tokens it never shows.
	human, agent, err := app.Bootstrap(ctx, store)
	if err == nil && sc.answerButtons() {
		sc.cfg.NotifyAs, err = app.NotifyHuman(ctx, store, sc.notifyAs)
		if askd.ErrorCode(err) == askd.EINVALID || askd.ErrorCode(err) == askd.ENOTFOUND {
			err = usageError("--notify-as: " + askd.ErrorMessage(err) + " (answer buttons of --notify-ntfy and --notify-slack answer as this person)")
		}
	}
	if err != nil {
		ln.Close()
		return err
	}

	svc := app.New(store, sc.cfg)
	if svc.PushOn() {
		// Made at first start, so that every process of a database signs
		// with the same key from the start.
		if _, err := svc.VAPIDKeys(ctx); err != nil {
			ln.Close()
			return err
		}
	}
	// Asks whose deadline passed while askd was down time out before
	// anything is served (and are told as usual), not at the first sweep.
	if err := svc.ExpireDue(ctx); err != nil {
		log.Warn("expire asks past their deadline at start", "err", err)
	}
	if check != nil {
		log.Info("checking the database file in the background (PRAGMA quick_check); /readyz fails until it passes")
		svc.CheckFile(check)
	}
	// The service's loop and the tell worker run on runCtx; both are stopped
	// and waited for before the store closes (deferred above): a read
	// starting while SQLite closes its last connection waits out busy_timeout.
	runCtx, stopRun := context.WithCancel(context.Background())
	var running sync.WaitGroup
	defer func() { stopRun(); running.Wait() }()
	running.Go(func() { svc.Run(runCtx) })

	// Links (sign-in, notifications) use the public URL, else the listen
	// address, loopback when that is all interfaces (see serve_addrs.go).
	local, others := listenURLs(ln.Addr(), interfaceAddrs())
	base := sc.publicURL
	if base == "" {
		base = local
	}
	base = strings.TrimRight(base, "/")

	// Every process runs a worker, whatever its role: claims are leased, so
	// several processes on one PostgreSQL never send one delivery twice, and
	// the process that settled an ask tells it at once. Answer links use
	// only --public-url (linksConfig requires it for notifiers with buttons).
	worker := tell.New(svc, tell.Options{
		Timeout: sc.tellTimeout, PublicURL: base, UserAgent: "askd/" + version, Logger: log,
		LinkBase: strings.TrimRight(sc.publicURL, "/"), SlackInteractive: sc.slackSecret != "",
	})
	running.Go(func() { worker.Run(runCtx) })

	printListening(e.stdout, sc.role, sc.db, local, ln.Addr(), others)
	if base != local {
		fmt.Fprintf(e.stdout, "People reach it at %s\n", base)
	}
	if linksOnlyHere(sc, ln.Addr()) {
		fmt.Fprintf(e.stdout, "Warning: notifications (--notify-webhook) link to %s, which people on other machines cannot open;\n"+
			"         set --public-url to the inbox's URL as they reach it.\n", base)
		log.Warn("notification links point at an address only this machine can open: set --public-url", "links", base)
	}
	if svc.PushOn() {
		fmt.Fprintf(e.stdout, "Web Push is on (--notify-push): allow notifications in the inbox at %s.\n", base)
	}
	if sc.cfg.NotifyAs != "" {
		fmt.Fprintf(e.stdout, "Answer buttons in notifications answer as %s (--notify-as).\n", sc.cfg.NotifyAs)
	}
	if human != "" {
		fmt.Fprintf(e.stdout, "\nFirst start: created two tokens. They are shown only this once.\n")
		fmt.Fprintf(e.stdout, "  human token (answers in the inbox): %s\n", human)
		fmt.Fprintf(e.stdout, "  agent token (asks):                 %s\n", agent)
		code, _, err := app.CreateSignInCode(ctx, store, "", time.Now()) // the one human token just made
		if err != nil {
			ln.Close()
			return err
		}
		fmt.Fprintf(e.stdout, "\nOpen the inbox: %s\n", signInLink(base, code))
		fmt.Fprintf(e.stdout, "                (works once, for %d minutes; later: %s, or paste the human token)\n",
			int(app.SignInCodeTTL/time.Minute), signInLinkCommand(sc.db, base))
		if base == local && len(others) > 0 {
			fmt.Fprintf(e.stdout, "                (from another machine: one of the addresses above in place of %s)\n", local)
		}
		fmt.Fprintf(e.stdout, "Wire an agent:  export ASKD_URL=%s ASKD_TOKEN=%s; askd install claude\n", base, agent)
		fmt.Fprintf(e.stdout, "Answer in a terminal: export ASKD_HUMAN_TOKEN=%s; askd list\n", human)
		fmt.Fprintf(e.stdout, "(askd not found? make install, or go install ./cmd/askd, puts it on PATH)\n\n")
	}

	mcp := mcpserver.Handler(svc, mcpserver.Options{Version: version, Logger: log})
	api := httpapi.New(svc, httpapi.Options{
		Role:   sc.role,
		MCP:    mcp,
		Inbox:  web.New(svc),
		Slack:  slackInteractions(svc, sc, base, log),
		Ready:  readiness(svc, store),
		Hosts:  sc.hosts,
		Listen: ln.Addr().String(),
		// Behind a TLS proxy askd itself sees plain HTTP: the public URL
		// says how people reach it.
		SecureCookies: strings.HasPrefix(base, "https://"),
		Logger:        log,
	})
	srv := &http.Server{
		Handler:           api,
		ReadHeaderTimeout: min(10*time.Second, sc.bodyTimeout),
		// A request's headers and body (at most 1 MiB) must arrive within
		// this, so a slow body holds a connection no longer. It does not cut
		// waits or streams: net/http lifts the read deadline once the body is
		// read (a GET has none), and parked MCP calls lift it themselves.
		ReadTimeout: sc.bodyTimeout,
		IdleTimeout: 2 * time.Minute,
		// No WriteTimeout: waits and event streams last as long as they need;
		// askd bounds each itself.
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if sc.debugAddr != "" {
		if err := serveDebug(sc.debugAddr, log); err != nil {
			ln.Close()
			return err
		}
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: answering waiting calls with where to find their answers")
	svc.Close() // waits end with app.ShutdownError, worded by each front end
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	// Waiting MCP calls left net/http (each is parked on its connection), so
	// Shutdown does not see them: wait for their shutdown answers too.
	if err := mcp.Drain(sctx); err != nil {
		log.Warn("waiting MCP calls not all answered before exit", "err", err)
	}
	return nil
}

// readiness is /readyz's check: the service can work (app.Service.Ready: the
// store answers, writes work, the file is the one opened and not damaged),
// and where the store has a change listener, it is connected.
func readiness(svc *app.Service, store askd.Store) func(r *http.Request) error {
	return func(r *http.Request) error {
		if err := svc.Ready(r.Context()); err != nil {
			return fmt.Errorf("database: %w", err)
		}
		if l, ok := store.(interface{ Listening() bool }); ok && !l.Listening() {
			return errors.New("database change listener is reconnecting")
		}
		return nil
	}
}

func describeDB(db string) string {
	if isPostgres(db) {
		return "PostgreSQL"
	}
	return "SQLite " + db
}

// serveDebug serves net/http/pprof on a separate loopback listener, for the
// profiles behind docs/benchmarks.md.
func serveDebug(addr string, log *slog.Logger) error {
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return usageError(fmt.Sprintf("--debug-addr: %q is not a loopback address", addr))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go func() {
		if err := http.Serve(ln, mux); err != nil {
			log.Warn("debug listener", "err", err)
		}
	}()
	return nil
}

// hostsConfig checks --public-url and --allowed-hosts and collects the Host
// names served besides loopback ones.
func hostsConfig(sc *serveConfig) error {
	if sc.publicURL != "" {
		u, err := url.Parse(sc.publicURL)
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return usageError(fmt.Sprintf("--public-url: %q is not an http(s) URL such as https://askd.example.com", sc.publicURL))
		}
		sc.hosts = append(sc.hosts, u.Hostname())
	}
	for _, v := range sc.allowedHosts {
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h == "" {
				continue
			}
			if err := httpapi.ValidHost(h); err != nil {
				return usageError("--allowed-hosts: " + err.Error())
			}
			sc.hosts = append(sc.hosts, h)
		}
	}
	return nil
}

// tellConfig reads the flags of telling and notifying into sc.cfg.
func tellConfig(sc *serveConfig) error {
	if err := commandConfig(sc); err != nil {
		return err
	}
	allow, err := tell.ParseWebhookAllow(sc.webhookAllow)
	if err != nil {
		return usageError("--webhook-allow: " + err.Error())
	}
	sc.cfg.WebhookAllow = allow
	if sc.tellTimeout <= 0 {
		return usageError("--tell-timeout: must be positive")
	}
	if sc.cfg.TellAttempts <= 0 {
		return usageError("--tell-attempts: must be at least 1")
	}
	if sc.beforeTell != "" {
		gate, err := tell.NewGate(sc.beforeTell, 10*time.Second)
		if err != nil {
			return usageError(err.Error())
		}
		sc.cfg.BeforeTell = gate
	}
	for _, n := range []struct {
		flag   string
		t      askd.ChannelType
		values []string
	}{
		{"--notify-webhook", askd.NotifyWebhook, sc.notifyWebhook},
		{"--notify-slack", askd.NotifySlack, sc.notifySlack},
		{"--notify-ntfy", askd.NotifyNtfy, sc.notifyNtfy},
	} {
		ns, err := tell.ParseNotifiers(n.t, n.values)
		if err != nil {
			return usageError(n.flag + ": " + err.Error())
		}
		sc.cfg.Notifiers = append(sc.cfg.Notifiers, ns...)
	}
	if sc.notifyPush {
		sc.cfg.Notifiers = append(sc.cfg.Notifiers, askd.Channel{Type: askd.NotifyPush})
	}
	return nil
}

// linksConfig checks the flags of answer links: notifiers with answer
// buttons (ntfy, Slack) need --public-url, since a button's link to
// loopback opens nothing on a phone; --notify-as names a token (checked
// against the database at start, see serve).
func linksConfig(sc *serveConfig) error {
	if sc.publicURL != "" {
		return nil
	}
	if sc.notifyPush {
		return usageError("--notify-push: push notifications carry the inbox's address and answer buttons, which need --public-url:\n" +
			"the inbox's URL as people's phones reach it (https behind a TLS proxy, or http://localhost:PORT on this machine)")
	}
	for _, n := range sc.cfg.Notifiers {
		if n.Type == askd.NotifyNtfy || n.Type == askd.NotifySlack {
			return usageError(fmt.Sprintf("--notify-%s: its notifications carry answer buttons, which need --public-url: the inbox's URL as people's phones reach it\n"+
				"(without it they would link to this machine's loopback address, which opens nothing elsewhere)", n.Type))
		}
	}
	return nil
}

// answerButtons reports whether notifications carry answer buttons, and so
// need a --notify-as human: an ntfy or Slack notifier is configured.
func (sc *serveConfig) answerButtons() bool {
	for _, n := range sc.cfg.Notifiers {
		if n.Type == askd.NotifyNtfy || n.Type == askd.NotifySlack {
			return true
		}
	}
	return sc.notifyAs != ""
}

// slackInteractions is the POST /slack/interactions handler, nil without a
// signing secret.
func slackInteractions(svc *app.Service, sc serveConfig, base string, log *slog.Logger) http.Handler {
	if sc.slackSecret == "" {
		return nil
	}
	return tell.NewSlackInteractions(svc, tell.SlackOptions{SigningSecret: sc.slackSecret, PublicURL: base, Logger: log})
}

// commandConfig reads --tell-command and --tell into sc.cfg: the templates
// by name, and the default channel, whose command=ARGV form defines the
// template tell.DefaultTemplate.
func commandConfig(sc *serveConfig) error {
	templates := map[string][]string{}
	for _, v := range sc.tellCommands {
		ts, err := tell.ParseTemplates(v)
		if err != nil {
			return usageError("--tell-command: " + err.Error())
		}
		for _, t := range ts {
			if _, dup := templates[t.Name]; dup {
				return usageError(fmt.Sprintf("--tell-command: %s is defined twice", t.Name))
			}
			templates[t.Name] = t.Argv
		}
	}
	ch, argv, err := tell.ParseChannel(sc.tell, sc.tellSecret)
	if err != nil {
		return usageError("--tell: " + err.Error())
	}
	if argv != nil {
		if _, dup := templates[ch.Name]; dup {
			return usageError(fmt.Sprintf("--tell: command=ARGV defines the template %q, which --tell-command defines too; give --tell command=%s", ch.Name, ch.Name))
		}
		templates[ch.Name] = argv
	}
	if _, ok := templates[ch.Name]; ch.Type == askd.ChannelCommand && !ok {
		names := slices.Sorted(maps.Keys(templates))
		if len(names) == 0 {
			return usageError(fmt.Sprintf("--tell: command=%s names no template: define it with --tell-command %s='[\"program\",\"{prompt}\"]', or give the program itself as a JSON array, command='[\"%s\"]'", ch.Name, ch.Name, ch.Name))
		}
		return usageError(fmt.Sprintf("--tell: command=%s names no template; defined: %s", ch.Name, strings.Join(names, ", ")))
	}
	sc.cfg.Tell = ch
	if len(templates) > 0 {
		sc.cfg.TellCommands = templates
	}
	return nil
}
