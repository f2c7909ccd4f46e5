package testserver

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"
)

// TokenProxy serves target on a loopback port of its own, adding the agent
// token to every request, for the MCP conformance suite, which has no
// option for one. The Host header goes through as the suite sent it, so
// askd's DNS-rebinding check sees it.
func TokenProxy(t testing.TB, target, token string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer "+token)
		},
		FlushInterval: -1, // event streams pass at once
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// The request goes on from memory, not from the suite's connection. A
	// transport that reads the request body on its own goroutine can still
	// be doing so (its last read, looking for the end) when askd, which has
	// every byte already, answers; the response headers going out to the
	// suite then make net/http consume and close that body under it, the
	// failed read fails the upstream connection, and the response being
	// copied is cut: the suite saw "no result in response body", or waited
	// out a scenario's 30 s for an end that never came.
	forward := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		rp.ServeHTTP(w, r)
	})
	hs := &http.Server{Handler: forward, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String()
}
