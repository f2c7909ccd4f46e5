package httpapi_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/httpapi"
	"github.com/askd-dev/askd/internal/testserver"
)

// The trusted proxy header (SPEC §15) behind a real nginx from Debian:
// nginx signs people in (HTTP basic authentication against its own
// password file) and names them in X-Remote-User, connecting to askd from
// 127.0.0.3, the only address askd trusts. The same header sent straight
// to askd (from 127.0.0.1) is ignored; sent to /mcp, or beside a token,
// it is never used.

// nginxPath is Debian's nginx; without it the test skips, and fails in CI.
func nginxPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"nginx", "/usr/sbin/nginx"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("nginx is required in CI (apt-get install nginx)")
	}
	t.Skip("SKIPPING: nginx not found (apt-get install nginx); CI runs this test")
	return ""
}

// startNginx runs nginx in front of upstream, in the foreground as this
// user, and returns its URL; it stops with the test.
func startNginx(t *testing.T, upstream string) string {
	t.Helper()
	bin := nginxPath(t)
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nginx takes the port; nothing else here asks for one meanwhile
	// nginx reads {PLAIN} passwords from its own file: no tool needed.
	if err := os.WriteFile(filepath.Join(dir, "htpasswd"), []byte("rosa:{PLAIN}rosas-password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path %[1]s/body; proxy_temp_path %[1]s/proxy; fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi; scgi_temp_path %[1]s/scgi;
	server {
		listen 127.0.0.1:%[2]d;
		auth_basic "askd";
		auth_basic_user_file %[1]s/htpasswd;
		location / {
			proxy_pass %[3]s;
			proxy_bind 127.0.0.3;
			proxy_set_header Host $http_host;
			proxy_set_header X-Remote-User $remote_user;
			proxy_buffering off;
		}
	}
}
`, dir, port, upstream)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", filepath.Join(dir, "error.log"))
	out, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start nginx: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		out.Close()
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	testserver.Eventually(t, "nginx serves", func() bool {
		select {
		case err := <-exited:
			b, _ := os.ReadFile(filepath.Join(dir, "stderr"))
			e, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx exited: %v\n%s%s", err, b, e)
		default:
		}
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return base
}

// request sends method path to base with headers, following no redirect,
// and returns the status, the body and the response.
func request(t *testing.T, base, method, path string, headers map[string]string, cookies ...*http.Cookie) (int, string, *http.Response) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	for _, ck := range cookies {
		req.AddCookie(ck)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp
}

func cookieNamed(resp *http.Response, name string) *http.Cookie {
	for _, ck := range resp.Cookies() {
		if ck.Name == name && ck.Value != "" {
			return ck
		}
	}
	return nil
}

func TestProxyHeaderBehindNginx(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{
		Config: app.Config{ProxyCreatePeople: true},
		MCP: func(*app.Service) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "mcp") })
		},
		Inbox: func(*app.Service, string) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "the inbox") })
		},
		AuthProxy: &httpapi.AuthProxy{Header: "X-Remote-User", Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.3/32")}},
	})
	proxy := startNginx(t, srv.URL)
	rosa := map[string]string{"Authorization": "Basic " + basic("rosa", "rosas-password")}

	t.Run("signed in as the proxy says", func(t *testing.T) {
		code, body, resp := request(t, proxy, "GET", "/", rosa)
		finish := cookieNamed(resp, "askd_finish")
		if code != http.StatusOK || finish == nil || !strings.Contains(body, "/auth/finish") {
			t.Fatalf("GET / through nginx: %d, finish cookie %v\n%s", code, finish, body)
		}
		_, _, resp = request(t, proxy, "GET", "/auth/finish", rosa, finish)
		ck := cookieNamed(resp, app.BrowserCookie)
		if ck == nil || ck.SameSite != http.SameSiteStrictMode {
			t.Fatalf("/auth/finish set no Strict browser cookie: %v", resp.Cookies())
		}
		code, body, _ = request(t, proxy, "GET", "/api/me", rosa, ck)
		if code != http.StatusOK || !strings.Contains(body, `"name":"rosa"`) || !strings.Contains(body, `"access":"viewer"`) || !strings.Contains(body, `"method":"proxy"`) {
			t.Errorf("/api/me: %d %s, want rosa, a viewer, signed in through the proxy", code, body)
		}
		rows, err := srv.App.AuditChain(context.Background(), app.Itself)
		if err != nil {
			t.Fatal(err)
		}
		var byProxy []string
		for _, r := range rows {
			if r.Actor == "proxy" {
				byProxy = append(byProxy, r.Action)
			}
		}
		if strings.Join(byProxy, " ") != askd.ConfigTokenCreated+" "+askd.ConfigIdentityLinked {
			t.Errorf("rows by proxy = %v, want rosa created and linked", byProxy)
		}
	})

	t.Run("revoked: refused, though the proxy may make people", func(t *testing.T) {
		if err := srv.App.RevokeToken(context.Background(), app.Itself, "rosa"); err != nil {
			t.Fatal(err)
		}
		before := signInState(t, srv)
		code, body, resp := request(t, proxy, "GET", "/", rosa)
		if code != http.StatusForbidden || cookieNamed(resp, "askd_finish") != nil {
			t.Errorf("revoked rosa through nginx: %d\n%s", code, body)
		}
		if after := signInState(t, srv); after != before {
			t.Errorf("store changed:\n%s\n%s", before, after)
		}
	})

	t.Run("straight to askd: ignored", func(t *testing.T) {
		before := signInState(t, srv)
		code, body, resp := request(t, srv.URL, "GET", "/", map[string]string{"X-Remote-User": srv.HumanName})
		if code != http.StatusOK || body != "the inbox" || cookieNamed(resp, "askd_finish") != nil {
			t.Errorf("the header from an untrusted address: %d %q, want the page as to anyone", code, body)
		}
		if after := signInState(t, srv); after != before {
			t.Errorf("store changed:\n%s\n%s", before, after)
		}
	})

	t.Run("never for /mcp, the API, or beside a token", func(t *testing.T) {
		before := signInState(t, srv)
		if code, body, _ := request(t, proxy, "POST", "/mcp", rosa); code != http.StatusUnauthorized {
			t.Errorf("/mcp through nginx with the header: %d %s, want 401", code, body)
		}
		if code, body, _ := request(t, proxy, "GET", "/api/asks", rosa); code != http.StatusUnauthorized {
			t.Errorf("/api/asks through nginx with the header: %d %s, want 401", code, body)
		}
		// nginx's own authentication takes the Authorization header, so a
		// token is sent here as nginx would send it: from its address.
		fromProxy := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.3")}}).DialContext}
		defer fromProxy.CloseIdleConnections()
		for _, path := range []string{"/", "/api/me"} {
			req, _ := http.NewRequest("GET", srv.URL+path, nil)
			req.Header.Set("X-Remote-User", srv.HumanName) // an admin's name
			req.Header.Set("Authorization", "Bearer "+srv.AgentToken)
			resp, err := fromProxy.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if cookieNamed(resp, "askd_finish") != nil || path == "/api/me" && !strings.Contains(string(b), `"name":"`+srv.AgentName+`"`) {
				t.Errorf("%s with a token and the header: %s %s, want the token's caller and no sign-in", path, resp.Status, b)
			}
		}
		if after := signInState(t, srv); after != before {
			t.Errorf("store changed:\n%s\n%s", before, after)
		}
	})
}

func basic(user, password string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
}
