package install

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askd-dev/askd/internal/cli"
)

// gitTestEnv is an environment for git with no user's or system's
// configuration and no ASKD_* variables.
func gitTestEnv(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C",
		"GIT_AUTHOR_NAME=Dev", "GIT_AUTHOR_EMAIL=dev@example.com",
		"GIT_COMMITTER_NAME=Dev", "GIT_COMMITTER_EMAIL=dev@example.com",
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
			err := askdInstall(append([]string{"git-gate", "--token", "askd_a_test"}, c.args...), &out, &errb)
			if status := cli.ExitCode(err); status != c.status || err == nil || !strings.Contains(err.Error(), c.want) {
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
// other patterns replaces askd's own hook, a run without a token keeps the
// config there, and one with only another URL keeps its token.
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
		if err := askdInstall(append([]string{"git-gate"}, args...), &out, &errb); err != nil {
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
	// Another URL alone keeps the token.
	install("--url", "http://askd.internal:7777", bare)
	if moved, _ := os.ReadFile(config); !strings.Contains(string(moved), "\nurl=http://askd.internal:7777\ntoken=askd_a_secret\n") {
		t.Errorf("config after another --url:\n%s", moved)
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
	err := askdInstall([]string{"git-gate", bare}, &bytes.Buffer{}, &bytes.Buffer{})
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
