package gate

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
)

// BenchmarkGitGateHook measures what the git gate adds to a push: the
// pre-receive hook askd install git-gate wrote, run as git runs it (sh, in
// the bare repository, the update on stdin) against a real askd serve on
// loopback: a ref no pattern matches (askd starts, reads, accepts), a
// protected update whose approval is pending (described with git, asked,
// refused), and the same update once approved (accepted). The same update
// every time: askd returns the same ask by key. And, apart, what git costs
// of it: describing the update.
func BenchmarkGitGateHook(b *testing.B) {
	g := newGitGate(b, "--ref", "refs/heads/main")
	for i := range 20 {
		g.commit("app.go", "Change "+strings.Repeat("x", i))
	}
	if out, ok := g.push(nil, "HEAD:refs/heads/feature", "HEAD~19:refs/heads/base"); !ok {
		b.Fatal(out)
	}
	old, new := g.remoteRef("refs/heads/base"), g.remoteRef("refs/heads/feature")
	hook := func(b *testing.B, ref string, wantOK bool) {
		b.Helper()
		cmd := exec.Command("sh", filepath.Join("hooks", "pre-receive"))
		cmd.Dir, cmd.Env = g.bare, append([]string{"GIT_DIR=."}, g.env...)
		cmd.Stdin = strings.NewReader(old + " " + new + " " + ref + "\n")
		out, err := cmd.CombinedOutput()
		if (err == nil) != wantOK {
			b.Fatalf("hook for %s: %v\n%s", ref, err, out)
		}
	}
	// What git costs of it: describing the update (four git commands).
	b.Run("describe", func(b *testing.B) {
		b.Chdir(g.bare)
		repo := &gitRepo{path: g.bare}
		for b.Loop() {
			if _, err := repo.describeUpdate(context.Background(), gitUpdate{Old: old, New: new, Ref: "refs/heads/main"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unprotected", func(b *testing.B) {
		for b.Loop() {
			hook(b, "refs/heads/feature", true)
		}
	})
	b.Run("pending", func(b *testing.B) {
		for b.Loop() {
			hook(b, "refs/heads/main", false)
		}
	})
	pending := g.asks()
	if len(pending) != 1 {
		b.Fatalf("%d asks; want the one, found again by key", len(pending))
	}
	g.answer(pending[0].ID, askd.DecisionApproved, "")
	b.Run("approved", func(b *testing.B) {
		for b.Loop() {
			hook(b, "refs/heads/main", true)
		}
	})
}
