package testserver

import (
	"net/http"
	"testing"

	"github.com/askd-dev/askd/internal/httpapi"
	"github.com/askd-dev/askd/internal/openapicheck"
)

// checked is srv with every response to an /api route checked against the
// OpenAPI document (internal/openapicheck): a response that does not fit
// it, a route it lacks, or a request the server took that it refuses fails
// the test, whatever client the test used. A benchmark's server is not
// checked: its figures are askd's, not the check's.
func checked(t testing.TB, srv *httpapi.Server) http.Handler {
	t.Helper()
	if _, bench := t.(*testing.B); bench {
		return srv
	}
	c, err := openapicheck.Load()
	if err != nil {
		t.Fatal(err)
	}
	return c.Handler(srv, srv.Routes(), t.Errorf)
}
