package healthcheck

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/askd-dev/askd/internal/cli"
)

func run(t *testing.T, env map[string]string, args ...string) (stdout string, err error) {
	t.Helper()
	var out, errOut strings.Builder
	e := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] }}
	err = Command(context.Background(), e, args)
	return out.String(), err
}

// readyzServer answers /readyz with status and body.
func readyzServer(t *testing.T, status int, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestHealthcheck(t *testing.T) {
	ready := readyzServer(t, http.StatusOK, `{"status":"ok"}`)
	down := readyzServer(t, http.StatusServiceUnavailable, `{"status":"unavailable","error":"database: the database disk is full","code":"full"}`)
	notAskd := readyzServer(t, http.StatusNotFound, "")
	_, readyPort, _ := net.SplitHostPort(strings.TrimPrefix(ready.URL, "http://"))
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		out     string // stdout's start when ready
		wantErr string
	}{
		{name: "ready", args: []string{"--url", ready.URL}, out: "ready: " + ready.URL + "/readyz"},
		{name: "ASKD_URL", env: map[string]string{"ASKD_URL": ready.URL + "/"}, out: "ready: " + ready.URL + "/readyz"},
		{name: "ASKD_ADDR on all interfaces, as in the image", env: map[string]string{"ASKD_ADDR": ":" + readyPort}, out: "ready: http://127.0.0.1:" + readyPort + "/readyz"},
		{name: "--url wins over ASKD_ADDR", env: map[string]string{"ASKD_ADDR": closedAddr}, args: []string{"--url", ready.URL}, out: "ready: "},
		{name: "unavailable", args: []string{"--url", down.URL},
			wantErr: "healthcheck: not ready: database: the database disk is full (full, HTTP 503 from " + down.URL + "/readyz)"},
		{name: "not askd", args: []string{"--url", notAskd.URL}, wantErr: "healthcheck: not ready: HTTP 404 from " + notAskd.URL + "/readyz"},
		{name: "nothing listens", args: []string{"--addr", closedAddr}, wantErr: "healthcheck: not ready: Get \"http://" + closedAddr + "/readyz\""},
		{name: "a bad address", args: []string{"--addr", "7788"}, wantErr: `healthcheck: --addr "7788" is not host:port`},
		{name: "a bad URL", args: []string{"--url", "askd.example.com"}, wantErr: `healthcheck: --url "askd.example.com" is not an http(s) URL`},
		{name: "an argument", args: []string{"now"}, wantErr: `healthcheck: unexpected argument "now"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(t, tt.env, tt.args...)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one starting %q", err, tt.wantErr)
				}
				// Container engines reserve status 2: every failure is 1.
				if code := cli.ExitCode(err); code != 1 {
					t.Fatalf("exit status %d, want 1", code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(out, tt.out) {
				t.Fatalf("stdout %q, want it to start %q", out, tt.out)
			}
		})
	}
}

func TestURLOf(t *testing.T) {
	for _, tt := range []struct{ addr, want string }{
		{":7788", "http://127.0.0.1:7788"},
		{"0.0.0.0:7788", "http://127.0.0.1:7788"},
		{"[::]:7788", "http://127.0.0.1:7788"},
		{"127.0.0.1:7777", "http://127.0.0.1:7777"},
		{"[::1]:7777", "http://[::1]:7777"},
		{"askd.lan:80", "http://askd.lan:80"},
	} {
		if got, err := URLOf(tt.addr); err != nil || got != tt.want {
			t.Errorf("URLOf(%q) = %q, %v; want %q", tt.addr, got, err, tt.want)
		}
	}
}
