package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"sync"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/admincmd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/httpapi"
	"github.com/askd-dev/askd/internal/mcpserver"
	"github.com/askd-dev/askd/internal/openstore"
	"github.com/askd-dev/askd/internal/tell"
	"github.com/askd-dev/askd/internal/web"
)

// serve runs askd serve with checked flags until ctx is done (main cancels
// it on SIGINT or SIGTERM), then shuts down. Each step is one method of
// server, in the order it happens; close undoes what was built.
func serve(ctx context.Context, e *cli.Env, sc serveConfig, log *slog.Logger) error {
	sd, err := newSystemd(e.Getenv, log)
	if err != nil {
		return err
	}
	s := &server{sc: sc, log: log, out: e.Stdout, sd: sd}
	defer s.close()
	if err := s.openStore(ctx); err != nil {
		return err
	}
	if err := s.listen(); err != nil {
		return err
	}
	// Tokens are made once the address is ours: a first start that cannot
	// listen must not make tokens it never shows.
	human, agent, err := app.Bootstrap(ctx, s.store)
	if err != nil {
		return err
	}
	if err := s.notifyAs(ctx); err != nil {
		return err
	}
	if err := s.openService(ctx); err != nil {
		return err
	}
	s.startJobs()
	s.announce()
	if human != "" {
		if err := s.announceFirstStart(ctx, human, agent); err != nil {
			return err
		}
	}
	s.newHTTPServer()
	if sc.debugAddr != "" {
		if err := serveDebug(sc.debugAddr, log); err != nil {
			return err
		}
	}
	return s.run(ctx)
}

// server is what askd serve builds, step by step (see serve).
type server struct {
	sc  serveConfig
	log *slog.Logger
	out io.Writer // what the operator reads: where askd listens, first start's tokens

	store askd.Store
	check func() error // the quick_check of a large SQLite file, for the background; else nil
	ln    net.Listener
	// local is the listen address's URL (loopback when listening on all
	// interfaces), others the URLs other machines may open then (see
	// serve_addrs.go); base is the links' base: --public-url, else local.
	local, base string
	others      []string

	svc *app.Service
	// stopJobs stops the service's loop and the tell worker, and jobs waits
	// for them.
	stopJobs context.CancelFunc
	jobs     sync.WaitGroup

	mcp *mcpserver.HTTPHandler
	srv *http.Server
	sd  *systemd // the notify protocol, under systemd (serve_systemd.go)
}

// close undoes what serve built, in reverse: the listener (if serving did
// not close it), the background jobs, stopped and waited for before the
// store closes (a read starting while SQLite closes its last connection
// waits out busy_timeout), then the store.
func (s *server) close() {
	if s.ln != nil {
		s.ln.Close()
	}
	if s.stopJobs != nil {
		s.stopJobs()
		s.jobs.Wait()
	}
	if s.store != nil {
		s.store.Close()
	}
}

// openStore opens the database askd serves (openstore.Served: on SQLite,
// refusing a file it must not serve).
func (s *server) openStore(ctx context.Context) (err error) {
	s.store, s.check, err = openstore.Served(ctx, s.sc.db, s.sc.create)
	return err
}

// listen takes the listen address and works out the URLs people open.
func (s *server) listen() error {
	ln, err := net.Listen("tcp", s.sc.addr)
	if err != nil {
		return err
	}
	s.ln = ln
	// Links (sign-in, notifications) use the public URL, else the listen
	// address, loopback when that is all interfaces (see serve_addrs.go).
	s.local, s.others = listenURLs(ln.Addr(), interfaceAddrs())
	s.base = s.sc.publicURL
	if s.base == "" {
		s.base = s.local
	}
	s.base = strings.TrimRight(s.base, "/")
	return nil
}

// notifyAs finds the human that notifications' answer buttons answer as
// (--notify-as), when notifications carry them.
func (s *server) notifyAs(ctx context.Context) (err error) {
	if !s.sc.answerButtons() {
		return nil
	}
	s.sc.cfg.NotifyAs, err = app.NotifyHuman(ctx, s.store, s.sc.notifyAs)
	if askd.ErrorCode(err) == askd.EINVALID || askd.ErrorCode(err) == askd.ENOTFOUND {
		err = cli.UsageError("--notify-as: " + askd.ErrorMessage(err) + " (answer buttons of --notify-ntfy and --notify-slack answer as this person)")
	}
	return err
}

// openService builds the service over the store and readies it to serve:
// Web Push keys, asks past their deadline, the file check.
func (s *server) openService(ctx context.Context) error {
	if err := s.sc.signIn.provider(ctx, s.base, s.log); err != nil {
		return err
	}
	s.svc = app.New(s.store, s.sc.cfg)
	if s.svc.PushOn() {
		// Made at first start, so that every process of a database signs
		// with the same key from the start.
		if _, err := s.svc.VAPIDKeys(ctx); err != nil {
			return err
		}
	}
	// Asks whose deadline passed while askd was down time out before
	// anything is served (and are told as usual), not at the first sweep.
	if err := s.svc.ExpireDue(ctx); err != nil {
		s.log.Warn("expire asks past their deadline at start", "err", err)
	}
	if s.check != nil {
		s.log.Info("checking the database file in the background (PRAGMA quick_check); /readyz fails until it passes")
		s.svc.CheckFile(s.check)
	}
	return nil
}

// startJobs starts the background jobs: the service's loop and the tell
// worker, which tells agents of answers and notifies people of new asks.
// Both run until close stops them.
func (s *server) startJobs() {
	runCtx, stop := context.WithCancel(context.Background())
	s.stopJobs = stop
	s.jobs.Go(func() { s.svc.Run(runCtx) })
	// Every process runs a worker, whatever its role: claims are leased, so
	// several processes on one PostgreSQL never send one delivery twice, and
	// the process that settled an ask tells it at once. Answer links use
	// only --public-url (linksConfig requires it for notifiers with buttons).
	worker := tell.New(s.svc, tell.Options{
		Timeout: s.sc.tellTimeout, PublicURL: s.base, UserAgent: "askd/" + version, Logger: s.log,
		LinkBase: strings.TrimRight(s.sc.publicURL, "/"), SlackInteractive: s.sc.slackSecret != "",
		Mail: s.sc.mail.mail,
	})
	s.jobs.Go(func() { worker.Run(runCtx) })
}

// announce tells the operator where askd listens and what it will do that
// they may not expect.
func (s *server) announce() {
	printListening(s.out, s.sc.role, s.sc.db, s.local, s.ln.Addr(), s.others)
	if s.base != s.local {
		fmt.Fprintf(s.out, "People reach it at %s\n", s.base)
	}
	if linksOnlyHere(s.sc, s.ln.Addr()) {
		fmt.Fprintf(s.out, "Warning: notifications (--notify-webhook) link to %s, which people on other machines cannot open;\n"+
			"         set --public-url to the inbox's URL as they reach it.\n", s.base)
		s.log.Warn("notification links point at an address only this machine can open: set --public-url", "links", s.base)
	}
	if s.svc.PushOn() {
		fmt.Fprintf(s.out, "Web Push is on (--notify-push): allow notifications in the inbox at %s.\n", s.base)
	}
	if m := s.sc.mail.mail; m != nil {
		fmt.Fprintf(s.out, "Email is on: people with an address are mailed from %s through %s.\n", m.From, m.Server)
	}
	if s.sc.cfg.NotifyAs != "" {
		fmt.Fprintf(s.out, "Answer buttons in notifications answer as %s (--notify-as).\n", s.sc.cfg.NotifyAs)
	}
	if o := s.sc.cfg.OIDC; o != nil {
		fmt.Fprintf(s.out, "People sign in with %s (%s); its redirect URL is %s/auth/oidc/callback.\n", o.Name, o.Issuer, s.base)
	}
}

// announceFirstStart shows the tokens a first start made, once, with a
// sign-in link and the lines that put them to use.
func (s *server) announceFirstStart(ctx context.Context, human, agent string) error {
	w := s.out
	fmt.Fprintf(w, "\nFirst start: created two tokens. They are shown only this once.\n")
	fmt.Fprintf(w, "  human token (answers in the inbox): %s\n", human)
	fmt.Fprintf(w, "  agent token (asks):                 %s\n", agent)
	code, _, err := s.svc.CreateSignInCode(ctx, app.Itself, "") // the one human token just made
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nOpen the inbox: %s\n", admincmd.SignInURL(s.base, code))
	fmt.Fprintf(w, "                (works once, for %d minutes; later: %s, or paste the human token)\n",
		int(app.SignInCodeTTL/time.Minute), admincmd.SignInLinkCommand(s.sc.db, s.base))
	if s.base == s.local && len(s.others) > 0 {
		fmt.Fprintf(w, "                (from another machine: one of the addresses above in place of %s)\n", s.local)
	}
	fmt.Fprintf(w, "Wire an agent:  export ASKD_URL=%s ASKD_TOKEN=%s; askd install claude\n", s.base, agent)
	fmt.Fprintf(w, "Answer in a terminal: export ASKD_HUMAN_TOKEN=%s; askd list\n", human)
	fmt.Fprintf(w, "(askd not found? make install, or go install ./cmd/askd, puts it on PATH)\n\n")
	return nil
}

// newHTTPServer builds the HTTP server: MCP, the API, the inbox and
// Slack's buttons behind httpapi's edge, with the timeouts of the door.
func (s *server) newHTTPServer() {
	s.mcp = mcpserver.Handler(s.svc, mcpserver.Options{Version: version, Logger: s.log})
	api := httpapi.New(s.svc, httpapi.Options{
		Role:      s.sc.role,
		MCP:       s.mcp,
		Inbox:     web.New(s.svc),
		Slack:     slackInteractions(s.svc, s.sc, s.base, s.log),
		Ready:     readiness(s.svc, s.store),
		Hosts:     s.sc.hosts,
		Listen:    s.ln.Addr().String(),
		AuthProxy: s.sc.signIn.proxy,
		// Behind a TLS proxy askd itself sees plain HTTP: the public URL
		// says how people reach it.
		SecureCookies: strings.HasPrefix(s.base, "https://"),
		Logger:        s.log,
	})
	s.srv = &http.Server{
		Handler:           api,
		ReadHeaderTimeout: min(10*time.Second, s.sc.bodyTimeout),
		// A request's headers and body (at most 1 MiB) must arrive within
		// this, so a slow body holds a connection no longer. It does not cut
		// waits or streams: net/http lifts the read deadline once the body is
		// read (a GET has none), and parked MCP calls lift it themselves.
		ReadTimeout: s.sc.bodyTimeout,
		IdleTimeout: 2 * time.Minute,
		// No WriteTimeout: waits and event streams last as long as they need;
		// askd bounds each itself.
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// run serves HTTP until serving fails (its error returned) or ctx is done
// (then shutdown). Under systemd it says when it is ready and when it
// stops, and keeps the watchdog fed meanwhile (serve_systemd.go).
func (s *server) run(ctx context.Context) error {
	s.ln = s.sd.listener(s.ln)
	done := make(chan error, 1)
	go func() { done <- s.srv.Serve(s.ln) }()
	s.sd.start(strings.TrimPrefix(s.local, "http://"), s.base, s.svc.Ticked)
	select {
	case err := <-done:
		s.sd.stopping()
		return err
	case <-ctx.Done():
	}
	s.sd.stopping()
	return s.shutdown()
}

// shutdown answers waiting calls with where to find their answers, then
// stops the HTTP server, waiting up to 10 s for requests and parked MCP
// calls to finish.
func (s *server) shutdown() error {
	s.log.Info("shutting down: answering waiting calls with where to find their answers")
	s.svc.Close() // waits end with app.ShutdownError, worded by each front end
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	// Waiting MCP calls left net/http (each is parked on its connection), so
	// Shutdown does not see them: wait for their shutdown answers too.
	if err := s.mcp.Drain(sctx); err != nil {
		s.log.Warn("waiting MCP calls not all answered before exit", "err", err)
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

// slackInteractions is the POST /slack/interactions handler, nil without a
// signing secret.
func slackInteractions(svc *app.Service, sc serveConfig, base string, log *slog.Logger) http.Handler {
	if sc.slackSecret == "" {
		return nil
	}
	return tell.NewSlackInteractions(svc, tell.SlackOptions{SigningSecret: sc.slackSecret, PublicURL: base, Logger: log})
}

// serveDebug serves net/http/pprof on a separate loopback listener, for the
// profiles behind docs/benchmarks.md.
func serveDebug(addr string, log *slog.Logger) error {
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return cli.UsageError(fmt.Sprintf("--debug-addr: %q is not a loopback address", addr))
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
