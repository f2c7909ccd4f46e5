// Package testserver starts a real askd server on 127.0.0.1:0 for end-to-end
// tests: a SQLite file in the test's temp dir (or any store given), the app
// layer, and the HTTP API with whatever MCP and inbox handlers the test wires.
package testserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/httpapi"
	"github.com/askd-dev/askd/internal/sqlite"
)

// Options adjust the server.
type Options struct {
	Config app.Config // zero fields take app.DefaultConfig's values
	Role   string
	Store  askd.Store // nil: a new SQLite file in t.TempDir()
	DBPath string     // with Store nil: this SQLite file instead of a new one
	// MCP and Inbox build the /mcp and / handlers; nil serves none.
	MCP   func(svc *app.Service) http.Handler
	Inbox func(svc *app.Service, baseURL string) http.Handler
	// Slack builds the POST /slack/interactions handler; nil serves none.
	Slack func(svc *app.Service, baseURL string) http.Handler
	// SecureCookies as httpapi.Options: the inbox is reached over https.
	SecureCookies bool
	// Heartbeat of the event stream; 0 keeps the default.
	Heartbeat time.Duration
	// OIDC, when set, is the OpenID Connect provider people sign in with,
	// made once the server's URL is known (the callback is under it).
	OIDC func(baseURL string) *app.OIDC
	// AuthProxy as httpapi.Options: a proxy trusted to name people.
	AuthProxy *httpapi.AuthProxy

	reuse bool // the database already has the test tokens
}

// Server is a running askd.
type Server struct {
	URL        string
	App        *app.Service
	Store      askd.Store
	HumanToken string
	HumanName  string // HumanToken's name
	AgentToken string
	AgentName  string // the agent token's name: the owner of its sessions
	HTTP       *httptest.Server
	DBPath     string
}

// Start starts a server and stops it in t.Cleanup.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	ctx := context.Background()
	s := &Server{Store: opts.Store}
	if s.Store == nil {
		s.DBPath = opts.DBPath
		if s.DBPath == "" {
			s.DBPath = filepath.Join(t.TempDir(), "askd.db")
		}
		st, err := sqlite.Open(ctx, s.DBPath)
		if err != nil {
			t.Fatalf("open sqlite: %v", err)
		}
		s.Store = st
	}
	// The listener exists before the server starts, so the handler (which
	// needs the URL for the inbox's links) is in place before any request
	// can arrive: set after Start, a first request from another process
	// would race with it.
	srv := httptest.NewUnstartedServer(nil)
	s.HTTP = srv
	s.URL = "http://" + srv.Listener.Addr().String()
	cfg := opts.Config
	if cfg.Logger == nil && os.Getenv("ASKD_TEST_LOG") != "" {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if opts.OIDC != nil {
		cfg.OIDC = opts.OIDC(s.URL)
	}
	s.App = app.New(s.Store, cfg)
	runCtx, cancel := context.WithCancel(ctx)
	runDone := make(chan struct{})
	go func() { s.App.Run(runCtx); close(runDone) }()

	human, agent := "alice", "agent-1"
	if opts.reuse { // the first server's tokens are in the file; make new ones
		human, agent = fmt.Sprintf("alice-%d", time.Now().UnixNano()), fmt.Sprintf("agent-%d", time.Now().UnixNano())
	}
	s.AgentName = agent
	s.HumanName = human
	var err error
	if _, s.HumanToken, err = s.App.CreateToken(ctx, app.Itself, app.TokenSpec{Name: human, Role: askd.RoleHuman, Access: askd.AccessAdmin}); err != nil {
		t.Fatalf("human token: %v", err)
	}
	if _, s.AgentToken, err = s.App.CreateToken(ctx, app.Itself, app.TokenSpec{Name: agent, Role: askd.RoleAgent}); err != nil {
		t.Fatalf("agent token: %v", err)
	}
	hopts := httpapi.Options{Role: opts.Role, SecureCookies: opts.SecureCookies, AuthProxy: opts.AuthProxy}
	if opts.Heartbeat > 0 {
		hopts.Heartbeat = opts.Heartbeat
	}
	if opts.MCP != nil {
		hopts.MCP = opts.MCP(s.App)
	}
	if opts.Inbox != nil {
		hopts.Inbox = opts.Inbox(s.App, s.URL)
	}
	if opts.Slack != nil {
		hopts.Slack = opts.Slack(s.App, s.URL)
	}
	srv.Config.Handler = checked(t, httpapi.New(s.App, hopts)) // openapi.go
	srv.Start()
	t.Cleanup(func() {
		s.App.Close()
		srv.CloseClientConnections()
		srv.Close()
		cancel()
		<-runDone // its background work stops before the store closes
		s.Store.Close()
	})
	return s
}

// Human returns a client with a human token.
func (s *Server) Human() *client.Client { return client.New(s.URL, s.HumanToken) }

// Agent returns a client with an agent token asking in session.
func (s *Server) Agent(session string) *client.Client {
	c := client.New(s.URL, s.AgentToken)
	c.Session = session
	return c
}

// Token creates another token (a person's is an approver's).
func (s *Server) Token(t testing.TB, name string, role askd.Role) string {
	t.Helper()
	return s.TokenWith(t, app.TokenSpec{Name: name, Role: role})
}

// TokenWith creates another token as spec says: a person's role, an
// agent's owner. It is made as askd's first start makes its own (by
// app.Itself).
func (s *Server) TokenWith(t testing.TB, spec app.TokenSpec) string {
	t.Helper()
	_, tok, err := s.App.CreateToken(context.Background(), app.Itself, spec)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// SignInLink returns a new sign-in link for the human token named human, as
// askd signin-link prints it, made on the server's clock.
func (s *Server) SignInLink(t testing.TB, human string) string {
	t.Helper()
	code, _, err := s.App.CreateSignInCode(context.Background(), app.Itself, human)
	if err != nil {
		t.Fatalf("sign-in code: %v", err)
	}
	return s.URL + "/signin?code=" + url.QueryEscape(code)
}

// BrowserCookie signs in as the human token named human, as a browser does
// (a sign-in link, then its redirect), and returns the cookie it was given.
func (s *Server) BrowserCookie(t testing.TB, human string) *http.Cookie {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.SignInLink(t, human), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultTransport.RoundTrip(req) // no redirects followed
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, ck := range resp.Cookies() {
		if ck.Name == app.BrowserCookie && ck.Value != "" {
			return ck
		}
	}
	t.Fatalf("sign-in link answered %s with no %s cookie", resp.Status, app.BrowserCookie)
	return nil
}

// StartAgain starts a server on an existing SQLite file, as after a restart.
func StartAgain(t testing.TB, dbPath string) *Server {
	t.Helper()
	return Start(t, Options{DBPath: dbPath, reuse: true})
}

// StartAgainWith starts a server as opts says on an existing SQLite file,
// as after a restart with other flags.
func StartAgainWith(t testing.TB, dbPath string, opts Options) *Server {
	t.Helper()
	opts.DBPath, opts.Store, opts.reuse = dbPath, nil, true
	return Start(t, opts)
}
