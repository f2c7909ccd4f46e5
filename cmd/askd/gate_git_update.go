package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"unicode/utf8"

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

// Kinds of ref update, as the payload's kind says.
const (
	updateFastForward = "update" // old is an ancestor of new
	updateCreate      = "create" // old is zeros: a new ref
	updateDelete      = "delete" // new is zeros
	updateForce       = "force"  // not a fast-forward: commits leave the ref
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
		return updateCreate, nil
	case isZeroID(u.New):
		return updateDelete, nil
	}
	cmd := exec.CommandContext(ctx, "git", "merge-base", "--is-ancestor", u.Old, u.New)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return updateFastForward, nil
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return updateForce, nil
	case !g.isCommit(ctx, u.Old) || !g.isCommit(ctx, u.New):
		return updateForce, nil
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

// gatePayload is a gate ask's payload: command first, so that rules and
// policies match it by prefix ("<repository> refs/heads/main") and the inbox
// headlines it.
type gatePayload struct {
	Command    string `json:"command"`
	Repository string `json:"repository"`
	Ref        string `json:"ref"`
	Old        string `json:"old"`
	New        string `json:"new"`
	Kind       string `json:"kind"`
}

// gitPushTool is the tool_name of the git gate's approvals (SPEC §12).
const gitPushTool = "git push"

// describeUpdate is the approval that asks for update u of repository g:
// title, details (the new commits and the diffstat, bounded), payload and
// key. The same update gives the same ask, byte for byte, as long as the
// repository holds the same commits: the server compares a key's content
// when the push comes again.
func (g *gitRepo) describeUpdate(ctx context.Context, u gitUpdate) (*askd.AskInput, error) {
	kind, err := g.kind(ctx, u)
	if err != nil {
		return nil, err
	}
	name := repoName(g.path)
	where := shortRef(u.Ref) + " in " + name
	var title string
	var details strings.Builder
	switch kind {
	case updateDelete:
		title = "Delete " + u.Ref + " in " + name
		fmt.Fprintf(&details, "Deletes %s in %s, which points at %s.\n", u.Ref, g.path, shortID(u.Old))
		l, err := g.commits(ctx, "-n", "1", u.Old)
		if err == nil && len(l.shown) > 0 {
			writeCommits(&details, "It points at:", l.shown, 0)
		}
	case updateFastForward:
		l, err := g.commits(ctx, u.Old+".."+u.New)
		if err != nil {
			return nil, err
		}
		title = fmt.Sprintf("Push %s to %s", countOf(l.total, "commit"), where)
		fmt.Fprintf(&details, "%s, %s..%s, %s.\n", u.Ref, shortID(u.Old), shortID(u.New), g.path)
		writeCommits(&details, "New commits, newest first:", l.shown, l.total)
		if err := g.writeDiffstat(ctx, &details, u.Old, u.New, ""); err != nil {
			return nil, err
		}
	case updateForce:
		title = "Force-push (non-fast-forward) to " + where
		fmt.Fprintf(&details, "Not a fast-forward: %s moves from %s to %s, %s.\n", u.Ref, shortID(u.Old), shortID(u.New), g.path)
		if g.isCommit(ctx, u.Old) && g.isCommit(ctx, u.New) {
			added, err := g.commits(ctx, u.Old+".."+u.New)
			if err != nil {
				return nil, err
			}
			removed, err := g.commits(ctx, u.New+".."+u.Old)
			if err != nil {
				return nil, err
			}
			writeCommits(&details, "New commits, newest first:", added.shown, added.total)
			writeCommits(&details, "Commits no longer on "+shortRef(u.Ref)+":", removed.shown, removed.total)
			if err := g.writeDiffstat(ctx, &details, u.Old, u.New, ""); err != nil {
				return nil, err
			}
		}
	case updateCreate:
		if !g.isCommit(ctx, u.New) {
			title = "Create " + where
			fmt.Fprintf(&details, "Creates %s at %s, %s (not a commit).\n", u.Ref, shortID(u.New), g.path)
			break
		}
		// Commits no other ref has: what the new ref brings.
		l, err := g.commits(ctx, u.New, "--not", "--all")
		if err != nil {
			return nil, err
		}
		title = fmt.Sprintf("Create %s with %s", where, countOf(l.total, "new commit"))
		fmt.Fprintf(&details, "Creates %s at %s, %s.\n", u.Ref, shortID(u.New), g.path)
		writeCommits(&details, "Commits no other ref has:", l.shown, l.total)
		from, label := "", "against the empty tree"
		if len(l.boundary) > 0 {
			from, label = l.boundary[0], "against "+shortID(l.boundary[0])+", where it leaves the other refs"
		} else if from, err = g.emptyTree(ctx); err != nil {
			return nil, err
		}
		if l.total > 0 {
			if err := g.writeDiffstat(ctx, &details, from, u.New, label); err != nil {
				return nil, err
			}
		}
	}
	payload, err := json.Marshal(gatePayload{Command: g.path + " " + u.Ref, Repository: g.path, Ref: u.Ref, Old: u.Old, New: u.New, Kind: kind})
	if err != nil {
		return nil, err
	}
	return &askd.AskInput{
		Kind:     askd.KindApproval,
		Title:    clip(askd.Printable(title), askd.MaxTitleChars),
		Details:  details.String(),
		Payload:  payload,
		ToolName: gitPushTool,
		Key:      gateKey(g.path, u.Ref, kind, u.Old, u.New),
		Replaces: gateKeyPrefix(g.path, u.Ref, len(u.Old)),
	}, nil
}

// writeCommits writes a list of commits as a code block (subjects are no
// Markdown), and how many more there are than shown.
func writeCommits(w *strings.Builder, heading string, shown []string, total int) {
	if len(shown) == 0 {
		return
	}
	text := strings.Join(shown, "\n")
	if more := total - len(shown); more > 0 {
		text += fmt.Sprintf("\n… and %s", countOf(more, "more commit"))
	}
	fmt.Fprintf(w, "\n%s\n", heading)
	codeBlock(w, text)
}

func (g *gitRepo) writeDiffstat(ctx context.Context, w *strings.Builder, from, to, label string) error {
	stat, err := g.diffstat(ctx, from, to)
	if err != nil {
		return err
	}
	if strings.TrimSpace(stat) == "" {
		return nil
	}
	heading := "Diffstat:"
	if label != "" {
		heading = "Diffstat " + label + ":"
	}
	fmt.Fprintf(w, "\n%s\n", heading)
	codeBlock(w, stat)
	return nil
}

// codeBlock writes text as a fenced code block whose fence is longer than
// any run of backticks in it, so that no subject or file name ends it.
func codeBlock(w *strings.Builder, text string) {
	fence, run := 3, 0
	for _, r := range text {
		if r == '`' {
			run++
			fence = max(fence, run+1)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", fence)
	fmt.Fprintf(w, "%s\n%s\n%s\n", f, text, f)
}

// gateKey is the key of the approval for one update (SPEC §12): "git push
// <repository> <ref> <kind> <old> <new>", at most askd.MaxGateKeyChars
// characters. A ref name holds no space, so the prefix up to the ref
// (gateKeyPrefix) names that ref alone. Where the plain form is too long,
// or the path holds characters a key may not, the repository is its
// SHA-256 (and, past that, the ref too).
func gateKey(repo, ref, kind, old, new string) string {
	return gateKeyPrefix(repo, ref, len(old)) + kind + " " + old + " " + new
}

// gateKeyPrefix is what every key of (repo, ref) starts with: the replaces
// of a newer update of the ref. idLen is the length of an object name (40
// or 64), so that every key of the ref takes the same form.
func gateKeyPrefix(repo, ref string, idLen int) string {
	const kindLen = len(updateFastForward) // the longest kind
	room := askd.MaxGateKeyChars - (kindLen + 2 + 2*idLen)
	plain := "git push " + repo + " " + ref + " "
	if utf8.RuneCountInString(plain) <= room && askd.Printable(repo) == repo {
		return plain
	}
	hashed := "git push sha256:" + keyDigest(repo) + " " + ref + " "
	if len(hashed) <= room {
		return hashed
	}
	return "git push sha256:" + keyDigest(repo+"\x00"+ref) + " "
}

func keyDigest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// repoName is how a title names a repository: its directory, without .git.
func repoName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".git")
}

// shortRef is a ref as a person says it: main for refs/heads/main, tag v1
// for refs/tags/v1, anything else in full.
func shortRef(ref string) string {
	if b, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		return b
	}
	if t, ok := strings.CutPrefix(ref, "refs/tags/"); ok {
		return "tag " + t
	}
	return ref
}

func shortID(id string) string { return id[:min(12, len(id))] }

func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// clip cuts s to at most n characters, the last one an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
