// The git side of askd gate git: reading the pre-receive input and asking
// git what an update does. git_ask.go makes the approval of it.

package gate

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/askd-dev/askd"
)

// How much of a push an approval's details show: a person reads the
// newest commits and the shape of the change, and a push of a thousand
// commits still makes a card that loads at once (and stays far below
// askd.MaxApprovalDetails).
const (
	maxGateCommits   = 50   // commits listed, newest first; then "… and N more"
	maxGateSubject   = 120  // characters of a commit's subject
	maxGateStatFiles = 50   // files in the diffstat; git sums up the rest
	maxGateDiffFiles = 5000 // above this many files changed, only their number (no line counts)
)

// gitUpdate is one line of a pre-receive hook's input: Ref moves from Old
// to New (all zeros for none).
type gitUpdate struct {
	Old, New, Ref string
}

// parseUpdates reads a pre-receive hook's input, "<old> <new> <ref>" a
// line. Anything else is an error: the hook refuses what it cannot read.
func parseUpdates(input []byte) ([]gitUpdate, error) {
	var out []gitUpdate
	for i, line := range strings.Split(strings.TrimRight(string(input), "\n"), "\n") {
		if line == "" && i == 0 {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 || !isObjectID(f[0]) || !isObjectID(f[1]) || len(f[0]) != len(f[1]) || !validRefName(f[2]) {
			return nil, fmt.Errorf("line %d of the hook's input is not \"<old> <new> <ref>\" (askd gate git is git's pre-receive hook, run by git receive-pack): %q", i+1, askd.Printable(clip(line, 200)))
		}
		out = append(out, gitUpdate{Old: f[0], New: f[1], Ref: f[2]})
	}
	return out, nil
}

// isObjectID reports whether s is a full object name: 40 (SHA-1) or 64
// (SHA-256) lowercase hex digits.
func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func isZeroID(s string) bool { return strings.Trim(s, "0") == "" }

// validRefName is a light check of a ref name git passed on: under refs/,
// none of the characters git refuses in ref names (git check-ref-format),
// so that it can stand in a key and a title as it is.
func validRefName(ref string) bool {
	if !strings.HasPrefix(ref, "refs/") || len(ref) > 1024 {
		return false
	}
	for _, r := range ref {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return false
		}
	}
	return true
}

// gitRepo runs git in the repository a pre-receive hook runs in: git
// starts the hook in it with GIT_DIR set, and, while a push is received,
// its new objects in quarantine (GIT_QUARANTINE_PATH and friends), which
// the commands inherit.
type gitRepo struct {
	path string // the repository, absolute, symlinks resolved: the same for every push
}

// git runs a git command and returns its stdout; an error carries git's
// stderr.
func (g *gitRepo) git(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// kind is what the update does to its ref: create, delete, fast-forward
// update, or force (a non-fast-forward update; also a tag moved between
// objects that are not commits, where nothing is an ancestor).
func (g *gitRepo) kind(ctx context.Context, u gitUpdate) (string, error) {
	switch {
	case isZeroID(u.Old):
		return UpdateCreate, nil
	case isZeroID(u.New):
		return UpdateDelete, nil
	}
	cmd := exec.CommandContext(ctx, "git", "merge-base", "--is-ancestor", u.Old, u.New)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return UpdateFastForward, nil
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return UpdateForce, nil
	case !g.isCommit(ctx, u.Old) || !g.isCommit(ctx, u.New):
		return UpdateForce, nil
	}
	return "", fmt.Errorf("git merge-base --is-ancestor %s %s: %v: %s", u.Old, u.New, err, strings.TrimSpace(stderr.String()))
}

// isCommit reports whether id names a commit, or a tag of one.
func (g *gitRepo) isCommit(ctx context.Context, id string) bool {
	_, err := g.git(ctx, "rev-parse", "--verify", "--quiet", id+"^{commit}")
	return err == nil
}

// commitList is some of the commits of a range, newest first.
type commitList struct {
	shown    []string // "<12 hex digits> <subject>", at most maxGateCommits
	total    int
	boundary []string // with boundary: the commits just outside the range
}

// commits lists the range git log's args give, with the commits at its
// boundary. The same range lists the same way every time: full object names
// cut to 12 digits (git's %h grows with the repository), subjects made
// printable and cut, git's own order.
func (g *gitRepo) commits(ctx context.Context, args ...string) (commitList, error) {
	var l commitList
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "log.showSignature=false", "log", "--no-color", "--boundary", "--format=%m%H %s"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return l, err
	}
	if err := cmd.Start(); err != nil {
		return l, err
	}
	lines := bufio.NewScanner(out)
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	for lines.Scan() {
		line := lines.Text()
		if len(line) < 2 {
			continue
		}
		id, subject, _ := strings.Cut(line[1:], " ")
		if line[0] == '-' {
			l.boundary = append(l.boundary, id)
			continue
		}
		l.total++
		if len(l.shown) < maxGateCommits {
			l.shown = append(l.shown, id[:min(12, len(id))]+" "+clip(askd.Printable(subject), maxGateSubject))
		}
	}
	scanErr := lines.Err()
	if scanErr != nil {
		cmd.Process.Kill()
	}
	if err := cmd.Wait(); err != nil {
		return l, fmt.Errorf("git log %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return l, scanErr
}

// diffstat is git's diffstat from one tree to another, bounded: at most
// maxGateStatFiles files and git's summary line, or only the number of
// files when there are more than maxGateDiffFiles (counting their lines
// would read every one of them while the pusher waits). Fixed widths, so
// that no terminal setting of the hook changes it.
func (g *gitRepo) diffstat(ctx context.Context, from, to string) (string, error) {
	names, err := g.git(ctx, "diff", "--no-renames", "--name-only", "-z", from, to)
	if err != nil {
		return "", err
	}
	if n := bytes.Count(names, []byte{0}); n > maxGateDiffFiles {
		return fmt.Sprintf(" %d files changed (too many to count their lines here)\n", n), nil
	}
	stat, err := g.git(ctx, "diff", "--no-color", "--no-ext-diff", "--find-renames", fmt.Sprintf("--stat=100,60,%d", maxGateStatFiles), from, to)
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimRight(string(stat), "\n"), "\n")
	for i, l := range lines {
		lines[i] = askd.Printable(l)
	}
	return strings.Join(lines, "\n"), nil
}

// emptyTree is the name of the empty tree in the repository's object
// format: what a push that brings a whole new history is diffed against.
func (g *gitRepo) emptyTree(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "git", "hash-object", "-t", "tree", "--stdin")
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git hash-object -t tree: %v", err)
	}
	return strings.TrimSpace(string(out)), nil
}
