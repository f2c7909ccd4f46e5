package main

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

func payloadOf(t *testing.T, a *client.AskDetail) gatePayload {
	t.Helper()
	var p gatePayload
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
// one's pending ask; a rejection refuses with its comment; force-push and
// deletion are asked as such.
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
	want := gatePayload{Command: repo + " refs/heads/main", Repository: repo, Ref: "refs/heads/main", Old: strings.Repeat("0", 40), New: first, Kind: "create"}
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
	if tag := g.refused(g.push(nil, "refs/tags/v1.0")); tag.Title != "Create tag v1.0 in repo with 0 new commits" {
		t.Errorf("tag: %q", tag.Title)
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
	config := filepath.Join(g.bare, "hooks", gateConfigName)
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
	if kept, err := os.ReadFile(filepath.Join(g.bare, "hooks", gateChainedName)); err != nil || string(kept) != theirs {
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

// TestInstallGitGateBadInput: an invalid pattern, or a path that is not a
// bare repository itself, is a clear error, and nothing is written.
func TestInstallGitGateBadInput(t *testing.T) {
	dir := t.TempDir()
	env := gitTestEnv(dir)
	gitIn := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	bare := filepath.Join(dir, "repo.git")
	gitIn(dir, "init", "--quiet", "--bare", bare)
	gitIn(dir, "init", "--quiet", filepath.Join(dir, "worktree"))
	plain := filepath.Join(dir, "plain")
	if err := os.Mkdir(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		args   []string
		status int
		want   string
	}{
		{"two dots", []string{"--ref", "refs/heads/a..b", bare}, 2, `--ref "refs/heads/a..b": not a valid ref pattern`},
		{"two stars", []string{"--ref", "refs/*/*", bare}, 2, `--ref "refs/*/*": more than one *`},
		{"a space", []string{"--ref", "refs/heads/my branch", bare}, 2, `--ref "refs/heads/my branch": not a valid ref pattern`},
		{"short name", []string{"--ref", "main", bare}, 2, `--ref "main": not a full ref name: patterns start with refs/`},
		{"control character", []string{"--ref", "refs/heads/\x1b[31m", bare}, 2, "not a valid ref pattern"},
		{"no such directory", []string{filepath.Join(dir, "nope.git")}, 1, "nope.git: no such directory"},
		{"a file", []string{file}, 1, "is not a directory"},
		{"not a repository", []string{plain}, 1, "plain is not a git repository"},
		{"a work tree", []string{filepath.Join(dir, "worktree")}, 1, "worktree is not a bare repository"},
		{"inside a bare repository", []string{filepath.Join(bare, "hooks")}, 1, "is inside the bare repository"},
		{"a human token", []string{"--token", "askd_h_nope", bare}, 2, "that is a human token"},
		{"a bad URL", []string{"--url", "ftp://x", bare}, 2, `--url: "ftp://x" is not an http:// or https:// URL`},
		{"two repositories", []string{bare, plain}, 2, "one repository, not 2"},
	}
	before := listTree(t, dir)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(context.Background(), append([]string{"install", "git-gate", "--token", "askd_a_test"}, c.args...), strings.NewReader(""), &out, &errb)
			if status := exitCode(err); status != c.status || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("exit %d, %v; want %d and an error holding %q", status, err, c.status, c.want)
			}
			if out.Len() > 0 {
				t.Errorf("printed %q", out.String())
			}
			if after := listTree(t, dir); after != before {
				t.Errorf("files changed:\n%s\nwere:\n%s", after, before)
			}
		})
	}
}

// listTree lists the files under dir with their modes and sizes.
func listTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %s %d\n", path, info.Mode(), info.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestInstallGitGateFiles: install writes the hook (0755) and the config
// (0600, from --url and --token), a second run changes nothing, a run with
// other patterns replaces askd's own hook, and a run without a token keeps
// the config there.
func TestInstallGitGateFiles(t *testing.T) {
	dir := t.TempDir()
	bare := filepath.Join(dir, "repo.git")
	cmd := exec.Command("git", "init", "--quiet", "--bare", bare)
	cmd.Env = gitTestEnv(dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	install := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if err := run(context.Background(), append([]string{"install", "git-gate"}, args...), strings.NewReader(""), &out, &errb); err != nil {
			t.Fatalf("install %v: %v\n%s", args, err, errb.String())
		}
		return out.String()
	}
	hook, config := filepath.Join(bare, "hooks", "pre-receive"), filepath.Join(bare, "hooks", gateConfigName)
	args := []string{"--ref", "refs/heads/main", "--url", "https://askd.example.com/", "--token", "askd_a_secret", bare}
	if out := install(args...); !strings.Contains(out, "wrote     "+hook) || !strings.Contains(out, "wrote     "+config) {
		t.Fatalf("first run:\n%s", out)
	}
	if out := install(args...); !strings.Contains(out, "unchanged "+hook) || !strings.Contains(out, "unchanged "+config) {
		t.Fatalf("second run:\n%s", out)
	}
	conf, _ := os.ReadFile(config)
	if !strings.Contains(string(conf), "\nurl=https://askd.example.com\ntoken=askd_a_secret\n") || fileMode(t, config) != 0o600 {
		t.Errorf("config %04o:\n%s", fileMode(t, config), conf)
	}
	script, _ := os.ReadFile(hook)
	if fileMode(t, hook) != 0o755 || strings.Contains(string(script), "askd_a_") || !strings.HasSuffix(string(script), ` gate git --config "${0%/*}/askd-gate.conf" --ref 'refs/heads/main'`+"\n") {
		t.Errorf("hook %04o:\n%s", fileMode(t, hook), script)
	}
	// Other patterns replace askd's own hook; no token keeps the config.
	install("--ref", "refs/heads/main", "--ref", "refs/tags/*", "--ref", "refs/heads/main", bare)
	script, _ = os.ReadFile(hook)
	if !strings.HasSuffix(string(script), ` --ref 'refs/heads/main' --ref 'refs/tags/*'`+"\n") {
		t.Errorf("hook after other patterns:\n%s", script)
	}
	if kept, _ := os.ReadFile(config); !bytes.Equal(kept, conf) {
		t.Errorf("config after a run without a token:\n%s", kept)
	}
	if _, err := os.Stat(filepath.Join(bare, "hooks", gateChainedName)); err == nil {
		t.Error("askd's own hook was chained")
	}
	// A hook that is not askd's where one is chained already: refused, naming both.
	if err := os.WriteFile(filepath.Join(bare, "hooks", gateChainedName), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"install", "git-gate", bare}, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), hook+" is not askd's, and "+filepath.Join(bare, "hooks", gateChainedName)) {
		t.Errorf("two hooks not askd's: %v", err)
	}
}

func fileMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
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
			{name: "askd missing", hook: "/nonexistent/askd", want: gateMissingAskd, noOnPath: true},
		} {
			t.Run(strings.Join(sh, " ")+"/"+c.name, func(t *testing.T) {
				hook := filepath.Join("hooks", "pre-receive")
				if c.hook != "" {
					script, err := os.ReadFile(filepath.Join(g.bare, hook))
					if err != nil {
						t.Fatal(err)
					}
					moved := regexp.MustCompile(`(?m)^askd=.*$`).ReplaceAllString(string(script), "askd="+shellQuote(c.hook))
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

// TestGateKey: a key names repository, ref, kind, old and new commit in at
// most askd.MaxGateKeyChars characters, printable, and starts with its
// ref's prefix (what a newer push replaces); a long or unprintable path is
// hashed, and different refs never share a prefix.
func TestGateKey(t *testing.T) {
	old, new := strings.Repeat("a", 40), strings.Repeat("b", 40)
	cases := []struct {
		name, repo, ref string
		idLen           int
		plain           bool
	}{
		{"short", "/srv/git/app.git", "refs/heads/main", 40, true},
		{"spaces", "/srv/git/my app.git", "refs/heads/main", 40, true},
		{"long path", "/srv/" + strings.Repeat("deep/", 30) + "app.git", "refs/heads/main", 40, false},
		{"control character", "/srv/git/a\nb.git", "refs/heads/main", 40, false},
		{"sha256", "/srv/git/app.git", "refs/heads/main", 64, true},
		{"sha256, longer path", "/srv/git/teams/platform/projects/app.git", "refs/heads/main", 64, false},
		{"long ref", "/srv/git/app.git", "refs/heads/" + strings.Repeat("x", 180), 40, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, n := strings.Repeat("a", c.idLen), strings.Repeat("b", c.idLen)
			prefix := gateKeyPrefix(c.repo, c.ref, c.idLen)
			for _, kind := range []string{updateFastForward, updateCreate, updateDelete, updateForce} {
				key := gateKey(c.repo, c.ref, kind, o, n)
				if len([]rune(key)) > askd.MaxGateKeyChars || askd.Printable(key) != key || !strings.HasPrefix(key, prefix) {
					t.Errorf("%s: key %q (%d characters), prefix %q", kind, key, len([]rune(key)), prefix)
				}
			}
			if got := strings.Contains(prefix, c.repo); got != c.plain {
				t.Errorf("prefix %q names the repository: %v, want %v", prefix, got, c.plain)
			}
		})
	}
	if k1, k2 := gateKey("/r.git", "refs/heads/main", updateFastForward, old, new), gateKeyPrefix("/r.git", "refs/heads/main2", 40); strings.HasPrefix(k1, k2) {
		t.Errorf("main's key %q starts with main2's prefix %q", k1, k2)
	}
}

func TestParseUpdates(t *testing.T) {
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	got, err := parseUpdates([]byte(a + " " + b + " refs/heads/main\n" + strings.Repeat("0", 40) + " " + b + " refs/tags/v1\n"))
	if err != nil || len(got) != 2 || got[0] != (gitUpdate{a, b, "refs/heads/main"}) || got[1].Ref != "refs/tags/v1" {
		t.Fatalf("%+v, %v", got, err)
	}
	if got, err := parseUpdates(nil); err != nil || len(got) != 0 {
		t.Errorf("no input: %+v, %v", got, err)
	}
	for _, bad := range []string{"x", a + " " + b, a + " " + b[:39] + " refs/heads/main", a + " " + b + " main", a + " " + b + " refs/heads/a\x1bb", a + " " + strings.Repeat("b", 64) + " refs/heads/main"} {
		if _, err := parseUpdates([]byte(bad + "\n")); err == nil {
			t.Errorf("%q was read", bad)
		}
	}
}

func TestRefPatterns(t *testing.T) {
	p := refPatterns{"refs/heads/main", "refs/tags/*", "refs/heads/release/*-stable"}
	for ref, want := range map[string]bool{
		"refs/heads/main": true, "refs/heads/main2": false, "refs/heads/mai": false,
		"refs/tags/v1": true, "refs/tags/a/b": true, "refs/tagsx": false,
		"refs/heads/release/2-stable": true, "refs/heads/release/2/x-stable": true, "refs/heads/release/-stable": true, "refs/heads/release/2": false,
	} {
		if p.match(ref) != want {
			t.Errorf("%s: %v, want %v", ref, !want, want)
		}
	}
	if !(refPatterns{}).match("refs/anything") {
		t.Error("no patterns must protect every ref")
	}
}

// TestDescribeUpdateIsTheSameEveryTime: the same update is described byte
// for byte the same, whatever the terminal width the hook runs with, so
// that a push made again after approval finds its ask by key.
func TestDescribeUpdateIsTheSameEveryTime(t *testing.T) {
	g := newGitGate(t, "--ref", "refs/heads/nothing")
	old := g.commit("a.go", "One")
	for i := range 60 {
		g.commit(fmt.Sprintf("f%d.go", i), fmt.Sprintf("Change %d with `code` and *stars*", i))
	}
	if out, ok := g.push(nil, "HEAD:refs/heads/main", old+":refs/heads/base"); !ok {
		t.Fatal(out)
	}
	new := g.remoteRef("refs/heads/main")
	t.Chdir(g.bare)
	repo, err := hookRepository()
	if err != nil {
		t.Fatal(err)
	}
	var first *askd.AskInput
	for _, columns := range []string{"20", "300"} {
		t.Setenv("COLUMNS", columns)
		in, err := repo.describeUpdate(context.Background(), gitUpdate{Old: old, New: new, Ref: "refs/heads/main"})
		if err != nil {
			t.Fatal(err)
		}
		if err := in.Validate(false); err != nil {
			t.Fatalf("%v:\n%s", err, in.Details)
		}
		if first == nil {
			first = in
			continue
		}
		if in.Title != first.Title || in.Details != first.Details || string(in.Payload) != string(first.Payload) || in.Key != first.Key {
			t.Errorf("described differently:\n%s\n%s\nthen\n%s\n%s", first.Title, first.Details, in.Title, in.Details)
		}
	}
	for _, want := range []string{"Push 60 commits to main in repo", "… and 10 more commits", "Change 59 with `code` and *stars*", "60 files changed, 60 insertions(+)", "...\n"} {
		if !strings.Contains(first.Title+first.Details, want) {
			t.Errorf("lacks %q:\n%s\n%s", want, first.Title, first.Details)
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
	out := strings.Fields(askdBinary(t, "token", "create", "--human", "bob", "--db", g.srv.DB))
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
