package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/askd-dev/askd/api"
	"github.com/askd-dev/askd/internal/httpapi"
	"github.com/askd-dev/askd/internal/openapicheck"
	"github.com/askd-dev/askd/internal/testserver"
)

// TestEveryRouteIsInTheDocument walks the routes a server registers, every
// role's and every optional handler's: each /api route has its operation
// in api/openapi.json, and each operation there is a route. (Every test's
// server also checks each response against the document: testserver.)
func TestEveryRouteIsInTheDocument(t *testing.T) {
	c, err := openapicheck.Load()
	if err != nil {
		t.Fatal(err)
	}
	s := testserver.Start(t, testserver.Options{})
	srv := httpapi.New(s.App, httpapi.Options{MCP: http.NotFoundHandler(), Inbox: http.NotFoundHandler(), Slack: http.NotFoundHandler()})
	documented := c.Operations()
	var served []string
	for _, p := range srv.Routes() {
		method, path, ok := strings.Cut(p, " ")
		if !ok || !strings.HasPrefix(path, "/api/") {
			continue // the page, /mcp, hooks, sign-in, health: not the API
		}
		served = append(served, p)
		if !slices.Contains(documented, method+" "+path) {
			t.Errorf("%s is served but not in api/openapi.json", p)
		}
	}
	for _, op := range documented {
		if !slices.Contains(served, op) {
			t.Errorf("%s is in api/openapi.json but not served", op)
		}
	}
	if len(served) < 30 {
		t.Errorf("only %d /api routes found: %v", len(served), served)
	}
}

// TestOpenAPIDocumentServed: GET /api/openapi.json needs no token and is
// the document as kept in the repository, gzip-compressed for clients that
// take it.
func TestOpenAPIDocumentServed(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	for _, gz := range []bool{false, true} {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/openapi.json", nil)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip") // set by hand: the transport then leaves it compressed
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := io.Reader(resp.Body)
		if gz {
			if resp.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("Content-Encoding %q, want gzip", resp.Header.Get("Content-Encoding"))
			}
			if body, err = gzip.NewReader(resp.Body); err != nil {
				t.Fatal(err)
			}
		}
		got, err := io.ReadAll(body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" || !bytes.Equal(got, api.Document()) {
			t.Errorf("gzip %v: %s %q, %d bytes; want 200 application/json, the document's %d", gz, resp.Status, resp.Header.Get("Content-Type"), len(got), len(api.Document()))
		}
	}
}
