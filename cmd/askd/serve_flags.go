package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
)

// serveConfig is askd serve's flags.
type serveConfig struct {
	addr, db, role, previewFormat, retain, publicURL, debugAddr string
	create                                                      bool // --create
	logLevel, logFormat                                         string
	cfg                                                         app.Config

	tell, tellSecret, beforeTell           string
	notifyAs, slackSecret                  string
	notifyWebhookSecret                    string
	tellCommands, webhookAllow             listFlag
	notifyWebhook, notifySlack, notifyNtfy listFlag
	allowedHosts                           listFlag
	hosts                                  []string // the Host names served besides loopback ones
	tellTimeout, bodyTimeout               time.Duration
	notifyPush                             bool
	signIn                                 signInConfig // serve_signin.go
	mail                                   mailConfig   // serve_mail.go
}

// listFlag collects a repeatable flag's values (each may also be
// comma-separated).
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// cmdServe is askd serve: its flags read and checked (serve_config.go), then
// serve runs until ctx is done.
func cmdServe(ctx context.Context, e *cli.Env, args []string) error {
	sc := serveConfig{cfg: app.DefaultConfig()}
	fs := serveFlags(e, &sc)
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.UsageError(fmt.Sprintf("serve: unexpected argument %q", fs.Arg(0)))
	}
	if err := sc.check(); err != nil {
		return err
	}
	log, err := serveLogger(e.Stderr, sc)
	if err != nil {
		return err
	}
	sc.cfg.Logger = log
	return serve(ctx, e, sc, log)
}

// serveFlags is askd serve's FlagSet, filling sc. Its help lists the flags
// by name (printDefaults sorts them), then serveRules.
func serveFlags(e *cli.Env, sc *serveConfig) *flag.FlagSet {
	fs := cli.Flags(e, "serve", "[flags]")
	serverFlags(fs, sc)
	askFlags(fs, sc)
	tellFlags(fs, sc)
	notifyFlags(fs, sc)
	signInFlags(fs, &sc.signIn)
	mailFlags(fs, &sc.mail)
	flagsUsage := fs.Usage
	fs.Usage = func() {
		flagsUsage()
		fmt.Fprint(fs.Output(), serveRules)
	}
	return fs
}

// serverFlags are the flags of the server itself: where it listens, its
// database, its side, its HTTP edge and its log.
func serverFlags(fs *flag.FlagSet, sc *serveConfig) {
	fs.StringVar(&sc.addr, "addr", "127.0.0.1:7777", "address to listen on; on all interfaces (:7777, 0.0.0.0:7777) askd prints a URL for each\n"+
		"of this machine's addresses, and its links use --public-url, else 127.0.0.1")
	fs.StringVar(&sc.db, "db", "./askd.db", "database: a SQLite file, or a postgres:// URL for PostgreSQL")
	fs.BoolVar(&sc.create, "create", false, "SQLite: make a new database although askd served one at --db before (its marker, .NAME.id, is\n"+
		"there), or serve the file there although it is not the one served before; without it both are refused")
	fs.StringVar(&sc.role, "role", "all", "which side to serve: all, agent (MCP, hooks, agent API) or inbox (page, human API); agent and inbox need PostgreSQL")
	fs.StringVar(&sc.publicURL, "public-url", "", "the inbox's URL as people reach it, for links (the sign-in link, notifications'); its host is served.\n"+
		"Default: http://ADDR, or http://127.0.0.1:PORT on all interfaces. Required with --notify-ntfy,\n"+
		"--notify-slack and --notify-smtp (their answer links open it on phones); askd warns when --notify-webhook links\n"+
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
}

// askFlags are the flags of asks: how long they wait, how many may pend,
// how they show, how long they are kept.
func askFlags(fs *flag.FlagSet, sc *serveConfig) {
	fs.DurationVar(&sc.cfg.QuestionTimeout, "question-timeout", sc.cfg.QuestionTimeout, "how long a question waits for an answer before it times out")
	fs.DurationVar(&sc.cfg.ElicitationTimeout, "elicitation-timeout", 0, "how long an MCP server's question (a form ask, through Claude Code's Elicitation hook) waits\n"+
		"before it is cancelled (default: --question-timeout)")
	fs.DurationVar(&sc.cfg.ApprovalGrace, "approval-grace", sc.cfg.ApprovalGrace, "how long request_approval waits before returning pending")
	fs.DurationVar(&sc.cfg.ApprovalTimeout, "approval-timeout", sc.cfg.ApprovalTimeout, "how long a permission prompt waits before it is denied")
	fs.IntVar(&sc.cfg.MaxPending, "max-pending", sc.cfg.MaxPending, "pending asks allowed per session")
	fs.IntVar(&sc.cfg.MaxPendingPerToken, "max-pending-per-token", sc.cfg.MaxPendingPerToken, "pending asks allowed per agent token, across all its sessions")
	fs.IntVar(&sc.cfg.MaxNewSessions, "max-new-sessions", sc.cfg.MaxNewSessions, "new sessions an agent token may start per minute")
	fs.StringVar(&sc.previewFormat, "preview-format", "markdown", "option previews are markdown or html")
	fs.StringVar(&sc.retain, "retain", "", "purge settled asks older than this, e.g. 90d or 720h (default: keep all)")
}

// tellFlags are the flags of telling agents of answers.
func tellFlags(fs *flag.FlagSet, sc *serveConfig) {
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
}

// notifyFlags are the flags of notifying people of new asks.
func notifyFlags(fs *flag.FlagSet, sc *serveConfig) {
	fs.Var(&sc.notifyWebhook, "notify-webhook", "POST JSON about each new ask to this URL (repeat, or comma-separate)")
	fs.StringVar(&sc.notifyWebhookSecret, "notify-webhook-secret", "", "sign --notify-webhook's notifications with this secret, as tell webhooks are: Askd-Signature and\n"+
		"the Standard Webhooks headers webhook-id, webhook-timestamp, webhook-signature (better: ASKD_NOTIFY_WEBHOOK_SECRET)")
	fs.Var(&sc.notifySlack, "notify-slack", "post each new ask to this Slack incoming webhook URL (repeat, or comma-separate)")
	fs.Var(&sc.notifyNtfy, "notify-ntfy", "publish each new ask to this ntfy topic URL (repeat, or comma-separate)")
	fs.BoolVar(&sc.notifyPush, "notify-push", false, "Web Push: people who allow notifications in the inbox (installed, or open in a browser) get each\n"+
		"new ask on that device, with up to two answer buttons answering as them. Needs --public-url (https, or\n"+
		"localhost); push services' addresses are held to --webhook-allow's guard like agents' webhooks")
	fs.StringVar(&sc.notifyAs, "notify-as", "", "the human token that answer buttons in ntfy and Slack notifications answer as: every such answer\n"+
		"is recorded as this person's (\"via link\", \"via Slack (user ...)\"). Default: the only human token; with several, required")
	fs.StringVar(&sc.slackSecret, "slack-signing-secret", "", "a Slack app's signing secret: POST /slack/interactions then takes its buttons' clicks, and\n"+
		"--notify-slack buttons answer in place instead of opening a confirm page (better: ASKD_SLACK_SIGNING_SECRET)")
}

// serveLogger is askd serve's logger, as --log-level and --log-format say.
func serveLogger(w io.Writer, sc serveConfig) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(sc.logLevel)); err != nil {
		return nil, cli.UsageError(fmt.Sprintf("--log-level: %q is not debug, info, warn or error", sc.logLevel))
	}
	return newLogger(w, sc.logFormat, level)
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
	return nil, cli.UsageError(fmt.Sprintf("--log-format: %q is not text or json", format))
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
