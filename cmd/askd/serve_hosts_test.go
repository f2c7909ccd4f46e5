package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd/client"
)

// served is an `askd serve` running in the test process on 127.0.0.1:0:
// the real command, flags, http.Server settings and first-start tokens.
type served struct {
	URL, Host    string
	Human, Agent string
	SignIn       string   // the first start's sign-in link
	Printed      []string // what it printed, up to the "Wire an agent" line
	DB           string
}

// startServe runs `askd serve` with args on a new SQLite file until the test ends.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	return startServeLogging(t, io.Discard, args...)
}

// startServeLogging is startServe with the server's log (stderr) on stderr;
// args may set --log-level again.
func startServeLogging(t *testing.T, stderr io.Writer, args ...string) *served {
	t.Helper()
	s := &served{DB: filepath.Join(t.TempDir(), "askd.db")}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", s.DB, "--log-level", "error"}, args...)
		done <- run(ctx, args, nil, pw, stderr)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("askd serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("askd serve did not stop")
		}
	})
	lines := bufio.NewScanner(pr)
	for lines.Scan() {
		l := lines.Text()
		s.Printed = append(s.Printed, l)
		if _, rest, ok := strings.Cut(l, " listening on "); ok {
			s.URL, _, _ = strings.Cut(rest, " ")
			s.Host = strings.TrimPrefix(s.URL, "http://")
		}
		if _, tok, ok := strings.Cut(l, "human token (answers in the inbox): "); ok {
			s.Human = tok
		}
		if _, tok, ok := strings.Cut(l, "agent token (asks):"); ok {
			s.Agent = strings.TrimSpace(tok)
		}
		if _, link, ok := strings.Cut(l, "Open the inbox: "); ok {
			s.SignIn = strings.TrimSpace(link)
		}
		if strings.HasPrefix(l, "Wire an agent:") {
			break
		}
	}
	go io.Copy(io.Discard, pr) // it prints nothing more, but must never block
	if s.URL == "" || s.Human == "" || s.Agent == "" {
		select {
		case err := <-done:
			t.Fatalf("askd serve did not start: %v", err)
		default:
			t.Fatalf("askd serve printed no address or tokens")
		}
	}
	return s
}

// A page whose name is rebound to askd's address gets nowhere: requests are
// served only for the Host names askd serves, and the refusal names the rule
// and the flag.
func TestHostCheckRefusesRebinding(t *testing.T) {
	srv := startServe(t, "--public-url", "https://inbox.example.com", "--allowed-hosts", "askd.lan, *.corp.example", "--allowed-hosts", "agents.lan")
	port := srv.Host[strings.LastIndex(srv.Host, ":"):]
	tests := []struct {
		name, method, path, host, token string
		want                            int
	}{
		{"rebound name creating an ask", "POST", "/api/asks", "evil.example" + port, srv.Agent, http.StatusForbidden},
		{"rebound name reading the inbox", "GET", "/api/asks", "evil.example" + port, srv.Human, http.StatusForbidden},
		{"rebound name, sign-in form", "POST", "/signin", "evil.example" + port, "", http.StatusForbidden},
		{"rebound name, metrics", "GET", "/metrics", "evil.example" + port, "", http.StatusForbidden},
		{"rebound name, MCP", "POST", "/mcp", "evil.example" + port, srv.Agent, http.StatusForbidden},
		{"rebound name, health probe", "GET", "/healthz", "evil.example" + port, "", http.StatusOK},
		{"rebound name, readiness probe", "GET", "/readyz", "evil.example" + port, "", http.StatusOK},
		{"localhost", "GET", "/api/asks", "localhost" + port, srv.Human, http.StatusOK},
		{"listen address", "GET", "/api/asks", srv.Host, srv.Human, http.StatusOK},
		{"--public-url host", "GET", "/api/asks", "inbox.example.com", srv.Human, http.StatusOK},
		{"--allowed-hosts name", "GET", "/api/asks", "askd.lan" + port, srv.Human, http.StatusOK},
		{"--allowed-hosts wildcard", "GET", "/api/asks", "a.corp.example", srv.Human, http.StatusOK},
		{"--allowed-hosts repeated", "GET", "/api/asks", "agents.lan" + port, srv.Agent, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := ""
			if tt.method == "POST" {
				body = `{"kind":"ready","title":"Rebound"}`
			}
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(body))
			req.Host = tt.host
			req.Header.Set("Origin", "http://"+tt.host) // what the rebinding page's browser sends
			req.Header.Set("Content-Type", "application/json")
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("%d %s, want %d", resp.StatusCode, b, tt.want)
			}
			if tt.want == http.StatusForbidden && !strings.Contains(string(b), "is not one this askd serves") || tt.want == http.StatusForbidden && !strings.Contains(string(b), "--allowed-hosts") {
				t.Fatalf("refusal %s does not name the rule and the flag", b)
			}
		})
	}
	// Nothing the refused requests sent was stored.
	asks, err := client.New(srv.URL, srv.Human).List(context.Background(), client.ListOptions{})
	if err != nil || len(asks) != 0 {
		t.Fatalf("the inbox holds %d asks (%v), want none", len(asks), err)
	}
}

func TestServeRefusesBadHostFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  string // ASKD_ALLOWED_HOSTS
		want string
	}{
		{"allowed host with a path", []string{"--allowed-hosts", "https://askd.lan/"}, "", "--allowed-hosts"},
		{"allowed host from the environment", nil, "askd.lan,https://askd.lan/", "--allowed-hosts"},
		{"public URL without scheme", []string{"--public-url", "askd.lan"}, "", "--public-url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("ASKD_ALLOWED_HOSTS", tt.env)
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "askd.db")}, tt.args...)
			err := run(context.Background(), args, nil, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("%v: %v, want a usage error naming %s", args, err, tt.want)
			}
		})
	}
}
