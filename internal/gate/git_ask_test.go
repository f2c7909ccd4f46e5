package gate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
)

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
			prefix := GitKeyPrefix(c.repo, c.ref, c.idLen)
			for _, kind := range []string{UpdateFastForward, UpdateCreate, UpdateDelete, UpdateForce} {
				key := GitKey(c.repo, c.ref, kind, o, n)
				if len([]rune(key)) > askd.MaxGateKeyChars || askd.Printable(key) != key || !strings.HasPrefix(key, prefix) {
					t.Errorf("%s: key %q (%d characters), prefix %q", kind, key, len([]rune(key)), prefix)
				}
			}
			if got := strings.Contains(prefix, c.repo); got != c.plain {
				t.Errorf("prefix %q names the repository: %v, want %v", prefix, got, c.plain)
			}
		})
	}
	if k1, k2 := GitKey("/r.git", "refs/heads/main", UpdateFastForward, old, new), GitKeyPrefix("/r.git", "refs/heads/main2", 40); strings.HasPrefix(k1, k2) {
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
	p := RefPatterns{"refs/heads/main", "refs/tags/*", "refs/heads/release/*-stable"}
	for ref, want := range map[string]bool{
		"refs/heads/main": true, "refs/heads/main2": false, "refs/heads/mai": false,
		"refs/tags/v1": true, "refs/tags/a/b": true, "refs/tagsx": false,
		"refs/heads/release/2-stable": true, "refs/heads/release/2/x-stable": true, "refs/heads/release/-stable": true, "refs/heads/release/2": false,
	} {
		if p.Match(ref) != want {
			t.Errorf("%s: %v, want %v", ref, !want, want)
		}
	}
	if !(RefPatterns{}).Match("refs/anything") {
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
	repo, err := hookRepository("")
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
