package interop_test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd/internal/testserver"
)

// The npm packages an integrator would use, pinned: the type generator and
// the compiler it generates for (its peer, TypeScript 5), the fetch client
// typed by what it generates, and the Standard Webhooks library.
const (
	openAPITypeScript = "openapi-typescript@7.13.0"
	typeScript        = "typescript@5.9.3"
	openAPIFetch      = "openapi-fetch@0.17.0"
	standardWebhooks  = "standardwebhooks@1.3.0"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.RemoveBinary()
	os.Exit(code)
}

// waitFor bounds each wait for something askd or node does: generous, for
// a busy machine; the tests go on as soon as it happens.
const waitFor = 60 * time.Second

// run runs name with args in dir and returns its standard output; a
// failure fails the test with what it wrote.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// receiver is testdata/receiver.cjs running under node: a webhook receiver
// on loopback that verifies with the Standard Webhooks library.
type receiver struct {
	url  string
	got  chan delivery
	node *exec.Cmd
}

// delivery is one request the receiver got, and its verdict: "verified",
// or the library's reason for refusing it.
type delivery struct {
	Path    string            `json:"path"`
	Later   int               `json:"later"`
	Verdict string            `json:"verdict"`
	Headers map[string]string `json:"headers"`
	Body    []byte            `json:"body"` // base64 in the JSON
}

// startReceiver starts the receiver, /tell verifying with tellSecret and
// /notify with notifySecret, each given to the library as the base64 of
// the secret's UTF-8 bytes, as SPEC §19 says a receiver does.
func startReceiver(t *testing.T, tellSecret, notifySecret string) *receiver {
	t.Helper()
	node := testserver.Node(t)
	mods := filepath.Join(testserver.NPM(t, standardWebhooks), "node_modules")
	script, err := filepath.Abs(filepath.Join("testdata", "receiver.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	cmd := exec.Command(node, script, b64(tellSecret), b64(notifySecret))
	cmd.Env = append(os.Environ(), "NODE_PATH="+mods) // require finds the cached library
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &receiver{got: make(chan delivery, 16), node: cmd}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(out)
	lines.Buffer(nil, 4<<20)
	if !lines.Scan() {
		t.Fatalf("the receiver did not start: %v", lines.Err())
	}
	var first struct{ Port int }
	if err := json.Unmarshal(lines.Bytes(), &first); err != nil || first.Port == 0 {
		t.Fatalf("the receiver's first line %q: %v", lines.Text(), err)
	}
	r.url = "http://127.0.0.1:" + strconv.Itoa(first.Port)
	go func() {
		defer close(r.got)
		for lines.Scan() {
			var d delivery
			if err := json.Unmarshal(lines.Bytes(), &d); err != nil {
				t.Errorf("the receiver printed %q: %v", lines.Text(), err)
				return
			}
			r.got <- d
		}
	}()
	return r
}

// next waits for the receiver's next request.
func (r *receiver) next(t *testing.T) delivery {
	t.Helper()
	select {
	case d, ok := <-r.got:
		if !ok {
			t.Fatal("the receiver stopped")
		}
		return d
	case <-time.After(waitFor):
		t.Fatalf("waited %s for a request to the receiver", waitFor)
		return delivery{}
	}
}

// post sends d again to the receiver's path (with a query, as it is),
// with body in place of d's, as a replay or a forgery would, and returns
// the receiver's status and what it said.
func (r *receiver) post(t *testing.T, path string, d delivery, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.url+path, strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"content-type", "idempotency-key", "askd-signature", "webhook-id", "webhook-timestamp", "webhook-signature"} {
		if v, ok := d.Headers[h]; ok {
			req.Header.Set(h, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	said, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(said)
}
