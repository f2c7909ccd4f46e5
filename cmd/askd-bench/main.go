// Command askd-bench is askd's load tool: it measures a running askd over
// loopback (latency, waiters, throughput, SSE fan-out) for the figures in
// docs/benchmarks.md, and `askd-bench seed` fills a database with settled
// and pending asks for the figures taken on a team's months of history. scripts/bench-sqlite.sh and scripts/bench-postgres.sh
// start the servers under test and run it; it is not part of askd's command
// table, since it is for askd's developers, not for the people askd serves.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/askd-dev/askd"
)

// version names the load tool to the server (its MCP client's version); set
// it with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return
	}
	fmt.Fprintln(os.Stderr, "askd-bench:", err)
	var u usageError
	if errors.As(err, &u) {
		os.Exit(2)
	}
	os.Exit(1)
}

// run is askd-bench with args: the flags read, then the scenarios run, their
// figures printed on stdout.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "seed" {
		return runSeed(ctx, args[1:], stdout)
	}
	bc, err := parseFlags(args, stdout)
	if err != nil {
		return err
	}
	return runScenarios(ctx, bc, stdout)
}

// benchConfig is askd bench's flags.
type benchConfig struct {
	agentURL, inboxURL, agentToken, humanToken string
	scenarios                                  string
	restKind                                   askd.Kind
	latencyN, waiters, sseStreams              int
	settle                                     time.Duration
	duration, timeout, pause                   time.Duration
	historyN, inboxN, sessions                 int
	sseRounds, sseCycling                      int
	purgeWatch, purgeMax                       time.Duration
	agents                                     []int
	cpuOf                                      []string
}

// parseFlags reads askd-bench's flags; -h prints them on stdout and returns
// flag.ErrHelp.
func parseFlags(args []string, stdout io.Writer) (benchConfig, error) {
	var bc benchConfig
	fs := flag.NewFlagSet("askd-bench", flag.ContinueOnError)
	synopsis := "--agent-token T --human-token T [--url URL] [--inbox-url URL] [--scenarios latency,waiters,throughput,throughput-rest,sse,history,inbox,purge]\n       askd-bench seed --db DB [--settled N] [--pending N] (askd-bench seed -h lists its flags)"
	fs.StringVar(&bc.agentURL, "url", "http://127.0.0.1:7777", "the agent side (MCP) of the askd under test; loopback only")
	fs.StringVar(&bc.inboxURL, "inbox-url", "", "the inbox side, when it runs apart (default: --url)")
	fs.StringVar(&bc.agentToken, "agent-token", "", "an agent token")
	fs.StringVar(&bc.humanToken, "human-token", "", "a human token")
	fs.StringVar(&bc.scenarios, "scenarios", "latency,waiters,throughput,sse", "which figures to measure (also throughput-rest: creates over POST /api/asks;\n"+
		"and, on a database askd-bench seed filled, history: searches of it; inbox: the first load's requests; purge: answers\n"+
		"before and while askd serve --retain purges)")
	fs.IntVar(&bc.historyN, "history-n", 30, "searches timed in the history scenario, of each kind")
	fs.IntVar(&bc.sessions, "seed-sessions", 50000, "the history scenario searches sessions seed-s-0 to seed-s-(N-1), and asks' numbers up to 20 N:\n"+
		"the settled asks seeded over 20, at least 5,001")
	fs.IntVar(&bc.inboxN, "inbox-n", 20, "first loads timed in the inbox scenario")
	fs.DurationVar(&bc.purgeWatch, "purge-watch", 2*time.Second, "in the purge scenario, how often the count of settled asks is read, to see the purge go")
	fs.DurationVar(&bc.purgeMax, "purge-max", 30*time.Minute, "in the purge scenario, give up timing after this long")
	restKind := fs.String("rest-kind", "ready", "what throughput-rest creates and answers: ready (a plain attention ask), approval, or form (a\n"+
		"seven-field form, answered with content checked against it)")
	fs.IntVar(&bc.latencyN, "latency-n", 500, "answers timed in the latency scenario")
	fs.IntVar(&bc.waiters, "waiters", 10000, "concurrent blocked ask_user_question calls")
	fs.DurationVar(&bc.settle, "waiters-settle", 0, "in the waiters scenario, also read the agent process's memory this long after the calls are all waiting (Go collects at least every 2 minutes: 130s gives the settled figure)")
	fs.IntVar(&bc.sseStreams, "sse-streams", 1000, "inbox event streams for the fan-out scenario")
	fs.IntVar(&bc.sseRounds, "sse-rounds", 5, "asks whose event the fan-out scenario times, one after another")
	fs.IntVar(&bc.sseCycling, "sse-cycling", 0, "agents making and answering asks (REST) all through the fan-out scenario, one cycle after another each")
	fs.DurationVar(&bc.duration, "duration", 5*time.Second, "how long each throughput run lasts")
	fs.DurationVar(&bc.pause, "pause", 20*time.Millisecond, "idle time before each timed answer in the latency scenario, as a person's (0: answer at once)")
	fs.DurationVar(&bc.timeout, "timeout", 10*time.Minute, "give up the whole run after this long")
	agents := fs.String("agents", "1,8,64", "concurrent agents in the throughput scenario")
	cpuOf := fs.String("cpu-of", "", "comma-separated process names (as in /proc/PID/comm, e.g. postgres) whose CPU the throughput scenario also counts per cycle")
	if err := parse(fs, synopsis, args, stdout); err != nil {
		return bc, err
	}
	if bc.sessions <= 5000 {
		return bc, usageError("--seed-sessions: want 5,001 or more")
	}
	if bc.inboxURL == "" {
		bc.inboxURL = bc.agentURL
	}
	for _, u := range []string{bc.agentURL, bc.inboxURL} {
		if err := loopbackOnly(u); err != nil {
			return bc, usageError(err.Error())
		}
	}
	if bc.agentToken == "" || bc.humanToken == "" {
		return bc, usageError("--agent-token and --human-token are required")
	}
	switch bc.restKind = askd.Kind(*restKind); bc.restKind {
	case askd.KindReady, askd.KindApproval, askd.KindForm:
	default:
		return bc, usageError(fmt.Sprintf("--rest-kind: %q is not one of ready, approval, form", *restKind))
	}
	for _, a := range strings.Split(*agents, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(a))
		if err != nil || n < 1 || n > 1024 {
			return bc, usageError(fmt.Sprintf("--agents: %q is not a count from 1 to 1024", a))
		}
		bc.agents = append(bc.agents, n)
	}
	for _, name := range strings.Split(*cpuOf, ",") {
		if name = strings.TrimSpace(name); name != "" {
			bc.cpuOf = append(bc.cpuOf, name)
		}
	}
	return bc, nil
}

// parse parses args with fs. -h prints the usage on stdout; a mistake is a
// usageError of one line.
func parse(fs *flag.FlagSet, synopsis string, args []string, stdout io.Writer) error {
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: askd-bench %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		return err
	}
	if err != nil {
		return usageError(err.Error() + " (askd-bench -h lists its flags)")
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	return nil
}

// loopbackOnly refuses any target but this machine: the load tool must never
// send its traffic elsewhere.
func loopbackOnly(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL", raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s is not a loopback address; askd-bench only drives a server on this machine", raw)
}

// usageError is a mistake in the command line (exit status 2).
type usageError string

func (u usageError) Error() string { return string(u) }
