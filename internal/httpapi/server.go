// Package httpapi serves askd over HTTP: the JSON API of SPEC §3.1 for people
// and agents, the inbox's event stream, Claude Code hooks, sign-in, health and
// metrics; and it mounts the MCP endpoint and the inbox page it is given.
package httpapi

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/hostcheck"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Which side of askd a process serves (askd serve --role).
const (
	RoleAll   = "all"
	RoleAgent = "agent" // MCP, hooks, agent API
	RoleInbox = "inbox" // page, human API, events
)

// Options configure a Server.
type Options struct {
	Role string // RoleAll (default), RoleAgent or RoleInbox
	// MCP serves /mcp; the server authenticates agents before calling it and
	// puts the caller in the request context (app.CallerFrom).
	MCP http.Handler
	// Inbox serves the page and its assets; nil serves none.
	Inbox http.Handler
	// Slack serves POST /slack/interactions, a Slack app's interactivity
	// endpoint (tell.SlackInteractions), which authenticates Slack's
	// requests itself; nil serves none (no signing secret configured).
	Slack http.Handler
	// Ready reports whether the process can serve (the database answers, the
	// change listener is connected); nil pings the store.
	Ready func(r *http.Request) error
	// Hosts are the Host names served besides loopback ones: the
	// --public-url host and --allowed-hosts; "*.example.com" allows every
	// subdomain. See hosts.go.
	Hosts []string
	// Listen is the address listened on (host:port): its IP is served as a
	// Host, and any IP is when it is unspecified (0.0.0.0, ::).
	Listen string
	// SecureCookies marks the inbox cookie Secure even on requests that
	// reach askd over plain HTTP: people reach it over https (an https
	// --public-url, a TLS proxy in front). Requests over TLS always get it.
	SecureCookies bool
	// AuthProxy, when set, is the reverse proxy trusted to sign people in
	// with its header (SPEC §15; provider.go).
	AuthProxy *AuthProxy
	// Heartbeat is the SSE comment interval; 0 means 15 s.
	Heartbeat time.Duration
	Logger    *slog.Logger
}

// Server is askd's HTTP front end.
type Server struct {
	app      *app.Service
	opts     Options
	log      *slog.Logger
	mux      *http.ServeMux
	throttle *throttle         // failed authentications per client address
	hosts    *hostcheck.Policy // the Host headers served
	patterns []string          // the routes' patterns, as registered (Routes)
}

// New returns a Server over svc.
func New(svc *app.Service, opts Options) *Server {
	if opts.Role == "" {
		opts.Role = RoleAll
	}
	s := &Server{app: svc, opts: opts, log: opts.Logger, mux: http.NewServeMux(), throttle: newThrottle(svc.Config().Now),
		hosts: hostcheck.New(opts.Hosts, opts.Listen)}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.routes()
	return s
}

func (s *Server) routes() {
	m := routeTable{s.mux, &s.patterns} // routetable.go
	agent, inbox := s.opts.Role != RoleInbox, s.opts.Role != RoleAgent

	m.HandleFunc("GET /healthz", s.healthz)
	m.HandleFunc("GET /readyz", s.readyz)
	m.Handle("GET /metrics", promhttp.HandlerFor(s.app.Metrics.Registry, promhttp.HandlerOpts{}))

	// The API's OpenAPI document (openapi.go), to anyone.
	m.HandleFunc("GET /api/openapi.json", s.openAPI)
	// Shared paths: the handler decides by the caller's role.
	m.HandleFunc("GET /api/me", s.authed("", s.me))
	m.HandleFunc("GET /api/asks", s.authed("", s.listAsks))
	m.HandleFunc("GET /api/asks/{id}", s.authed("", s.getAsk))
	m.HandleFunc("DELETE /api/asks/{id}", s.authed("", s.deleteAsk))
	m.HandleFunc("POST /api/asks", s.authed(askd.RoleAgent, s.createAsk))
	m.HandleFunc("POST /api/asks/{id}/told", s.authed(askd.RoleAgent, s.markTold))
	m.HandleFunc("POST /api/asks/{id}/answer", s.authed(askd.RoleHuman, s.answerAsk))
	m.HandleFunc("POST /api/asks/{id}/snooze", s.authed(askd.RoleHuman, s.snoozeAsk))
	m.HandleFunc("POST /api/asks/{id}/claim", s.authed(askd.RoleHuman, s.claimAsk))
	m.HandleFunc("DELETE /api/asks/{id}/claim", s.authed(askd.RoleHuman, s.releaseAsk))
	m.HandleFunc("GET /api/sessions", s.authed(askd.RoleHuman, s.listSessions))
	m.HandleFunc("GET /api/history", s.authed(askd.RoleHuman, s.searchHistory))
	m.HandleFunc("GET /api/audit", s.authed(askd.RoleHuman, s.audit))
	m.HandleFunc("PUT /api/sessions/{name}/channel", s.authed(askd.RoleAgent, s.setChannel))
	m.HandleFunc("GET /api/events", s.authed(askd.RoleHuman, s.events))
	m.HandleFunc("GET /api/rules", s.authed(askd.RoleHuman, s.listRules))
	m.HandleFunc("POST /api/rules", s.authed(askd.RoleHuman, s.createRule))
	m.HandleFunc("PATCH /api/rules/{id}", s.authed(askd.RoleHuman, s.changeRule))
	m.HandleFunc("DELETE /api/rules/{id}", s.authed(askd.RoleHuman, s.revokeRule))
	m.HandleFunc("GET /api/policies", s.authed(askd.RoleHuman, s.listPolicies))
	m.HandleFunc("POST /api/policies", s.authed(askd.RoleHuman, s.createPolicy))
	m.HandleFunc("DELETE /api/policies/{id}", s.authed(askd.RoleHuman, s.revokePolicy))
	m.HandleFunc("GET /api/me/notify", s.authed(askd.RoleHuman, s.myNotify))
	m.HandleFunc("PUT /api/me/notify", s.authed(askd.RoleHuman, s.setMyNotify))
	m.HandleFunc("GET /api/teams", s.authed(askd.RoleHuman, s.listTeams))
	m.HandleFunc("POST /api/teams", s.authed(askd.RoleHuman, s.createTeam))
	m.HandleFunc("PATCH /api/teams/{name}", s.authed(askd.RoleHuman, s.changeTeam))
	m.HandleFunc("DELETE /api/teams/{name}", s.authed(askd.RoleHuman, s.deleteTeam))
	m.HandleFunc("POST /api/teams/{name}/members", s.authed(askd.RoleHuman, s.addMembers))
	m.HandleFunc("DELETE /api/teams/{name}/members/{person}", s.authed(askd.RoleHuman, s.removeMember))

	if agent {
		// A channel bridge (askd mcp --channel; bridge.go).
		m.HandleFunc("GET /api/sessions/{name}/channel/deliveries", s.authed(askd.RoleAgent, s.channelDeliveries))
		m.HandleFunc("POST /api/sessions/{name}/channel/told", s.authed(askd.RoleAgent, s.channelTold))
		m.HandleFunc("POST /api/sessions/{name}/channel/permissions", s.authed(askd.RoleAgent, s.relayPermission))
		m.HandleFunc("DELETE /api/sessions/{name}/channel/permissions/{request_id}", s.authed(askd.RoleAgent, s.closeRelay))
		m.HandleFunc("POST /hooks/claude", s.claudeHook)
		m.HandleFunc("POST /hooks/{cli}", s.agentHook) // Copilot, Qwen, Gemini, OpenCode (agenthooks.go)
		if s.opts.MCP != nil {
			m.Handle("/mcp", s.mcp(s.opts.MCP))
		}
	}
	if inbox {
		m.HandleFunc("GET /signin", s.signIn)
		m.HandleFunc("POST /signin", s.signIn)
		m.HandleFunc("POST /signout", s.signOut)
		m.HandleFunc("GET "+finishPath, s.finishSignIn)
		if s.app.OIDCName() != "" {
			m.HandleFunc("GET /auth/oidc/start", s.beginOIDC)
			m.HandleFunc("GET /auth/oidc/callback", s.oidcCallback)
			m.HandleFunc("GET /auth/oidc/signout", s.oidcSignOut)
		}
		m.HandleFunc("GET /api/push/key", s.authed(askd.RoleHuman, s.pushKey))
		m.HandleFunc("POST /api/push/subscriptions", s.authed(askd.RoleHuman, s.subscribePush))
		m.HandleFunc("DELETE /api/push/subscriptions", s.authed(askd.RoleHuman, s.unsubscribePush))
		// Answer links (answerlink.go) and Slack's buttons answer as a
		// person: the inbox side's.
		m.HandleFunc("GET /a/{code}", s.answerLink)
		m.HandleFunc("POST /a/{code}", s.answerLink)
		// Mails' List-Unsubscribe links (unsubscribe.go).
		m.HandleFunc("GET /unsubscribe/{code}", s.unsubscribe)
		m.HandleFunc("POST /unsubscribe/{code}", s.unsubscribe)
		if s.opts.Slack != nil {
			m.Handle("POST /slack/interactions", s.opts.Slack)
		}
		if s.opts.Inbox != nil {
			m.Handle("/", s.proxied(s.opts.Inbox))
		}
	}
}

// ServeHTTP implements http.Handler: every request is served, then gets its
// line in the access log (see accesslog.go).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.logged(w, r, s.serve) }

// serve routes r. A request whose Host is not one askd serves is refused
// before anything else (see hosts.go).
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if !s.hosts.Allows(r.Host) && !hostProbe(r) {
		s.writeError(w, r, beforeBody{errHost(r.Host)})
		return
	}
	s.noteProxyHeader(r)
	s.mux.ServeHTTP(w, r)
}

// mcp authenticates agents for the MCP handler and passes the caller on in
// the request context.
func (s *Server) mcp(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := s.caller(r)
		if err == nil {
			err = s.allowed(r, c, askd.RoleAgent)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		h.ServeHTTP(w, r.WithContext(app.WithCaller(r.Context(), c)))
	})
}

// me is GET /api/me: the token's name and role (human or agent); a
// person's access (admin, approver, viewer), an agent's session and, if it
// has one, owner.
func (s *Server) me(w http.ResponseWriter, r *http.Request, c askd.Caller) error {
	out := map[string]any{"name": c.Name, "role": c.Role}
	switch c.Role {
	case askd.RoleHuman:
		out["access"] = c.Access
		if c.Via != "" {
			out["signed_in_with"] = s.signedInWith(c.Via)
		}
	case askd.RoleAgent:
		out["session"] = c.Session
		if c.Owner != "" {
			out["owner"] = c.Owner
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
