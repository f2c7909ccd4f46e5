package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"testing"

	"github.com/askd-dev/askd/api"
	"github.com/askd-dev/askd/internal/testserver"
)

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
