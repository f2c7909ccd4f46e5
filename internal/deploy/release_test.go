package deploy

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/askd-dev/askd/internal/testserver"
)

// goReleaser is the release tool, pinned: a release that builds with
// go.mod's Go. Makefile's GORELEASER names the same (TestGoReleaserPin).
const goReleaser = "github.com/goreleaser/goreleaser/v2@v2.17.0"

// tag is what the tests tag their release checkout with.
const tag = "v1.2.3"

// gitIn runs git in dir as a release's maintainer would, with a fixed
// identity and no signing; it returns git's output.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	base := []string{"-c", "user.name=askd tests", "-c", "user.email=tests@askd.invalid", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", "-c", "init.defaultBranch=main"}
	return output(t, dir, nil, "git", append(base, args...)...)
}

// taggedCheckout is a new git repository holding the working tree's files
// (tracked ones, and untracked ones git does not ignore: what go test sees),
// committed once and tagged v1.2.3: the checkout a release is made from.
func taggedCheckout(t *testing.T) string {
	t.Helper()
	tool(t, "git", "git")
	root := repoRoot(t)
	dir := t.TempDir()
	files := strings.Split(strings.TrimRight(output(t, root, nil, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"), "\x00"), "\x00")
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, f), data, info.Mode().Perm())
	}
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "release "+tag)
	gitIn(t, dir, "tag", tag)
	return dir
}

// TestGoReleaserPin: make release-check runs the GoReleaser CI tests.
func TestGoReleaserPin(t *testing.T) {
	makefile, err := os.ReadFile(filepath.Join(repoRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(makefile), "\nGORELEASER ?= "+goReleaser+"\n") {
		t.Fatalf("Makefile's GORELEASER is not %s, the version the tests run", goReleaser)
	}
}

// TestReleaseSnapshot checks .goreleaser.yaml with GoReleaser's own check,
// then builds a snapshot release of this machine's target from a checkout
// tagged v1.2.3: its archive must be listed in checksums.txt with its
// SHA-256, hold the licence, README and unit, and a binary whose --version
// is the tag, as go install's build says it.
func TestReleaseSnapshot(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the archive of this target is a zip; CI builds a tar.gz on Linux")
	}
	goreleaser := testserver.GoInstall(t, goReleaser)
	dir := taggedCheckout(t)
	output(t, dir, nil, goreleaser, "check")

	// All six targets take minutes (make release-check): one here, the
	// configuration otherwise as it is.
	config, err := os.ReadFile(filepath.Join(dir, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	one := string(config)
	for from, to := range map[string]string{
		"goos: [linux, darwin, windows]": "goos: [" + runtime.GOOS + "]",
		"goarch: [amd64, arm64]":         "goarch: [" + runtime.GOARCH + "]",
	} {
		if strings.Count(one, from) != 1 {
			t.Fatalf(".goreleaser.yaml has no line %q to build one target", from)
		}
		one = strings.Replace(one, from, to, 1)
	}
	oneConfig := filepath.Join(t.TempDir(), "goreleaser-one-target.yaml")
	write(t, oneConfig, []byte(one), 0o644)
	output(t, dir, nil, goreleaser, "release", "--snapshot", "--clean", "--config", oneConfig)

	archives, err := filepath.Glob(filepath.Join(dir, "dist", "askd_*_"+runtime.GOOS+"_"+runtime.GOARCH+".tar.gz"))
	if err != nil || len(archives) != 1 {
		t.Fatalf("dist holds archives %q, want one for %s/%s", archives, runtime.GOOS, runtime.GOARCH)
	}
	archive := archives[0]
	sums, err := os.ReadFile(filepath.Join(dir, "dist", "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if want := sha256File(t, archive) + "  " + filepath.Base(archive); !strings.Contains(string(sums), want+"\n") {
		t.Fatalf("checksums.txt:\n%s\nlacks %q", sums, want)
	}

	bin := filepath.Join(t.TempDir(), "askd")
	names := untar(t, archive, "askd", bin)
	for _, want := range []string{"askd", "LICENSE", "README.md", "docs/operations.md", "contrib/systemd/askd.service"} {
		if !contains(names, want) {
			t.Errorf("archive %s holds %q, want %s among them", filepath.Base(archive), names, want)
		}
	}
	if got := firstLine(output(t, "", nil, bin, "--version")); got != "askd "+tag {
		t.Fatalf("the archive's askd --version says %q, want %q", got, "askd "+tag)
	}
}

// TestGoInstallTag installs askd as `go install github.com/askd-dev/askd/cmd/askd@v1.2.3`
// does from the public proxy, here from a local one: the tag's git archive
// as the module's zip, askd's dependencies from this machine's module cache
// (itself laid out as a proxy, holding what go mod download checked against
// the checksum database), a fresh module cache, and no checksum database
// (none is reachable: GOSUMDB=off). The binary's --version is the tag.
func TestGoInstallTag(t *testing.T) {
	dir := taggedCheckout(t)
	const module = "github.com/askd-dev/askd"
	proxy := t.TempDir()
	at := filepath.Join(proxy, filepath.FromSlash(module), "@v")
	write(t, filepath.Join(at, "list"), []byte(tag+"\n"), 0o644)
	info, err := json.Marshal(map[string]string{"Version": tag, "Time": strings.TrimSpace(gitIn(t, dir, "log", "-1", "--format=%cI", tag))})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(at, tag+".info"), info, 0o644)
	write(t, filepath.Join(at, tag+".mod"), []byte(gitIn(t, dir, "show", tag+":go.mod")), 0o644)
	// A module's zip leaves out directories holding a module of their own.
	archive := []string{"archive", "--format=zip", "--prefix=" + module + "@" + tag + "/", "-o", filepath.Join(at, tag+".zip"), tag}
	for _, mod := range strings.Fields(gitIn(t, dir, "ls-files", "*/go.mod")) {
		archive = append(archive, ":(exclude)"+filepath.Dir(mod))
	}
	gitIn(t, dir, archive...)

	cache := strings.TrimSpace(output(t, "", nil, "go", "env", "GOMODCACHE"))
	fresh, gobin := t.TempDir(), t.TempDir()
	env := []string{
		"GOPROXY=file://" + filepath.ToSlash(proxy) + ",file://" + filepath.ToSlash(filepath.Join(cache, "cache", "download")),
		"GOMODCACHE=" + fresh,
		"GOSUMDB=off",
		"GONOPROXY=", "GOPRIVATE=", "GOWORK=off", "GOTOOLCHAIN=local",
		"GOBIN=" + gobin,
		// -modcacherw: the fresh cache can be removed. CGO_ENABLED=0 and
		// -trimpath build as make image and the release do, so that the
		// dependencies come from the build cache rather than compile again.
		"GOFLAGS=-modcacherw -trimpath", "CGO_ENABLED=0",
	}
	output(t, t.TempDir(), env, "go", "install", module+"/cmd/askd@"+tag)
	if _, err := os.Stat(filepath.Join(fresh, "cache", "download", filepath.FromSlash(module), "@v", tag+".zip")); err != nil {
		t.Fatalf("askd %s did not come through the local proxy into the fresh module cache: %v", tag, err)
	}
	if got := firstLine(output(t, "", nil, filepath.Join(gobin, "askd"), "--version")); got != "askd "+tag {
		t.Fatalf("go install's askd --version says %q, want %q", got, "askd "+tag)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// untar lists the names in the .tar.gz archive, and writes its entry name
// to dst, executable.
func untar(t *testing.T, archive, name, dst string) []string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Name != name {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		write(t, dst, data, 0o755)
	}
	if _, err := os.Stat(dst); err != nil {
		t.Fatalf("archive %s holds no %s", archive, name)
	}
	return names
}
