package gate

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/cli"
)

const gateGitSynopsis = "[--ref PATTERN]... [--config FILE] [--chain HOOK]"

// maxGateInput bounds the hook's input: some 100,000 ref updates.
const maxGateInput = 16 << 20

// gateGitTimeout bounds one run of the hook: creating an ask never waits for
// a person (wait 0), so only a server that hangs or git on a huge history
// takes this long, and the push is refused rather than held open.
const gateGitTimeout = 60 * time.Second

// gateGit is git's pre-receive hook, as askd install git-gate writes it
// (SPEC §12): for each ref the push updates that matches a --ref pattern
// (every ref without one), an approval keyed by repository, ref, old and
// new commit (GitKey), created without waiting. It returns nil, accepting the push,
// only when every one of them is approved (approved or modified); else an
// error, which refuses the whole push, naming each approval that waits (push
// again once it is approved) and each refusal's comment. Anything that goes
// wrong refuses the push too, saying why: a gate fails closed.
//
// The server and agent token are ASKD_URL and ASKD_TOKEN, else --config's
// file (mode 0600, written by install); the session is ASKD_SESSION, else
// the repository's name. With --chain, that hook (the pre-receive hook that
// was there before askd's) runs first with the same input, and its refusal
// is the push's.
func gateGit(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "gate git", gateGitSynopsis)
	fs.Usage = func() { gateGitUsage(e, fs) }
	var refs RefPatterns
	fs.Var(&refs, "ref", "a protected ref `PATTERN`, in git's refspec glob syntax (repeat); none: every ref")
	config := fs.String("config", "", "the `FILE` install wrote beside the hook: url= and token= lines, mode 0600")
	chain := fs.String("chain", "", "a pre-receive `HOOK` to run first with the same input (the one install found there)")
	for _, name := range []string{"ref", "config", "chain"} {
		e.SetEnvName(name, "")
	}
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.UsageError(fmt.Sprintf("gate git: unexpected argument %q (the updates come on stdin, from git)", fs.Arg(0)))
	}
	ctx, cancel := context.WithTimeout(ctx, gateGitTimeout)
	defer cancel()
	input, err := io.ReadAll(io.LimitReader(e.Stdin, maxGateInput+1))
	if err != nil {
		return fmt.Errorf("push refused: reading the updates from git: %v", err)
	}
	if len(input) > maxGateInput {
		// Not cut short: a ref past the cut would go unasked.
		return fmt.Errorf("push refused: more than %d MiB of ref updates in one push; push fewer refs at a time", maxGateInput>>20)
	}
	updates, err := parseUpdates(input)
	if err != nil {
		return fmt.Errorf("push refused: %v", err)
	}
	if *chain != "" {
		if err := runChained(ctx, e, *chain, input); err != nil {
			return err
		}
	}
	var protected []gitUpdate
	for _, u := range updates {
		if refs.Match(u.Ref) {
			protected = append(protected, u)
		}
	}
	if len(protected) == 0 {
		return nil
	}
	repo, err := hookRepository(e.Getenv("GIT_DIR"))
	if err != nil {
		return fmt.Errorf("push refused: %v", err)
	}
	c, err := gateClient(e, *config, repo)
	if err != nil {
		return fmt.Errorf("push refused: %v", err)
	}
	var refusals []string
	for _, u := range protected {
		refusal, err := gateUpdate(ctx, e, c, repo, u)
		if err != nil {
			return fmt.Errorf("push refused: %s: %v", u.Ref, err)
		}
		if refusal != "" {
			refusals = append(refusals, refusal)
		}
	}
	if len(refusals) == 0 {
		return nil
	}
	// One line per ref, each as main prints an error ("askd: ..."), the
	// last one by main itself: the pusher reads every one alike.
	last := len(refusals) - 1
	for _, r := range refusals[:last] {
		fmt.Fprintln(e.Stderr, "askd:", r)
	}
	return errors.New(refusals[last])
}

func gateGitUsage(e *cli.Env, fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprintf(w, "Usage: askd gate git %s\n\n", gateGitSynopsis)
	fmt.Fprintln(w, `git's pre-receive hook, as askd install git-gate writes it: each pushed update of a
protected ref is an approval in askd's inbox (tool "git push"), keyed by repository, ref,
old and new commit. The push is refused at once while it waits (push again once it is
approved), refused with the comment when rejected, and accepted when every protected
update in it is approved. A deletion and a non-fast-forward update are asked as such.
askd unreachable, or any other error: the push is refused, saying why (a gate fails closed).

The server and agent token: ASKD_URL and ASKD_TOKEN, else --config's file. The session:
ASKD_SESSION, else the repository's name.

Flags:`)
	cli.PrintDefaults(e, fs)
}

// hookRepository is the repository a pre-receive hook runs in, dir (git's
// GIT_DIR) or else the current directory (git starts the hook in the
// repository's git directory), absolute and with symlinks resolved, so that
// every push names it the same way.
func hookRepository(dir string) (*gitRepo, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("finding the repository: %v", err)
	}
	return &gitRepo{path: abs}, nil
}

// gateUpdate asks for one update and returns "" when it is approved, else
// the line that refuses the push. An error is one the hook could not ask.
func gateUpdate(ctx context.Context, e *cli.Env, c *client.Client, repo *gitRepo, u gitUpdate) (string, error) {
	in, err := repo.describeUpdate(ctx, u)
	if err != nil {
		return "", err
	}
	a, err := c.Create(ctx, in, 0) // never waits: a pre-receive hook answers at once
	if askd.ErrorCode(err) == askd.ECONFLICT {
		// The same update was asked with other words: for a new ref, the
		// other refs changed since (its list is the commits no other ref
		// has); else git or askd changed how they describe it. A yes covers
		// the words a person read, so this update cannot be asked again.
		return "", fmt.Errorf("%v\n(this update was asked before and is described differently now; make a new commit, or amend, and push that)", err)
	}
	if err != nil {
		return "", err
	}
	what := cli.Term(a.Title)
	switch {
	case a.Status == askd.StatusPending:
		return fmt.Sprintf("approval #%d is waiting (%s) — push again once it is approved", a.ID, what), nil
	case a.Status == askd.StatusAnswered && a.Answer != nil && (a.Answer.Decision == askd.DecisionApproved || a.Answer.Decision == askd.DecisionModified):
		fmt.Fprintf(e.Stderr, "askd: approval #%d (%s) approved by %s\n", a.ID, what, cli.Term(a.SettledBy))
		return "", nil
	case a.Status == askd.StatusAnswered:
		return fmt.Sprintf("approval #%d (%s) was rejected by %s%s", a.ID, what, cli.Term(a.SettledBy), refusalComment(a.Answer.Comment)), nil
	}
	switch a.CancelReason {
	case askd.ReasonTimeout:
		return fmt.Sprintf("approval #%d (%s) timed out with no decision; this same update is not asked again: make a new commit (or amend) and push that", a.ID, what), nil
	case askd.ReasonReplaced:
		return fmt.Sprintf("approval #%d (%s) was replaced by a newer push of %s; push that one again once it is approved", a.ID, what, u.Ref), nil
	case askd.ReasonDismissed:
		reason := ""
		if a.Answer != nil {
			reason = refusalComment(a.Answer.Response)
		}
		return fmt.Sprintf("approval #%d (%s) was dismissed by %s%s", a.ID, what, cli.Term(a.SettledBy), reason), nil
	}
	return fmt.Sprintf("approval #%d (%s) was %s (%s)", a.ID, what, a.Status, a.CancelReason), nil
}

// refusalComment is a person's comment as the end of a refusal: ": «...»", or
// nothing when there is none.
func refusalComment(s string) string {
	if strings.TrimSpace(s) == "" {
		return " (no comment)"
	}
	return ": " + cli.Term(s) // one line, printable: a comment's line breaks as \n
}

// runChained runs the pre-receive hook askd install found in askd's place,
// with the same input, environment and directory, its output passed on: its
// refusal refuses the push before anyone is asked. Not executable, it is
// skipped, as git skips such a hook.
func runChained(ctx context.Context, e *cli.Env, hook string, input []byte) error {
	info, err := os.Stat(hook)
	if errors.Is(err, fs.ErrNotExist) || err == nil && info.Mode().Perm()&0o111 == 0 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("push refused: the chained pre-receive hook %s: %v", hook, err)
	}
	cmd := exec.CommandContext(ctx, hook)
	cmd.Stdin = bytes.NewReader(input)
	cmd.Stdout, cmd.Stderr = e.Stdout, e.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("push refused by the pre-receive hook askd runs first, %s (%v)", hook, err)
	}
	return nil
}

// gateClient is the client the hook asks with: ASKD_URL and ASKD_TOKEN
// where set, else the url= and token= of the file install wrote beside the
// hook, which is read only when no one but its owner may read it. The
// session is ASKD_SESSION, else the repository's name (when that is a valid
// session name; else the token's own session).
func gateClient(e *cli.Env, config string, repo *gitRepo) (*client.Client, error) {
	r := &cli.Remote{URL: e.Getenv("ASKD_URL"), Token: e.Getenv("ASKD_TOKEN"), Session: e.Getenv("ASKD_SESSION"), Side: cli.AgentSide}
	if (r.URL == "" || r.Token == "") && config != "" {
		conf, err := ReadConfig(config)
		if err != nil {
			return nil, err
		}
		if r.URL == "" {
			r.URL = conf["url"]
		}
		if r.Token == "" {
			r.Token = conf["token"]
		}
	}
	if r.URL == "" {
		r.URL = cli.DefaultURL
	}
	if r.Token == "" {
		return nil, errors.New("no agent token: set ASKD_TOKEN where git runs its hooks, or run askd install git-gate again with ASKD_TOKEN set (it keeps the token in a file beside the hook)")
	}
	if r.Session == "" {
		if name := repoName(repo.path); askd.ValidName("session", name) == nil {
			r.Session = name
		}
	}
	return r.Client()
}
