package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/askd-dev/askd"
)

// gitPushPayload is a git gate ask's payload: command first, so that rules and
// policies match it by prefix ("<repository> refs/heads/main") and the inbox
// headlines it.
type gitPushPayload struct {
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
	var details strings.Builder
	var title string
	switch kind {
	case UpdateDelete:
		title, err = g.describeDelete(ctx, &details, u)
	case UpdateFastForward:
		title, err = g.describeFastForward(ctx, &details, u)
	case UpdateForce:
		title, err = g.describeForce(ctx, &details, u)
	case UpdateCreate:
		title, err = g.describeCreate(ctx, &details, u)
	}
	if err != nil {
		return nil, err
	}
	payload, err := json.Marshal(gitPushPayload{Command: g.path + " " + u.Ref, Repository: g.path, Ref: u.Ref, Old: u.Old, New: u.New, Kind: kind})
	if err != nil {
		return nil, err
	}
	return &askd.AskInput{
		Kind:     askd.KindApproval,
		Title:    clip(askd.Printable(title), askd.MaxTitleChars),
		Details:  details.String(),
		Payload:  payload,
		ToolName: gitPushTool,
		Key:      GitKey(g.path, u.Ref, kind, u.Old, u.New),
		Replaces: GitKeyPrefix(g.path, u.Ref, len(u.Old)),
	}, nil
}

// where is how a title says where an update goes: "main in shop".
func (g *gitRepo) where(ref string) string { return shortRef(ref) + " in " + repoName(g.path) }

// describeDelete writes what deleting u.Ref takes away, and returns the
// title.
func (g *gitRepo) describeDelete(ctx context.Context, w *strings.Builder, u gitUpdate) (string, error) {
	fmt.Fprintf(w, "Deletes %s in %s, which points at %s.\n", u.Ref, g.path, shortID(u.Old))
	if g.isCommit(ctx, u.Old) {
		l, err := g.commits(ctx, "-n", "1", u.Old)
		if err != nil {
			return "", err
		}
		writeCommits(w, "It points at:", l.shown, 0)
	}
	return "Delete " + u.Ref + " in " + repoName(g.path), nil
}

// describeFastForward writes the commits a fast-forward adds and its
// diffstat, and returns the title.
func (g *gitRepo) describeFastForward(ctx context.Context, w *strings.Builder, u gitUpdate) (string, error) {
	l, err := g.commits(ctx, u.Old+".."+u.New)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(w, "%s, %s..%s, %s.\n", u.Ref, shortID(u.Old), shortID(u.New), g.path)
	writeCommits(w, "New commits, newest first:", l.shown, l.total)
	if err := g.writeDiffstat(ctx, w, u.Old, u.New, ""); err != nil {
		return "", err
	}
	return fmt.Sprintf("Push %s to %s", countOf(l.total, "commit"), g.where(u.Ref)), nil
}

// describeForce writes the commits a non-fast-forward update adds and those
// it drops from the ref, and its diffstat, and returns the title.
func (g *gitRepo) describeForce(ctx context.Context, w *strings.Builder, u gitUpdate) (string, error) {
	title := "Force-push (non-fast-forward) to " + g.where(u.Ref)
	fmt.Fprintf(w, "Not a fast-forward: %s moves from %s to %s, %s.\n", u.Ref, shortID(u.Old), shortID(u.New), g.path)
	if !g.isCommit(ctx, u.Old) || !g.isCommit(ctx, u.New) {
		return title, nil // a tag moved between trees, say: no commits to list
	}
	added, err := g.commits(ctx, u.Old+".."+u.New)
	if err != nil {
		return "", err
	}
	removed, err := g.commits(ctx, u.New+".."+u.Old)
	if err != nil {
		return "", err
	}
	writeCommits(w, "New commits, newest first:", added.shown, added.total)
	writeCommits(w, "Commits no longer on "+shortRef(u.Ref)+":", removed.shown, removed.total)
	return title, g.writeDiffstat(ctx, w, u.Old, u.New, "")
}

// describeCreate writes the commits a new ref brings, those no other ref
// has, and their diffstat from where they leave the other refs (the empty
// tree for a history all new), and returns the title.
func (g *gitRepo) describeCreate(ctx context.Context, w *strings.Builder, u gitUpdate) (string, error) {
	if !g.isCommit(ctx, u.New) {
		fmt.Fprintf(w, "Creates %s at %s, %s (not a commit).\n", u.Ref, shortID(u.New), g.path)
		return "Create " + g.where(u.Ref), nil
	}
	l, err := g.commits(ctx, u.New, "--not", "--all")
	if err != nil {
		return "", err
	}
	fmt.Fprintf(w, "Creates %s at %s, %s.\n", u.Ref, shortID(u.New), g.path)
	writeCommits(w, "Commits no other ref has:", l.shown, l.total)
	title := fmt.Sprintf("Create %s with %s", g.where(u.Ref), countOf(l.total, "new commit"))
	if l.total == 0 {
		return title, nil
	}
	from, label := "", "against the empty tree"
	if len(l.boundary) > 0 {
		from, label = l.boundary[0], "against "+shortID(l.boundary[0])+", where it leaves the other refs"
	} else if from, err = g.emptyTree(ctx); err != nil {
		return "", err
	}
	return title, g.writeDiffstat(ctx, w, from, u.New, label)
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
