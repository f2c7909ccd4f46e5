package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/testserver"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.RemoveBinary()
	os.Exit(code)
}

// The files askd install git-gate writes beside the pre-receive hook, and
// what its hook says when it finds no askd to run.
const (
	configFile  = "askd-gate.conf"
	chainedHook = "pre-receive.askd-chained"
	missingAskd = "askd: askd is neither where askd install git-gate found it nor on PATH, so the git gate refuses this push"
)

// gitGate is a bare repository with askd's git gate, installed by the real
// askd binary against a real askd serve, and a clone to push from.
type gitGate struct {
	t          testing.TB
	srv        *testserver.Served
	human      *client.Client
	bare, work string
	env        []string // git's environment: no ASKD_* unless a push adds them
}

// newGitGate starts askd serve and installs the gate with installArgs into
// a new bare repository named repo.git, with ASKD_URL and ASKD_TOKEN set
// for install only: the hook finds them in the file install writes.
func newGitGate(t testing.TB, installArgs ...string) *gitGate {
	t.Helper()
	srv := testserver.ServeBinary(t)
	dir := t.TempDir()
	g := &gitGate{t: t, srv: srv, human: client.New(srv.URL, srv.Human),
		bare: filepath.Join(dir, "repo.git"), work: filepath.Join(dir, "work")}
	g.env = gitTestEnv(dir)
	g.git(dir, "init", "--quiet", "--bare", g.bare)
	g.git(dir, "init", "--quiet", "--initial-branch=main", g.work)
	g.git(g.work, "remote", "add", "origin", g.bare)
	out, err := g.askd(append([]string{"ASKD_URL=" + srv.URL, "ASKD_TOKEN=" + srv.Agent}, g.env...), append(append([]string{"install", "git-gate"}, installArgs...), g.bare)...)
	if err != nil {
		t.Fatalf("askd install git-gate: %v\n%s", err, out)
	}
	return g
}

// gitTestEnv is an environment for git with no user's or system's
// configuration and no ASKD_* variables.
func gitTestEnv(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C",
		"GIT_AUTHOR_NAME=Dev", "GIT_AUTHOR_EMAIL=dev@example.com",
		"GIT_COMMITTER_NAME=Dev", "GIT_COMMITTER_EMAIL=dev@example.com",
	}
}

// askd runs the real askd binary with env and returns its output.
func (g *gitGate) askd(env []string, args ...string) (string, error) {
	cmd := exec.Command(testserver.Binary(g.t), args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// git runs git in dir and returns its output; a failure fails the test.
func (g *gitGate) git(dir string, args ...string) string {
	g.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, g.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit commits a change to file in the clone and returns its id.
func (g *gitGate) commit(file, subject string) string {
	g.t.Helper()
	f, err := os.OpenFile(filepath.Join(g.work, file), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		_, err = fmt.Fprintln(f, subject)
		f.Close()
	}
	if err != nil {
		g.t.Fatal(err)
	}
	g.git(g.work, "add", file)
	g.git(g.work, "commit", "--quiet", "-m", subject)
	return g.git(g.work, "rev-parse", "HEAD")
}

// push runs git push origin args with extra environment variables and
// returns what git printed (the hook's lines among it) and whether the push
// went through.
func (g *gitGate) push(extraEnv []string, args ...string) (string, bool) {
	g.t.Helper()
	cmd := exec.Command("git", append([]string{"push", "origin"}, args...)...)
	cmd.Dir, cmd.Env = g.work, append(append([]string{}, g.env...), extraEnv...)
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		g.t.Fatal(err)
	}
	return string(out), err == nil
}

// remoteRef is where ref points in the bare repository, "" for nowhere.
func (g *gitGate) remoteRef(ref string) string {
	g.t.Helper()
	cmd := exec.Command("git", "rev-parse", "--verify", "--quiet", ref)
	cmd.Dir, cmd.Env = g.bare, g.env
	out, _ := cmd.Output()
	return strings.TrimSpace(string(out))
}

var waitingLine = regexp.MustCompile(`askd: approval #(\d+) is waiting \((.*)\) — push again once it is approved`)

// refused checks that a push was refused at once with a waiting approval
// and returns that approval as the server has it.
func (g *gitGate) refused(out string, ok bool) *client.AskDetail {
	g.t.Helper()
	m := waitingLine.FindStringSubmatch(out)
	if ok || m == nil {
		g.t.Fatalf("push accepted %v, output:\n%s\nwant it refused with a waiting approval", ok, out)
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	a, err := g.human.Show(context.Background(), id)
	if err != nil {
		g.t.Fatal(err)
	}
	if a.Title != m[2] || a.Status != askd.StatusPending || a.Kind != askd.KindApproval || a.ToolName != "git push" {
		g.t.Fatalf("ask #%d: %s %s %q tool %q; want a pending approval, tool git push, titled %q", id, a.Status, a.Kind, a.Title, a.ToolName, m[2])
	}
	return a
}

// asks is every ask the server holds, whatever its status.
func (g *gitGate) asks() []*askd.Ask {
	g.t.Helper()
	var all []*askd.Ask
	for _, st := range []askd.Status{askd.StatusPending, askd.StatusAnswered, askd.StatusCancelled} {
		l, err := g.human.List(context.Background(), client.ListOptions{Status: st, Limit: 200})
		if err != nil {
			g.t.Fatal(err)
		}
		all = append(all, l...)
	}
	return all
}

func (g *gitGate) answer(id int64, decision, comment string) {
	g.t.Helper()
	if _, err := g.human.Answer(context.Background(), id, &askd.Answer{Decision: decision, Comment: comment}); err != nil {
		g.t.Fatalf("answer #%d %s: %v", id, decision, err)
	}
}

func payloadOf(t *testing.T, a *client.AskDetail) gitPushPayload {
	t.Helper()
	var p gitPushPayload
	if err := json.Unmarshal(a.Payload, &p); err != nil {
		t.Fatalf("ask #%d's payload %s: %v", a.ID, a.Payload, err)
	}
	return p
}

// TestGitGate pushes with real git to a real bare repository whose
// pre-receive hook askd install git-gate wrote, against a real askd serve:
// an unprotected branch never asks; a push to main is refused at once with
// the approval's number, and accepted, without a new ask, when pushed again
// once approved; a new commit asks again; a newer push replaces the older
// one's pending ask; a rejection refuses with its comment, a dismissal with
// its words; force-push and deletion are asked as such.
func TestGitGate(t *testing.T) {
	g := newGitGate(t, "--ref", "refs/heads/main", "--ref", "refs/tags/*")
	repo, err := filepath.EvalSymlinks(g.bare)
	if err != nil {
		t.Fatal(err)
	}
	base := g.commit("README", "Start the project")

	// An unprotected branch: pushed, no one asked.
	if out, ok := g.push(nil, "HEAD:refs/heads/feature"); !ok || len(g.asks()) != 0 {
		t.Fatalf("push to an unprotected branch: accepted %v, %d asks:\n%s", ok, len(g.asks()), out)
	}

	// main, new: refused at once with the id; the card says what comes.
	first := g.commit("app.go", "Add the app")
	created := g.refused(g.push(nil, "HEAD:refs/heads/main"))
	if g.remoteRef("refs/heads/main") != "" {
		t.Fatal("main was created while its approval waits")
	}
	p := payloadOf(t, created)
	want := gitPushPayload{Command: repo + " refs/heads/main", Repository: repo, Ref: "refs/heads/main", Old: strings.Repeat("0", 40), New: first, Kind: "create"}
	if p != want {
		t.Errorf("payload %+v, want %+v", p, want)
	}
	if created.Title != "Create main in repo with 1 new commit" || !strings.Contains(created.Details, first[:12]+" Add the app") || strings.Contains(created.Details, "Start the project") {
		t.Errorf("title %q, details:\n%s\nwant the commit no other ref has, and not the one feature has", created.Title, created.Details)
	}
	if !strings.Contains(created.Details, "app.go | 1 +") || created.Session != "repo" {
		t.Errorf("session %q, details:\n%s\nwant session repo and the diffstat", created.Session, created.Details)
	}

	// Approved: the same push goes through, and no new ask is made.
	g.answer(created.ID, askd.DecisionApproved, "")
	if out, ok := g.push(nil, "HEAD:refs/heads/main"); !ok || !strings.Contains(out, fmt.Sprintf("approval #%d (%s) approved by", created.ID, created.Title)) {
		t.Fatalf("the approved push: accepted %v:\n%s", ok, out)
	}
	if g.remoteRef("refs/heads/main") != first || len(g.asks()) != 1 {
		t.Fatalf("main at %q, %d asks; want %s and still one ask", g.remoteRef("refs/heads/main"), len(g.asks()), first)
	}

	// A new commit asks again; a newer one replaces that pending ask.
	g.commit("app.go", "Handle errors")
	older := g.refused(g.push(nil, "HEAD:refs/heads/main"))
	if older.ID == created.ID || older.Title != "Push 1 commit to main in repo" {
		t.Fatalf("a new commit: ask #%d %q; want a new ask titled Push 1 commit to main in repo", older.ID, older.Title)
	}
	second := g.commit("app.go", "Log the errors")
	newer := g.refused(g.push(nil, "HEAD:refs/heads/main"))
	if newer.ID == older.ID || newer.Title != "Push 2 commits to main in repo" || !strings.Contains(newer.Details, second[:12]+" Log the errors") {
		t.Fatalf("a newer push: ask #%d %q:\n%s", newer.ID, newer.Title, newer.Details)
	}
	if o, err := g.human.Show(context.Background(), older.ID); err != nil || o.Status != askd.StatusCancelled || o.CancelReason != askd.ReasonReplaced {
		t.Fatalf("the older push's ask after the newer push: %+v, %v; want cancelled, replaced", o, err)
	}

	// Rejected: the push is refused with the comment, every time.
	g.answer(newer.ID, askd.DecisionRejected, "not before the release")
	for range 2 {
		out, ok := g.push(nil, "HEAD:refs/heads/main")
		if ok || !strings.Contains(out, fmt.Sprintf("askd: approval #%d (%s) was rejected by", newer.ID, newer.Title)) || !strings.Contains(out, ": not before the release") {
			t.Fatalf("the rejected push: accepted %v:\n%s", ok, out)
		}
	}

	// Force-push: asked as such.
	g.git(g.work, "reset", "--quiet", "--hard", base)
	g.commit("other.go", "Start over")
	forced := g.refused(g.push(nil, "--force", "HEAD:refs/heads/main"))
	if forced.Title != "Force-push (non-fast-forward) to main in repo" || payloadOf(t, forced).Kind != "force" || !strings.Contains(forced.Details, "Commits no longer on main:") || !strings.Contains(forced.Details, "Add the app") {
		t.Errorf("force-push: %q:\n%s", forced.Title, forced.Details)
	}

	// Deletion: asked as such.
	deleted := g.refused(g.push(nil, ":refs/heads/main"))
	if deleted.Title != "Delete refs/heads/main in repo" || payloadOf(t, deleted).Kind != "delete" {
		t.Errorf("deletion: %q, payload %s", deleted.Title, deleted.Payload)
	}
	if g.remoteRef("refs/heads/main") != first {
		t.Errorf("main moved to %q while no push to it was approved", g.remoteRef("refs/heads/main"))
	}

	// A tag matches refs/tags/*.
	g.git(g.work, "tag", "v1.0", first)
	tag := g.refused(g.push(nil, "refs/tags/v1.0"))
	if tag.Title != "Create tag v1.0 in repo with 0 new commits" {
		t.Errorf("tag: %q", tag.Title)
	}
	// Dismissed: refused with the person's words.
	if _, err := g.human.Dismiss(context.Background(), tag.ID, "tags come from CI"); err != nil {
		t.Fatal(err)
	}
	if out, ok := g.push(nil, "refs/tags/v1.0"); ok || !strings.Contains(out, fmt.Sprintf("askd: approval #%d (%s) was dismissed by", tag.ID, tag.Title)) || !strings.Contains(out, ": tags come from CI") {
		t.Errorf("the dismissed push: accepted %v:\n%s", ok, out)
	}
}

// TestGitGateFailsClosed: a hook that cannot ask refuses the push, saying
// why: askd unreachable, no token, a config file others may read.
func TestGitGateFailsClosed(t *testing.T) {
	g := newGitGate(t)
	g.commit("README", "Start")
	closed := closedURL(t)
	out, ok := g.push([]string{"ASKD_URL=" + closed}, "HEAD:refs/heads/main")
	if ok || !strings.Contains(out, "askd: push refused: refs/heads/main: askd at "+closed+": nothing answers there") {
		t.Errorf("askd down: accepted %v:\n%s", ok, out)
	}
	config := filepath.Join(g.bare, "hooks", configFile)
	if err := os.Chmod(config, 0o644); err != nil {
		t.Fatal(err)
	}
	out, ok = g.push(nil, "HEAD:refs/heads/main")
	if ok || !strings.Contains(out, "is mode 0644, open to others, and holds an agent token") {
		t.Errorf("config open to others: accepted %v:\n%s", ok, out)
	}
	if err := os.Remove(config); err != nil {
		t.Fatal(err)
	}
	out, ok = g.push(nil, "HEAD:refs/heads/main")
	if ok || !strings.Contains(out, "askd: push refused: no agent token") {
		t.Errorf("no token: accepted %v:\n%s", ok, out)
	}
	// ASKD_URL and ASKD_TOKEN in git's environment are enough.
	g.refused(g.push([]string{"ASKD_URL=" + g.srv.URL, "ASKD_TOKEN=" + g.srv.Agent}, "HEAD:refs/heads/main"))
	if len(g.asks()) != 1 {
		t.Errorf("%d asks; want only the one asked with a token", len(g.asks()))
	}
}

// closedURL is the URL of a port on 127.0.0.1 where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// TestGitGateChainsTheHookThere: a pre-receive hook that was there before
// askd's runs first: its refusal refuses the push before anyone is asked;
// once it accepts, askd asks. Installing again changes nothing.
func TestGitGateChainsTheHookThere(t *testing.T) {
	srv := testserver.ServeBinary(t)
	dir := t.TempDir()
	g := &gitGate{t: t, srv: srv, human: client.New(srv.URL, srv.Human), bare: filepath.Join(dir, "repo.git"), work: filepath.Join(dir, "work"), env: gitTestEnv(dir)}
	g.git(dir, "init", "--quiet", "--bare", g.bare)
	g.git(dir, "init", "--quiet", "--initial-branch=main", g.work)
	g.git(g.work, "remote", "add", "origin", g.bare)
	theirs := "#!/bin/sh\nwhile read old new ref; do echo \"policy saw $ref\"; done\n[ ! -e \"$GIT_DIR/closed\" ] || { echo 'repository closed' >&2; exit 1; }\n"
	hook := filepath.Join(g.bare, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte(theirs), 0o755); err != nil {
		t.Fatal(err)
	}
	env := append([]string{"ASKD_URL=" + srv.URL, "ASKD_TOKEN=" + srv.Agent}, g.env...)
	for i, want := range []string{"wrote", "unchanged"} {
		out, err := g.askd(env, "install", "git-gate", g.bare)
		if err != nil || !strings.Contains(out, want+"     "+hook) && !strings.Contains(out, want+" "+hook) {
			t.Fatalf("install %d: %v\n%s", i+1, err, out)
		}
	}
	if kept, err := os.ReadFile(filepath.Join(g.bare, "hooks", chainedHook)); err != nil || string(kept) != theirs {
		t.Fatalf("the hook that was there: %q, %v", kept, err)
	}
	g.commit("README", "Start")
	if err := os.WriteFile(filepath.Join(g.bare, "closed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, ok := g.push(nil, "HEAD:refs/heads/main")
	if ok || !strings.Contains(out, "policy saw refs/heads/main") || !strings.Contains(out, "repository closed") || len(g.asks()) != 0 {
		t.Fatalf("refused by the chained hook: accepted %v, %d asks:\n%s", ok, len(g.asks()), out)
	}
	os.Remove(filepath.Join(g.bare, "closed"))
	out, ok = g.push(nil, "HEAD:refs/heads/main")
	g.refused(out, ok)
	if !strings.Contains(out, "policy saw refs/heads/main") {
		t.Errorf("the chained hook's output is not passed on:\n%s", out)
	}
}

// TestGitGateHookRunsUnderPOSIXShells runs the pre-receive hook askd
// install git-gate writes under every POSIX shell found here (git runs it
// with /bin/sh, dash on Debian), as git does, in the bare repository with
// the updates on stdin: it asks, refusing at once; with no askd to run it
// refuses, saying so.
func TestGitGateHookRunsUnderPOSIXShells(t *testing.T) {
	var shells [][]string
	for _, sh := range [][]string{{"sh"}, {"dash"}, {"bash", "--posix"}, {"busybox", "sh"}} {
		if _, err := exec.LookPath(sh[0]); err == nil {
			shells = append(shells, sh)
		}
	}
	g := newGitGate(t, "--ref", "refs/heads/main")
	id := g.commit("README", "Start")
	if out, ok := g.push(nil, "HEAD:refs/heads/feature"); !ok {
		t.Fatalf("push to feature: %s", out)
	}
	input := strings.Repeat("0", 40) + " " + id + " refs/heads/main\n"
	for _, sh := range shells {
		for _, c := range []struct {
			name     string
			hook     string // the hook's text, with askd's path replaced
			want     string
			newAsk   bool
			noOnPath bool
		}{
			{name: "asks", want: "askd: approval #", newAsk: true},
			{name: "askd missing", hook: "/nonexistent/askd", want: missingAskd, noOnPath: true},
		} {
			t.Run(strings.Join(sh, " ")+"/"+c.name, func(t *testing.T) {
				hook := filepath.Join("hooks", "pre-receive")
				if c.hook != "" {
					script, err := os.ReadFile(filepath.Join(g.bare, hook))
					if err != nil {
						t.Fatal(err)
					}
					moved := regexp.MustCompile(`(?m)^askd=.*$`).ReplaceAllString(string(script), "askd='"+c.hook+"'")
					hook = filepath.Join("hooks", "pre-receive-moved")
					if err := os.WriteFile(filepath.Join(g.bare, hook), []byte(moved), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				before := len(g.asks())
				cmd := exec.Command(sh[0], append(sh[1:], hook)...)
				cmd.Dir, cmd.Env, cmd.Stdin = g.bare, append([]string{"GIT_DIR=."}, g.env...), strings.NewReader(input)
				if c.noOnPath {
					cmd.Env = append(cmd.Env, "PATH=/usr/bin:/bin")
				}
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), c.want) {
					t.Errorf("status %d (%v), stdout %q, stderr %q; want 1 and %q", cmd.ProcessState.ExitCode(), err, stdout.String(), stderr.String(), c.want)
				}
				if c.newAsk && len(g.asks()) == 0 || !c.newAsk && len(g.asks()) != before {
					t.Errorf("%d asks, were %d", len(g.asks()), before)
				}
			})
		}
	}
}

// TestGitGatePolicy: a policy matches gate asks by the prefix of their
// command, "<repository> <ref>" (SPEC §12: "2 approvals for pushes to
// main"): a push to main waits for two people, and is refused, the same
// ask, until the second approves; a push to another branch needs one.
func TestGitGatePolicy(t *testing.T) {
	g := newGitGate(t)
	repo, err := filepath.EvalSymlinks(g.bare)
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Fields(testserver.Output(t, "token", "create", "--human", "bob", "--db", g.srv.DB))
	bob := client.New(g.srv.URL, out[len(out)-1])
	ctx := context.Background()
	if _, err := g.human.CreatePolicy(ctx, &askd.PolicyInput{Match: askd.MatchPrefix, Tool: "git push", Prefix: repo + " refs/heads/main", Approvals: 2}); err != nil {
		t.Fatal(err)
	}
	g.commit("README", "Start")
	toMain := g.refused(g.push(nil, "HEAD:refs/heads/main"))
	toDev := g.refused(g.push(nil, "HEAD:refs/heads/dev"))
	if toMain.ApprovalsNeeded != 2 || toDev.ApprovalsNeeded != 0 {
		t.Fatalf("approvals needed: main %d, dev %d; want 2 and 0", toMain.ApprovalsNeeded, toDev.ApprovalsNeeded)
	}
	g.answer(toMain.ID, askd.DecisionApproved, "")
	if again := g.refused(g.push(nil, "HEAD:refs/heads/main")); again.ID != toMain.ID {
		t.Fatalf("after one approval: ask #%d, want #%d again", again.ID, toMain.ID)
	}
	if _, err := bob.Answer(ctx, toMain.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	if out, ok := g.push(nil, "HEAD:refs/heads/main"); !ok {
		t.Fatalf("after two approvals: refused\n%s", out)
	}
}

// TestGitGateDescribedDifferently: a new branch lists the commits no other
// ref has, so another ref's deletion changes what the same push would ask;
// askd refuses other words under the same key (409), and the hook refuses
// the push, saying what to do, rather than let an old yes cover it.
func TestGitGateDescribedDifferently(t *testing.T) {
	g := newGitGate(t, "--ref", "refs/heads/main")
	g.commit("README", "Start")
	if out, ok := g.push(nil, "HEAD:refs/heads/feature"); !ok {
		t.Fatal(out)
	}
	g.commit("app.go", "Add the app")
	asked := g.refused(g.push(nil, "HEAD:refs/heads/main"))
	g.answer(asked.ID, askd.DecisionApproved, "")
	if out, ok := g.push(nil, ":refs/heads/feature"); !ok {
		t.Fatal(out)
	}
	out, ok := g.push(nil, "HEAD:refs/heads/main")
	if ok || !strings.Contains(out, "was asked with other content") || !strings.Contains(out, "make a new commit, or amend, and push that") {
		t.Fatalf("the same update described differently: accepted %v\n%s", ok, out)
	}
	if n := len(g.asks()); n != 1 {
		t.Errorf("%d asks, want 1", n)
	}
}

// TestGitGateSeveralRefs: a push of several protected refs asks for each,
// refuses naming every one that waits, and goes through only once all are
// approved (git takes or refuses a push as a whole).
func TestGitGateSeveralRefs(t *testing.T) {
	g := newGitGate(t, "--ref", "refs/heads/main", "--ref", "refs/tags/*")
	id := g.commit("README", "Start")
	g.git(g.work, "tag", "v1", id)
	out, ok := g.push(nil, "HEAD:refs/heads/main", "refs/tags/v1")
	lines := waitingLine.FindAllStringSubmatch(out, -1)
	if ok || len(lines) != 2 {
		t.Fatalf("accepted %v, %d waiting approvals named; want 2:\n%s", ok, len(lines), out)
	}
	first, _ := strconv.ParseInt(lines[0][1], 10, 64)
	g.answer(first, askd.DecisionApproved, "")
	out, ok = g.push(nil, "HEAD:refs/heads/main", "refs/tags/v1")
	if ok || len(waitingLine.FindAllStringSubmatch(out, -1)) != 1 || g.remoteRef("refs/heads/main") != "" {
		t.Fatalf("one of two approved: accepted %v, main at %q:\n%s", ok, g.remoteRef("refs/heads/main"), out)
	}
	second, _ := strconv.ParseInt(waitingLine.FindStringSubmatch(out)[1], 10, 64)
	g.answer(second, askd.DecisionApproved, "")
	if out, ok := g.push(nil, "HEAD:refs/heads/main", "refs/tags/v1"); !ok || g.remoteRef("refs/heads/main") != id || g.remoteRef("refs/tags/v1") != id {
		t.Fatalf("both approved: accepted %v:\n%s", ok, out)
	}
	if n := len(g.asks()); n != 2 {
		t.Errorf("%d asks, want 2", n)
	}
}
