package gate

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/cli"
)

// askd gate run (SPEC §12): ask a person to approve a command, wait for the
// decision, run the command once approved. Everything askd says here goes to
// stderr in lines starting "askd gate:", so that a caller can tell askd's
// refusal (exit 1) from the command's own failure (often exit 1 too).

const gateRunSynopsis = "--title TEXT [--details TEXT] [--payload JSON] [--key KEY] [--wait 10m] -- CMD [ARGS...]"

// gateRunTool is the tool_name of gate run's asks: rules and policies match
// them by it, and by the command line in the payload's "command".
const gateRunTool = "gate run"

// Exit statuses of askd gate run besides CMD's own. 75 is sysexits.h's
// EX_TEMPFAIL: nothing was decided, try again later; 126 and 127 are what
// shells exit with for a command they cannot run or cannot find.
const (
	gateRefused    = 1
	gateMistake    = 2
	gateUndecided  = 75
	gateCannotRun  = 126
	gateNotFound   = 127
	gateSignalBase = 128 // + the signal's number, for a command killed by one
)

// gateSignals are passed on to CMD while it runs; before it runs, one of
// them ends the wait and CMD is not run.
var gateSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

const gateRunHelp = `
Asks a person to approve CMD (an approval with tool "gate run" whose payload
holds the command line as "command"), waits up to --wait for the decision and
then runs CMD, with stdin, stdout and stderr passed through and SIGINT,
SIGTERM, SIGHUP and SIGQUIT passed on (not twice: a Ctrl-C at a terminal
reaches CMD directly). CMD finds the payload, as the person left it, in
ASKD_PAYLOAD.

Exit status:
  CMD's own   approved: CMD ran (killed by a signal: 128 + the signal)
  1           rejected, dismissed or withdrawn: CMD did not run
  2           a mistake in the command line, or askd refused the ask as given
  75          no decision within --wait, or askd could not be reached: CMD did
              not run; with --key, run the same command again to pick up the
              decision
  126, 127    approved, but CMD could not be run, or was not found
  128 + N     signal N came before CMD ran: CMD did not run; askd's last
              line names the approval, pending or settled, once it was asked

Telling askd's exit 1 from CMD's: every line askd writes starts with
"askd gate:". When CMD did not run, askd's last line ends "the command did
not run", after the reason (a rejection with its comment, say); when CMD ran,
askd's last line came before it: "askd gate: approval #12 approved by NAME;
running CMD".

With --key the same key (same agent token, same title, details, payload and
command) is the same approval, whatever became of it: a CI job retried finds
it approved and runs at once, or rejected and exits 1 at once. Without --key
every run asks anew.
`

// gateRunner is one askd gate run: what it asks, and the command it runs.
type gateRunner struct {
	e    *cli.Env
	c    *client.Client
	in   askd.AskInput
	argv []string
	line string // argv as one command line, the payload's "command"
	wait time.Duration
}

// gateStop ends askd gate run with status, saying msg (on stderr, each line
// after "askd gate: ").
type gateStop struct {
	status int
	msg    string
}

func (s *gateStop) Error() string { return s.msg }

func stopGate(status int, format string, args ...any) error {
	return &gateStop{status, fmt.Sprintf(format, args...)}
}

// gateRun is askd gate run. It returns nil when CMD ran and exited 0, else
// an cli.ExitStatus, having said on stderr what askd had to say.
func gateRun(ctx context.Context, e *cli.Env, args []string) error {
	err := runGate(ctx, e, args)
	var stop *gateStop
	var mistake cli.UsageError
	var cmdStatus cli.ExitStatus
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp), errors.As(err, &cmdStatus):
		return err
	case errors.As(err, &stop):
		if stop.msg != "" {
			gateSay(e, stop.msg)
		}
		return cli.ExitStatus(stop.status)
	case errors.As(err, &mistake):
		gateSay(e, strings.TrimPrefix(string(mistake), "gate run: "))
		return cli.ExitStatus(gateMistake)
	}
	// Nothing was decided for CMD to run on.
	gateSay(e, err.Error())
	return cli.ExitStatus(gateUndecided)
}

// gateSay writes msg to stderr, each line after "askd gate: ".
func gateSay(e *cli.Env, msg string) {
	for _, line := range strings.Split(msg, "\n") {
		fmt.Fprintln(e.Stderr, "askd gate:", cli.Term(line))
	}
}

func runGate(ctx context.Context, e *cli.Env, args []string) error {
	g, err := parseGateRun(e, args)
	if err != nil {
		return err
	}
	// Registered before anything is asked, so that no signal meant for CMD
	// ends askd in its default way meanwhile.
	sigs := make(chan os.Signal, len(gateSignals))
	signal.Notify(sigs, gateSignals...)
	defer signal.Stop(sigs)
	a, err := g.awaitDecision(ctx, sigs)
	if err != nil {
		return err
	}
	payload, err := g.approved(a)
	if err != nil {
		return err
	}
	gateSay(e, fmt.Sprintf("approval #%d approved by %s; running %s", a.ID, a.SettledBy, g.line))
	return g.exec(e, payload, sigs)
}

// parseGateRun reads askd gate run's command line: flags, then "--" and CMD.
// Mistakes are usageErrors; nothing is sent.
func parseGateRun(e *cli.Env, args []string) (*gateRunner, error) {
	fs := cli.Flags(e, "gate run", gateRunSynopsis)
	r := cli.ConnectFlags(e, fs, cli.AskingSide)
	title := fs.String("title", "", "what is to be approved, in one line (required)")
	details := fs.String("details", "", "more context for the person (plain text)")
	payload := fs.String("payload", "", "a JSON object the person may edit; CMD gets it, edited or not, in ASKD_PAYLOAD")
	// ASKD_PAYLOAD is what CMD gets, not a default for this flag: an askd
	// gate run inside CMD would otherwise ask with its parent's payload.
	e.SetEnvName("payload", "")
	key := fs.String("key", "", "the approval's key: run again with the same key to pick up the same approval (at most 200 characters)")
	wait := fs.Duration("wait", 10*time.Minute, "how long to wait for the decision (0: only look)")
	usage := fs.Usage
	fs.Usage = func() { usage(); fmt.Fprint(fs.Output(), gateRunHelp) }

	flagArgs, argv, found := splitCommand(fs, args)
	if err := cli.Parse(e, fs, flagArgs); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, cli.UsageError(fmt.Sprintf("gate run: %q: the command goes after -- (askd gate run --title TEXT -- CMD ARGS...)", fs.Arg(0)))
	case !found || len(argv) == 0:
		return nil, cli.UsageError("gate run: give the command to run after -- (askd gate run --title TEXT -- CMD ARGS...)")
	case *title == "":
		return nil, cli.UsageError("gate run: --title is required: what is to be approved, in one line")
	case *wait < 0:
		return nil, cli.UsageError(fmt.Sprintf("gate run: --wait %s: must be 0 or more", *wait))
	}
	if err := checkGateKey(*key); err != nil {
		return nil, err
	}
	g := &gateRunner{e: e, argv: argv, line: commandLine(argv), wait: *wait}
	p, err := gatePayload(*payload, g.line)
	if err != nil {
		return nil, err
	}
	g.in = askd.AskInput{Kind: askd.KindApproval, Title: *title, Details: *details, Payload: p, ToolName: gateRunTool, Key: *key}
	// The server checks the same rules; checked here too, a mistake is
	// exit 2 with nothing sent.
	if err := g.in.Validate(false); err != nil {
		return nil, cli.UsageError(fmt.Sprintf("gate run: %s", err))
	}
	if g.c, err = r.Client(); err != nil {
		return nil, err
	}
	return g, nil
}

// splitCommand splits args at the "--" that ends askd's flags (not one that
// is a flag's value): askd's part, CMD and its arguments, and whether there
// was a "--" at all. CMD's own flags are never read as askd's.
func splitCommand(fs *flag.FlagSet, args []string) (flagArgs, argv []string, found bool) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return args[:i], args[i+1:], true
		case len(a) > 1 && a[0] == '-' && cli.NeedsValue(fs, a):
			i++
		}
	}
	return args, nil, false
}

// checkGateKey refuses a key the server would: more than
// askd.MaxGateKeyChars characters, not UTF-8, or holding a control character.
func checkGateKey(key string) error {
	switch {
	case !utf8.ValidString(key):
		return cli.UsageError("gate run: --key: not valid UTF-8")
	case utf8.RuneCountInString(key) > askd.MaxGateKeyChars:
		return cli.UsageError(fmt.Sprintf("gate run: --key: %d characters, at most %d", utf8.RuneCountInString(key), askd.MaxGateKeyChars))
	case strings.ContainsFunc(key, unicode.IsControl):
		return cli.UsageError("gate run: --key: contains a control character (a line break, a tab, ...); a key is one line of text")
	}
	return nil
}

// gatePayload is the approval's payload: the --payload object, if any, with
// "command" set to the command line. A --payload with a "command" of its own
// is a mistake: rules and policies match gate asks by their command, which
// must be the one that runs.
func gatePayload(flagValue, line string) (json.RawMessage, error) {
	fields := map[string]json.RawMessage{}
	if flagValue != "" {
		if err := cli.JSONObject("--payload", flagValue); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(flagValue), &fields); err != nil {
			return nil, cli.UsageError(fmt.Sprintf("--payload: %v", err))
		}
		if _, ok := fields["command"]; ok {
			return nil, cli.UsageError("gate run: --payload: has \"command\", which askd gate run sets to the command it runs")
		}
	}
	cmd, err := json.Marshal(line)
	if err != nil {
		return nil, err
	}
	fields["command"] = cmd
	return json.Marshal(fields)
}

// commandLine is argv as one line that a POSIX shell splits back into argv:
// an argument with anything but letters, digits and -_./:=@%+, is put in
// single quotes.
func commandLine(argv []string) string {
	quoted := make([]string, len(argv))
	for i, a := range argv {
		plain := a != "" && !strings.ContainsFunc(a, func(r rune) bool {
			return !(r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r)))
		})
		if plain {
			quoted[i] = a
		} else {
			quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(quoted, " ")
}

// approved returns the payload CMD is to get when ask a was approved, or a
// gateStop saying why CMD does not run.
func (g *gateRunner) approved(a *askd.Ask) (json.RawMessage, error) {
	if a.Status == askd.StatusCancelled {
		if a.CancelReason == askd.ReasonTimeout {
			return nil, stopGate(gateUndecided, "approval #%d timed out with no decision\nthe command did not run", a.ID)
		}
		msg := fmt.Sprintf("approval #%d was %s", a.ID, a.CancelReason)
		if a.SettledBy != "" {
			msg += " by " + a.SettledBy
		}
		if a.Answer != nil && a.Answer.Response != "" {
			msg += ": " + a.Answer.Response
		}
		return nil, stopGate(gateRefused, "%s\nthe command did not run", msg)
	}
	ans := a.Answer
	if ans == nil || ans.Decision != askd.DecisionApproved && ans.Decision != askd.DecisionModified {
		msg := fmt.Sprintf("approval #%d was rejected by %s", a.ID, a.SettledBy)
		if ans != nil && ans.Comment != "" {
			msg += ": " + ans.Comment
		}
		return nil, stopGate(gateRefused, "%s\nthe command did not run", msg)
	}
	payload := a.Payload
	if ans.Decision == askd.DecisionModified && ans.Payload != nil {
		payload = ans.Payload
	}
	// The person may edit the payload, not the command: what runs is
	// what was asked about.
	var edited struct {
		Command *string `json:"command"`
	}
	if json.Unmarshal(payload, &edited) != nil || edited.Command == nil || *edited.Command != g.line {
		return nil, stopGate(gateRefused, "approval #%d was approved by %s with its command changed, and askd gate run runs only the command it asked about\nthe command did not run", a.ID, a.SettledBy)
	}
	return payload, nil
}

// exec runs CMD with payload in ASKD_PAYLOAD, stdin, stdout and stderr
// passed through and the signals in sigs passed on, and returns its exit
// status as an cli.ExitStatus (nil for 0).
func (g *gateRunner) exec(e *cli.Env, payload json.RawMessage, sigs <-chan os.Signal) error {
	cmd := exec.Command(g.argv[0], g.argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.Stdin, e.Stdout, e.Stderr
	// The last of a repeated variable wins: an outer gate's payload is
	// replaced.
	cmd.Env = append(os.Environ(), "ASKD_PAYLOAD="+string(payload))
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return stopGate(gateNotFound, "%s: not found", g.argv[0])
		}
		return stopGate(gateCannotRun, "%s: %v", g.argv[0], err)
	}
	exited := make(chan struct{})
	forwarded := make(chan struct{})
	go func() {
		defer close(forwarded)
		for {
			select {
			case s := <-sigs:
				if !reachedCommand(s) {
					cmd.Process.Signal(s) // gone meanwhile: nothing to pass it to
				}
			case <-exited:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(exited)
	<-forwarded
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return stopGate(gateCannotRun, "%s: %v", g.argv[0], err)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return cli.ExitStatus(gateSignalBase + int(ws.Signal()))
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		return cli.ExitStatus(code)
	}
	return nil
}
