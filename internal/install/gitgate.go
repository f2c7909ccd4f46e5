package install

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/gate"
)

const gitGateSynopsis = "[--ref PATTERN]... [--url URL] [--token TOKEN] [REPO]"

// The files askd install git-gate writes into a repository's hooks
// directory.
const (
	gateHookName    = "pre-receive"
	gateChainedName = "pre-receive.askd-chained" // the hook that was there, run first
	gateConfigName  = "askd-gate.conf"           // url= and token=, mode 0600
)

// gitGateMarker is the hook's second line: how install knows a
// pre-receive hook as its own, to replace it.
const gitGateMarker = "# askd git gate: written by askd install git-gate, which replaces it when run again."

// installGitGate writes askd's pre-receive hook (askd gate git) into a bare
// repository, REPO or the current directory, with the server and agent
// token it was run with in a file beside it (mode 0600). Every --ref
// pattern is checked with git check-ref-format, and REPO must be a bare
// repository itself, before anything is written. Run again, it replaces its
// own hook. A pre-receive hook that is not askd's is kept and chained: it
// becomes pre-receive.askd-chained, which askd's hook runs first with the
// same input (its refusal refuses the push, before anyone is asked).
func installGitGate(e *cli.Env, args []string) error {
	fs := cli.Flags(e, "install git-gate", gitGateSynopsis)
	var refs gate.RefPatterns
	fs.Var(&refs, "ref", "a protected ref `PATTERN`, in git's refspec glob syntax: refs/heads/main, refs/tags/*, refs/heads/release/*\n(repeat; none: every ref is protected)")
	url := fs.String("url", cli.DefaultURL, "the `URL` of the askd server the hook asks, written beside it (ASKD_URL where git runs the hook wins)")
	token := fs.String("token", "", "the agent token the hook asks with, written beside it in a file only its owner may read\n(better from ASKD_TOKEN than a flag, which ps shows; ASKD_TOKEN where git runs the hook wins)")
	e.SetEnvName("ref", "")
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	repo := "."
	switch fs.NArg() {
	case 0:
	case 1:
		repo = fs.Arg(0)
	default:
		return cli.UsageError(fmt.Sprintf("install git-gate: one repository, not %d (%s)", fs.NArg(), strings.Join(fs.Args(), " ")))
	}
	for _, p := range refs {
		if err := checkRefPatternWithGit(p); err != nil {
			return err
		}
	}
	base := strings.TrimRight(*url, "/")
	if err := checkGateURL(base); err != nil {
		return err
	}
	if strings.HasPrefix(*token, app.TokenPrefix(askd.RoleHuman)) {
		return cli.UsageError("--token: that is a human token; the hook asks as an agent (askd token create --agent NAME)")
	}
	if strings.ContainsAny(*token, " \t\r\n") {
		return cli.UsageError("--token: a token has no spaces or line breaks")
	}
	hooks, err := bareHooksDir(repo)
	if err != nil {
		return err
	}
	hook, chained, config := filepath.Join(hooks, gateHookName), filepath.Join(hooks, gateChainedName), filepath.Join(hooks, gateConfigName)
	chain, keep, err := gateChain(hook, chained)
	if err != nil {
		return err
	}
	urlSet := false // by --url or ASKD_URL
	fs.Visit(func(f *flag.Flag) { urlSet = urlSet || f.Name == "url" })
	conf, err := gateConfig(config, base, urlSet, *token)
	if err != nil {
		return err
	}

	// Everything is checked: now write. The hook last, so that it never
	// runs without what it reads.
	if keep {
		if err := keepForeignHook(hook, chained); err != nil {
			return err
		}
	}
	if conf != nil {
		changed, err := writeFileMode(config, conf, 0o600)
		if err != nil {
			return err
		}
		report(e, config, changed)
	}
	changed, err := writeFileMode(hook, []byte(gateHookScript(askdExecutable(), uniqueRefs(refs), chain)), 0o755)
	if err != nil {
		if keep {
			os.Remove(chained) // the foreign hook is still in place
		}
		return err
	}
	report(e, hook, changed)

	w := e.Stdout
	if len(refs) == 0 {
		fmt.Fprintln(w, "\nEvery ref is protected (no --ref): each push is an approval in askd's inbox.")
	} else {
		fmt.Fprintf(w, "\nProtected: %s; pushes to other refs are never asked about.\n", strings.Join(refs, ", "))
	}
	if keep {
		fmt.Fprintf(w, "The pre-receive hook that was there is now %s; askd's hook runs it first, and its refusal refuses the push.\n", chained)
	} else if chain {
		fmt.Fprintf(w, "%s (the hook that was there before askd's) still runs first.\n", chained)
	}
	switch {
	case *token != "":
	case bytes.Contains(conf, []byte("\ntoken=")):
		fmt.Fprintf(w, "No --token or ASKD_TOKEN: the hook keeps asking with the token in %s.\n", config)
	default:
		fmt.Fprintln(w, "No --token or ASKD_TOKEN: the hook finds no token unless ASKD_TOKEN is set where git runs it,\nand refuses every push to a protected ref until then. Run this again with ASKD_TOKEN set.")
	}
	fmt.Fprintln(w, "A push waiting for approval is refused at once with the approval's number; push again once it is approved.")
	return nil
}

// gateConfig is the text of the config file beside the hook, nil for none:
// the URL and token install was run with, each in its place kept from the
// file there (a run that changes the patterns need not give the token
// again); a file holding neither is not written.
func gateConfig(path, base string, urlSet bool, token string) ([]byte, error) {
	old := map[string]string{}
	switch data, err := os.ReadFile(path); {
	case err == nil:
		// Read whatever its mode: it is rewritten at 0600 now.
		if old, err = gate.ParseConfig(path, data); err != nil {
			return nil, fmt.Errorf("install git-gate: %v", err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("install git-gate: %v", err)
	}
	if token == "" {
		token = old["token"]
	}
	if !urlSet && old["url"] != "" {
		base = old["url"]
	}
	if token == "" && !urlSet && len(old) == 0 {
		return nil, nil
	}
	text := "# askd git gate: the server and agent token askd gate git asks with where ASKD_URL and\n# ASKD_TOKEN are not set. Written by askd install git-gate; askd reads it only at mode 0600.\nurl=" + base + "\n"
	if token != "" {
		text += "token=" + token + "\n"
	}
	return []byte(text), nil
}

// checkRefPatternWithGit checks a --ref pattern as git does (git
// check-ref-format --refspec-pattern), and that it names refs in full.
func checkRefPatternWithGit(p string) error {
	if err := gate.CheckRefPattern(p); err != nil {
		return cli.UsageError(fmt.Sprintf("--ref %q: %v", p, err))
	}
	if out, err := exec.Command("git", "check-ref-format", "--refspec-pattern", p).CombinedOutput(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return fmt.Errorf("--ref %q: running git check-ref-format: %v %s", p, err, out)
		}
		return cli.UsageError(fmt.Sprintf("--ref %q: not a valid ref pattern (git check-ref-format --refspec-pattern refuses it: no spaces, ~ ^ : ? [ \\, .. or //, and at most one *)", p))
	}
	return nil
}

// checkGateURL refuses a server URL that cannot stand on its own line of
// the config file.
func checkGateURL(base string) error {
	u, err := neturl.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(base, " \t\r\n") {
		return cli.UsageError(fmt.Sprintf("--url: %q is not an http:// or https:// URL", base))
	}
	return nil
}

// bareHooksDir is the hooks directory of repo, which must be a bare
// repository itself (not a directory in one): git's own answer, so that
// core.hooksPath is honoured. GIT_DIR and its friends in install's own
// environment are left out, or git would answer for them instead.
func bareHooksDir(repo string) (string, error) {
	info, err := os.Stat(repo)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("install git-gate: %s: no such directory (give the bare repository people push to)", repo)
	case err != nil:
		return "", fmt.Errorf("install git-gate: %v", err)
	case !info.IsDir():
		return "", fmt.Errorf("install git-gate: %s is not a directory (give the bare repository people push to)", repo)
	}
	abs, err := filepath.Abs(repo)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", fmt.Errorf("install git-gate: %s: %v", repo, err)
	}
	cmd := exec.Command("git", "rev-parse", "--is-bare-repository", "--absolute-git-dir", "--git-path", "hooks")
	cmd.Dir = abs
	cmd.Env = gitEnvWithoutRepo()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("install git-gate: %s is not a git repository (git rev-parse: %s)", repo, strings.TrimSpace(stderr.String()))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		return "", fmt.Errorf("install git-gate: %s: git rev-parse said %q", repo, out)
	}
	gitDir, err := filepath.EvalSymlinks(lines[1])
	if err != nil {
		return "", fmt.Errorf("install git-gate: %s: %v", repo, err)
	}
	switch {
	case lines[0] != "true":
		return "", fmt.Errorf("install git-gate: %s is not a bare repository (it has a work tree): the gate belongs in the bare repository people push to (git clone --bare, git init --bare)", repo)
	case gitDir != abs:
		return "", fmt.Errorf("install git-gate: %s is inside the bare repository %s, not one itself: give that", repo, gitDir)
	}
	hooks := lines[2]
	if !filepath.IsAbs(hooks) {
		hooks = filepath.Join(abs, hooks)
	}
	return hooks, nil
}

// gitEnvWithoutRepo is this process's environment without the variables
// that tell git which repository to work on.
func gitEnvWithoutRepo() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// gateChain decides what becomes of the pre-receive hook there is: chain
// reports whether askd's hook runs pre-receive.askd-chained first; keep,
// whether the hook there now is another's, to become that file. An other
// hook where one is chained already is an error naming both: askd chains
// one.
func gateChain(hook, chained string) (chain, keep bool, err error) {
	_, err = os.Lstat(chained)
	haveChained := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, false, fmt.Errorf("install git-gate: %v", err)
	}
	data, err := os.ReadFile(hook)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return haveChained, false, nil
	case err != nil:
		return false, false, fmt.Errorf("install git-gate: reading the pre-receive hook there: %v", err)
	case bytes.Contains(data, []byte(gitGateMarker)):
		return haveChained, false, nil
	case haveChained:
		return false, false, fmt.Errorf("install git-gate: %s is not askd's, and %s holds the hook askd chained before: askd runs one hook before its own, so merge the two into %s by hand and run this again", hook, chained, chained)
	}
	return true, true, nil
}

// keepForeignHook keeps the pre-receive hook that is not askd's as the
// chained one: a second name for the same file (a copy where links are not
// possible), so that the hook stays in place until askd's replaces it.
func keepForeignHook(hook, chained string) error {
	if err := os.Link(hook, chained); err == nil {
		return nil
	}
	data, err := os.ReadFile(hook)
	if err != nil {
		return fmt.Errorf("install git-gate: keeping the pre-receive hook there: %v", err)
	}
	info, err := os.Stat(hook)
	if err != nil {
		return fmt.Errorf("install git-gate: keeping the pre-receive hook there: %v", err)
	}
	if err := replaceFile(chained, data, info.Mode().Perm()); err != nil {
		return fmt.Errorf("install git-gate: keeping the pre-receive hook there: %v", err)
	}
	return nil
}

// writeFileMode writes data to path with mode, in one rename (replaceFile),
// unless path holds that already with that mode.
func writeFileMode(path string, data []byte, mode os.FileMode) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		if info, err := os.Stat(path); err == nil && info.Mode().Perm() == mode {
			return false, nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	return true, replaceFile(path, data, mode)
}

// askdExecutable is the askd the hook runs: the one running install, by the
// name PATH finds it under when that is the same file (a link that an
// upgrade moves keeps working), else its own path; "" when unknown.
func askdExecutable() string {
	self, err := os.Executable()
	if err != nil {
		return ""
	}
	if onPath, err := exec.LookPath("askd"); err == nil {
		if abs, err := filepath.Abs(onPath); err == nil {
			a, errA := os.Stat(abs)
			b, errB := os.Stat(self)
			if errA == nil && errB == nil && os.SameFile(a, b) {
				return abs
			}
		}
	}
	return self
}

// gateHookScript is the pre-receive hook: plain POSIX sh (dash on Debian)
// that runs askd gate git with the patterns, the config file and the
// chained hook beside it ($0 is the hook's path as git runs it). It runs the
// askd install ran as, else askd on PATH; with neither, it refuses the push,
// saying so: a gate fails closed.
func gateHookScript(askdPath string, refs []string, chain bool) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	b.WriteString(gitGateMarker + "\n")
	b.WriteString("# Each push to a protected ref is an approval in askd's inbox: refused at once with the\n")
	b.WriteString("# approval's number while it waits, accepted when pushed again once approved.\n")
	b.WriteString("# Server and agent token: ASKD_URL and ASKD_TOKEN, else " + gateConfigName + " beside this file.\n")
	if askdPath == "" {
		askdPath = "askd"
	}
	b.WriteString("askd=" + shellQuote(askdPath) + "\n")
	b.WriteString(`[ -x "$askd" ] || askd=$(command -v askd) || { echo "` + gateMissingAskd + `" >&2; exit 1; }` + "\n")
	b.WriteString(`exec "$askd" gate git --config "${0%/*}/` + gateConfigName + `"`)
	if chain {
		b.WriteString(` --chain "${0%/*}/` + gateChainedName + `"`)
	}
	for _, r := range refs {
		b.WriteString(" --ref " + shellQuote(r))
	}
	b.WriteString("\n")
	return b.String()
}

// uniqueRefs is refs without repeats, in order.
func uniqueRefs(refs []string) []string {
	var out []string
	for _, r := range refs {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// gateMissingAskd is what the hook says when it finds no askd to run. No
// characters the shell would expand inside double quotes.
const gateMissingAskd = "askd: askd is neither where askd install git-gate found it nor on PATH, so the git gate refuses this push"

// shellQuote is s as one single-quoted POSIX sh word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
