package openapicheck_test

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/askd-dev/askd/internal/openapicheck"
)

// reports collects what a Checker reports.
type reports struct {
	mu  sync.Mutex
	got []string
}

func (r *reports) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, fmt.Sprintf(format, args...))
}

func (r *reports) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.got, "\n")
}

const ask = `{"id":7,"kind":"ready","session":"s1","agent":"a","status":"pending","revision":1,"title":"Ready",` +
	`"created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:05Z","tell":true}`

// TestCheckerCatchesDrift: each way a server can stray from the document
// is reported, naming what strayed; what fits is not.
func TestCheckerCatchesDrift(t *testing.T) {
	c, err := openapicheck.Load()
	if err != nil {
		t.Fatal(err)
	}
	json := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, body)
		}
	}
	tests := []struct {
		name    string
		pattern string // the route the server has
		handler http.HandlerFunc
		method  string
		path    string
		body    string
		says    string // "" when it fits
	}{
		{name: "an ask as documented", pattern: "GET /api/asks/{id}", handler: json(200, ask), method: "GET", path: "/api/asks/7"},
		{name: "an error as documented", pattern: "GET /api/asks/{id}", handler: json(404, `{"error":"ask 7 not found","code":"not_found"}`), method: "GET", path: "/api/asks/7"},
		{name: "a field the document lacks", pattern: "POST /api/asks/{id}/snooze",
			handler: json(200, strings.Replace(ask, `"tell":true`, `"tell":true,"colour":"red"`, 1)), method: "POST", path: "/api/asks/7/snooze", body: `{"for":"2h"}`, says: "colour"},
		{name: "a required field missing", pattern: "POST /api/asks/{id}/snooze",
			handler: json(200, strings.Replace(ask, `,"tell":true`, ``, 1)), method: "POST", path: "/api/asks/7/snooze", body: `{"for":"2h"}`, says: "tell"},
		{name: "a kind the document does not know", pattern: "POST /api/asks/{id}/snooze",
			handler: json(200, strings.Replace(ask, `"ready"`, `"pigeon"`, 1)), method: "POST", path: "/api/asks/7/snooze", body: `{"for":"2h"}`, says: "kind"},
		{name: "a status the operation does not list", pattern: "GET /api/me", handler: json(418, `{"error":"teapot","code":"invalid"}`),
			method: "GET", path: "/api/me", says: "status is not supported"},
		{name: "an error code the document does not know", pattern: "GET /api/asks", handler: json(400, `{"error":"x","code":"oops"}`),
			method: "GET", path: "/api/asks", says: "code"},
		{name: "a route the document lacks", pattern: "GET /api/colours", handler: json(200, `{}`), method: "GET", path: "/api/colours",
			says: `the route "GET /api/colours" has no operation`},
		{name: "a method the document lacks", pattern: "PATCH /api/me", handler: json(200, `{}`), method: "PATCH", path: "/api/me",
			says: `the route "PATCH /api/me" has no operation`},
		{name: "a request taken that the document refuses", pattern: "POST /api/asks", handler: json(201, ask), method: "POST", path: "/api/asks",
			body: `{"kind":"ready","title":"Ready","colour":"red"}`, says: "the server took a request the document refuses"},
		{name: "the same request refused", pattern: "POST /api/asks", handler: json(400, `{"error":"colour: unknown field","code":"invalid"}`),
			method: "POST", path: "/api/asks", body: `{"kind":"ready","title":"Ready","colour":"red"}`},
		{name: "a body where the document says none", pattern: "DELETE /api/push/subscriptions", handler: json(204, `{}`),
			method: "DELETE", path: "/api/push/subscriptions", body: `{"endpoint":"https://push.example/1"}`, says: "where the document says none"},
		{name: "a gzip body", pattern: "POST /api/asks/{id}/snooze", method: "POST", path: "/api/asks/7/snooze", body: `{"for":"2h"}`, says: "colour",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Encoding", "gzip")
				zw := gzip.NewWriter(w)
				io.Copy(io.Discard, r.Body)
				io.WriteString(zw, strings.Replace(ask, `"tell":true`, `"tell":true,"colour":"red"`, 1))
				zw.Close()
			}},
		{name: "an event whose data fits", pattern: "GET /api/events", method: "GET", path: "/api/events",
			handler: events(`{"id":1,"ask_id":7,"session":"s1","action":"created","actor":"a","at":"2026-01-02T03:04:05Z","ask":` + ask + `}`)},
		{name: "an event whose data does not", pattern: "GET /api/events", method: "GET", path: "/api/events", says: "an event's data does not fit",
			handler: events(`{"id":1,"ask_id":7,"session":"s1","action":"dreamt","actor":"a","at":"2026-01-02T03:04:05Z"}`)},
		{name: "a content type the document does not list", pattern: "GET /api/me", method: "GET", path: "/api/me", says: `content type "text/plain"`,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				io.WriteString(w, "alice")
			}},
		{name: "a body taken where the document takes none", pattern: "DELETE /api/policies/{id}", method: "DELETE", path: "/api/policies/3",
			body: `{"why":"done"}`, handler: json(200, `{"revoked":3}`), says: "where the document takes none"},
		{name: "not the API", pattern: "GET /colours", handler: json(200, `{"anything":1}`), method: "GET", path: "/colours"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rep reports
			srv := httptest.NewServer(c.Handler(tt.handler, []string{tt.pattern}, rep.Errorf))
			defer srv.Close()
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			srv.Close() // the check is done before the handler returns
			got := rep.all()
			switch {
			case tt.says == "" && got != "":
				t.Errorf("reported %s", got)
			case tt.says != "" && !strings.Contains(got, tt.says):
				t.Errorf("reported %q, want it to say %q", got, tt.says)
			}
		})
	}
}

// events answers an event stream with one event of data.
func events(data string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "retry: 1000\n: connected\n\nid: 1\nevent: ask.created\ndata: %s\n\n", data)
	}
}

// TestEveryOperationRoutes: the document's operations are what the checker
// routes; a sanity check that the document loaded whole.
func TestEveryOperationRoutes(t *testing.T) {
	c, err := openapicheck.Load()
	if err != nil {
		t.Fatal(err)
	}
	if ops := c.Operations(); len(ops) < 35 {
		t.Errorf("%d operations: %v", len(ops), ops)
	}
}
