package deploy

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The image's tests run Podman as reference/containers.md says it runs on
// these machines: the runc runtime, and a containers.conf that drops
// Podman's default ulimits and uses cgroupfs, set only for these calls.
const containersConf = "[containers]\ndefault_ulimits = []\n[engine]\ncgroup_manager = \"cgroupfs\"\n"

// image is the image make image built for this test process (builtImage).
var image struct {
	once sync.Once
	conf string   // the containers.conf's directory
	name string   // NAME:latest
	tags []string // every tag make image gave it
	err  error
}

// podmanEnv is the environment of the tests' podman calls.
func podmanEnv() []string {
	return []string{"CONTAINERS_CONF=" + filepath.Join(image.conf, "containers.conf")}
}

// podman runs podman with args (the runc runtime) and returns its output.
func podman(t testing.TB, args ...string) string {
	t.Helper()
	return strings.TrimSpace(output(t, "", podmanEnv(), "podman", append([]string{"--runtime", "runc"}, args...)...))
}

// builtImage builds the image with make image, once per test process, and
// returns its name (NAME:latest); TestMain removes it.
func builtImage(t testing.TB) string {
	t.Helper()
	tool(t, "podman", "podman")
	tool(t, "runc", "runc")
	tool(t, "make", "make")
	root := repoRoot(t)
	image.once.Do(func() {
		if image.conf, image.err = os.MkdirTemp("", "askd-podman-"); image.err != nil {
			return
		}
		if image.err = os.WriteFile(filepath.Join(image.conf, "containers.conf"), []byte(containersConf), 0o644); image.err != nil {
			return
		}
		buildContext, err := os.MkdirTemp("", "askd-image-")
		if err != nil {
			image.err = err
			return
		}
		defer os.RemoveAll(buildContext)
		name := "localhost/askd-test-" + randomHex(6)
		began := time.Now()
		out, errOut, err := runIn(root, podmanEnv(), "make", "image", "ENGINE=podman", "IMAGE="+name, "IMAGE_CONTEXT="+buildContext)
		if err != nil {
			image.err = fmt.Errorf("make image: %v\n%s%s", err, out, errOut)
			return
		}
		image.name = name + ":latest"
		tags, errOut, err := runIn("", podmanEnv(), "podman", "image", "inspect", "--format", "{{json .RepoTags}}", image.name)
		if err != nil {
			image.err = fmt.Errorf("podman image inspect: %v\n%s", err, errOut)
			return
		}
		var all []string
		if image.err = json.Unmarshal([]byte(tags), &all); image.err != nil {
			return
		}
		for _, tag := range all {
			if strings.HasPrefix(tag, name+":") {
				image.tags = append(image.tags, tag)
			}
		}
		fmt.Fprintf(os.Stderr, "deploy: make image: %s\n", time.Since(began).Round(time.Millisecond))
	})
	if image.err != nil {
		t.Fatal(image.err)
	}
	return image.name
}

// removeImage removes the tags builtImage made: the image goes with them,
// unless another name holds the same image (a make image of the same tree).
func removeImage() {
	if len(image.tags) > 0 {
		runIn("", podmanEnv(), "podman", append([]string{"--runtime", "runc", "rmi"}, image.tags...)...)
	}
	if image.conf != "" {
		os.RemoveAll(image.conf)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// TestImageConfig: what the image says of itself (SPEC §17): a non-root
// user, the database in the /data volume, ASKD_ADDR on all interfaces, the
// health check by askd healthcheck (kept: built with --format docker), and
// OCI labels naming the source, the licence and askd's own version.
func TestImageConfig(t *testing.T) {
	name := builtImage(t)
	var inspected []struct {
		Config struct {
			User         string
			Env          []string
			Entrypoint   []string
			Cmd          []string
			Volumes      map[string]any
			ExposedPorts map[string]any
			Labels       map[string]string
		}
		Healthcheck struct{ Test []string }
	}
	if err := json.Unmarshal([]byte(podman(t, "image", "inspect", name)), &inspected); err != nil || len(inspected) != 1 {
		t.Fatalf("podman image inspect: %v", err)
	}
	c, health := inspected[0].Config, inspected[0].Healthcheck
	if c.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532 (not root)", c.User)
	}
	for _, env := range []string{"ASKD_DB=/data/askd.db", "ASKD_ADDR=:7788"} {
		if !contains(c.Env, env) {
			t.Errorf("environment %q lacks %s", c.Env, env)
		}
	}
	if _, ok := c.Volumes["/data"]; !ok {
		t.Errorf("volumes %v, want /data", c.Volumes)
	}
	if _, ok := c.ExposedPorts["7788/tcp"]; !ok {
		t.Errorf("exposed ports %v, want 7788/tcp", c.ExposedPorts)
	}
	if got, want := strings.Join(health.Test, " "), "CMD /usr/local/bin/askd healthcheck"; got != want {
		t.Errorf("health check %q, want %q", got, want)
	}
	if got := strings.Join(append(c.Entrypoint, c.Cmd...), " "); got != "/usr/local/bin/askd serve" {
		t.Errorf("entrypoint and command %q, want /usr/local/bin/askd serve", got)
	}
	version := strings.Fields(podman(t, "run", "--rm", name, "version"))
	if len(version) < 2 {
		t.Fatalf("askd version in the image printed %q", version)
	}
	for label, want := range map[string]string{
		"org.opencontainers.image.source":   "https://github.com/askd-dev/askd",
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.version":  version[1],
	} {
		if got := c.Labels[label]; got != want {
			t.Errorf("label %s = %q, want %q", label, got, want)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestImageSQLite runs the image as an operator would, its port published
// and a named volume at /data: askd starts, /healthz and the image's health
// check answer, it runs as non-root, an agent's question over MCP is
// answered through the human API, and the answer is still there once the
// container is removed and the image run again on the same volume.
func TestImageSQLite(t *testing.T) {
	name := builtImage(t)
	volume := "askd-test-" + randomHex(6)
	podman(t, "volume", "create", volume)
	t.Cleanup(func() { runIn("", podmanEnv(), "podman", "volume", "rm", "--force", volume) })
	run := []string{"--publish", "127.0.0.1::7788", "--volume", volume + ":/data"}

	first := runAskd(t, "askd-test-"+randomHex(6), name, true, run)
	url := "http://" + podman(t, "port", first.name, "7788/tcp")
	if first.url != "http://127.0.0.1:7788" {
		t.Errorf("askd in the container listens at %s, want all interfaces at 7788 (ASKD_ADDR=:7788)", first.url)
	}
	get(t, url+"/healthz", http.StatusOK)
	// The image's HEALTHCHECK, run by Podman: askd healthcheck in the image.
	podman(t, "healthcheck", "run", first.name)
	if uid := processUID(t, first.name); uid != "65532" {
		t.Errorf("askd runs as uid %s, want 65532 (not root)", uid)
	}
	id := askOverMCP(t, url, first.agent, first.human)

	first.stop(t)
	podman(t, "rm", first.name)
	again := runAskd(t, "askd-test-"+randomHex(6), name, false, run)
	url = "http://" + podman(t, "port", again.name, "7788/tcp")
	a, err := client.New(url, first.human).Show(context.Background(), id)
	if err != nil {
		t.Fatalf("ask %d after the container was removed and run again on its volume: %v", id, err)
	}
	if a.Status != askd.StatusAnswered {
		t.Fatalf("ask %d after the container was removed and run again: %s, want answered", id, a.Status)
	}
}

// TestImagePostgres runs the same image on the host's network with --db
// naming a PostgreSQL database on the host (pgtest's cluster).
func TestImagePostgres(t *testing.T) {
	name := builtImage(t)
	db := pgtest.URL(t)
	s := runAskd(t, "askd-test-"+randomHex(6), name, true, []string{"--network", "host"},
		"serve", "--db", db, "--addr", "127.0.0.1:0")
	get(t, s.url+"/readyz", http.StatusOK)
	askOverMCP(t, s.url, s.agent, s.human)
}

// served is askd serving in a container, as it said on its standard output.
type served struct {
	name         string
	url          string // where askd says it listens, inside the container
	human, agent string // a first start's tokens
	cmd          *exec.Cmd
}

var listening = regexp.MustCompile(`listening on (http://\S+)`)

// runAskd runs image as container name, attached, podman run's flags run
// before it and askd's arguments (none: the image's serve) after it, and
// returns once askd said where it listens and, on a first start, which
// tokens it made. The container is removed when t ends; its log is shown if
// t failed.
func runAskd(t *testing.T, name, image string, firstStart bool, run []string, args ...string) *served {
	t.Helper()
	argv := append([]string{"--runtime", "runc", "run", "--name", name}, run...)
	cmd := exec.Command("podman", append(append(argv, image), args...)...)
	cmd.Env = append(os.Environ(), podmanEnv()...)
	stderr := &testserver.SyncBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{name: name, cmd: cmd}
	t.Cleanup(func() {
		runIn("", podmanEnv(), "podman", "--runtime", "runc", "rm", "--force", "--volumes", "--time", "0", name)
		waitExit(cmd)
		if t.Failed() {
			t.Logf("container %s, standard error:\n%s", name, stderr.String())
		}
	})
	started := make(chan struct{})
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			l := lines.Text()
			if m := listening.FindStringSubmatch(l); m != nil {
				s.url = m[1]
				if !firstStart {
					close(started)
					break
				}
			}
			if _, tok, ok := strings.Cut(l, "human token (answers in the inbox): "); ok {
				s.human = strings.TrimSpace(tok)
			}
			if _, tok, ok := strings.Cut(l, "agent token (asks):"); ok {
				s.agent = strings.TrimSpace(tok)
			}
			if strings.HasPrefix(l, "Wire an agent:") {
				close(started)
				break
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case <-started:
	case <-time.After(2 * time.Minute):
		t.Fatalf("askd in container %s did not start; standard error:\n%s", name, stderr.String())
	}
	if firstStart && (s.human == "" || s.agent == "") {
		t.Fatalf("askd in container %s printed no tokens at its first start", name)
	}
	return s
}

// stop stops the container as an operator does (SIGTERM, podman stop) and
// waits for askd to exit, which must be with status 0.
func (s *served) stop(t *testing.T) {
	t.Helper()
	podman(t, "stop", "--time", "30", s.name)
	if code := waitExit(s.cmd); code != 0 {
		t.Fatalf("askd in container %s exited with status %d after podman stop, want 0", s.name, code)
	}
}

// waitExit waits for the attached podman run to end, up to a minute, and
// returns its exit status.
func waitExit(cmd *exec.Cmd) int {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
	}
	return cmd.ProcessState.ExitCode()
}

// processUID is the real user id of the container's main process, as the
// host's kernel sees it (/proc/PID/status).
func processUID(t *testing.T, name string) string {
	t.Helper()
	pid := podman(t, "inspect", "--format", "{{.State.Pid}}", name)
	status, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "Uid:" {
			return f[1]
		}
	}
	t.Fatalf("no Uid line in /proc/%s/status", pid)
	return ""
}

// get asks url and fails t unless it answers want.
func get(t *testing.T, url string, want int) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d %s, want %d", url, resp.StatusCode, body, want)
	}
}

// askOverMCP has an agent ask a question over MCP (the go-sdk client,
// streamable HTTP at /mcp), a person answer it through the human API, and
// the agent's call return the answer; it returns the ask's id.
func askOverMCP(t *testing.T, url, agentToken, humanToken string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{
		Transport: client.Transport{Token: agentToken, Session: "deploy", Base: http.DefaultTransport}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "askd-deploy-test", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("MCP connect to %s/mcp: %v", url, err)
	}
	defer cs.Close()
	const question = "Which colour?"
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	called := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_user_question", Arguments: map[string]any{
			"questions": []map[string]any{{"question": question, "header": "Colour", "multiSelect": false,
				"options": []map[string]any{{"label": "red"}, {"label": "green"}}}}}})
		called <- result{res, err}
	}()
	people := client.New(url, humanToken)
	var id int64
	testserver.Eventually(t, "the agent's question in the inbox", func() bool {
		asks, err := people.List(ctx, client.ListOptions{Session: "deploy", Status: askd.StatusPending})
		if err != nil {
			t.Fatal(err)
		}
		if len(asks) > 0 {
			id = asks[0].ID
		}
		return len(asks) > 0
	})
	if _, err := people.Answer(ctx, id, &askd.Answer{Answers: map[string]askd.Choice{question: {Values: []string{"green"}}}}); err != nil {
		t.Fatalf("answer ask %d: %v", id, err)
	}
	r := <-called
	if r.err != nil {
		t.Fatalf("ask_user_question: %v", r.err)
	}
	text := ""
	if len(r.res.Content) > 0 {
		if tc, ok := r.res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	if r.res.IsError || !strings.Contains(text, `"green"`) {
		t.Fatalf("ask_user_question returned %q (error: %v), want the answer green", text, r.res.IsError)
	}
	return id
}
