// Package openapicheck holds askd's HTTP traffic to its OpenAPI document
// (api/openapi.json) in tests: a test server's handler goes through
// Checker.Handler (internal/testserver puts it in front of every server it
// starts), so that every response to an /api route that any test receives
// is checked against the document, and a route the document lacks fails
// the test that reached it. The document cannot drift from the code
// unnoticed.
//
// kin-openapi finds each request's operation (its gorillamux router) and
// checks its parameters, security, status and response headers
// (openapi3filter); bodies are checked against the document's schemas by
// the JSON Schema 2020-12 validator kin-openapi itself uses for OpenAPI
// 3.1 (santhosh-tekuri/jsonschema), each schema compiled once rather than
// at every check as openapi3filter would: that keeps the check of the
// thousands of responses a test run receives to a few seconds.
package openapicheck

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/askd-dev/askd/api"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Checker checks requests and responses against the OpenAPI document.
type Checker struct {
	doc    *openapi3.T
	router routers.Router

	mu       sync.Mutex // guards compiler and compiled
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema // by location in the document
}

// documentURL is where the compiler finds the document: a name, never
// fetched.
const documentURL = "askd:openapi.json"

// Load returns the checker of api/openapi.json, which it loads and checks
// (openapi3.T.Validate) once per process.
func Load() (*Checker, error) { return load() }

var load = sync.OnceValues(func() (*Checker, error) {
	data := api.Document()
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("api/openapi.json: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("api/openapi.json is no valid OpenAPI document: %w", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("api/openapi.json: routes: %w", err)
	}
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("api/openapi.json: %w", err)
	}
	compiler := jsonschema.NewCompiler()
	compiler.DefaultDraft(jsonschema.Draft2020) // OpenAPI 3.1's dialect
	compiler.AssertFormat()                     // date-time, uri: as the document says
	if err := compiler.AddResource(documentURL, raw); err != nil {
		return nil, fmt.Errorf("api/openapi.json: %w", err)
	}
	return &Checker{doc: doc, router: router, compiler: compiler, compiled: map[string]*jsonschema.Schema{}}, nil
})

// Operations returns the document's operations as "METHOD /path", the path
// as the document writes it (/api/asks/{id}), sorted.
func (c *Checker) Operations() []string {
	var out []string
	for path, item := range c.doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, method+" "+path)
		}
	}
	slices.Sort(out)
	return out
}

// maxRecorded bounds, in bytes, the request and response bodies kept for a
// check: far above anything askd sends or takes (1 MiB bodies; the longest
// list a test reads).
const maxRecorded = 64 << 20

// Handler returns next with every request to one of routes under /api/
// checked once it is answered; routes are the server's patterns as
// httpapi.Server.Routes lists them. Each problem is reported with report
// (a test's Errorf), before the request's handling ends:
//
//   - the route has no operation in the document;
//   - the response's status is not one the operation lists, or its
//     headers, content type or body do not fit what the document says of
//     that status (an event stream: each event's data, against the schema
//     its x-askd-event-data names);
//   - the server accepted the request (2xx) although its parameters or
//     body do not fit the document: what the server takes, the document
//     must allow.
//
// Requests to other paths (the page, /mcp, hooks) pass untouched.
func (c *Checker) Handler(next http.Handler, routes []string, report func(format string, args ...any)) http.Handler {
	known := http.NewServeMux()
	for _, p := range routes {
		known.Handle(p, http.NotFoundHandler())
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := known.Handler(r)
		if !strings.HasPrefix(patternPath(pattern), "/api/") {
			next.ServeHTTP(w, r)
			return
		}
		reqBody := &recordedBody{ReadCloser: r.Body}
		r.Body = reqBody
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if err := c.check(r, pattern, reqBody.buf.Bytes(), rec); err != nil {
			report("openapi: %s %s answered %d: %v", r.Method, r.URL.RequestURI(), rec.status(), err)
		}
	})
}

// patternPath is the path of a mux pattern: "GET /api/asks/{id}" →
// "/api/asks/{id}".
func patternPath(pattern string) string {
	if _, path, ok := strings.Cut(pattern, " "); ok {
		return path
	}
	return pattern
}

// check checks one answered request to the route of pattern.
func (c *Checker) check(r *http.Request, pattern string, reqBody []byte, rec *recorder) error {
	req := r.Clone(context.Background())
	req.Body = http.NoBody
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		return fmt.Errorf("the route %q has no operation in api/openapi.json (%v)", pattern, err)
	}
	status := rec.status()
	body, err := rec.body()
	if err != nil {
		return err
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{ExcludeRequestBody: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: rec.header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, ExcludeResponseBody: true}}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return short(err)
	}
	if err := c.checkResponseBody(route, status, rec.header, body); err != nil {
		return err
	}
	if status >= 200 && status < 300 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			return fmt.Errorf("the server took a request the document refuses: %w", short(err))
		}
		if err := c.checkRequestBody(route, reqBody); err != nil {
			return fmt.Errorf("the server took a request the document refuses: %w", err)
		}
	}
	return nil
}

// checkResponseBody checks a response's body against what the document
// says of its status: none, or of a content type it lists, fitting that
// content's schema.
func (c *Checker) checkResponseBody(route *routers.Route, status int, h http.Header, body []byte) error {
	resp, at := responseAt(route, status)
	if resp == nil || resp.Value == nil {
		return fmt.Errorf("status %d is not documented", status)
	}
	if len(resp.Value.Content) == 0 {
		if len(body) > 0 {
			return fmt.Errorf("a body of %d bytes where the document says none", len(body))
		}
		return nil
	}
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	media := resp.Value.Content[mt]
	if media == nil {
		return fmt.Errorf("content type %q where the document says %v", h.Get("Content-Type"), slices.Sorted(maps.Keys(resp.Value.Content)))
	}
	at += "/content/" + pointerToken(mt) + "/schema"
	if mt == "text/event-stream" {
		return c.checkEvents(media, body)
	}
	if err := c.validate(at, body); err != nil {
		return fmt.Errorf("the body does not fit the document: %w", err)
	}
	return nil
}

// checkRequestBody checks the body of a request the server took: one the
// operation takes (required when it says so), fitting its schema.
func (c *Checker) checkRequestBody(route *routers.Route, body []byte) error {
	rb := route.Operation.RequestBody
	switch {
	case rb == nil && len(body) > 0:
		return fmt.Errorf("a body of %d bytes where the document takes none", len(body))
	case rb == nil:
		return nil
	case len(body) == 0 && rb.Value.Required:
		return errors.New("no body where the document requires one")
	case len(body) == 0:
		return nil
	}
	at := rb.Ref
	if at == "" {
		at = "#/paths/" + pointerToken(route.Path) + "/" + strings.ToLower(route.Method) + "/requestBody"
	}
	// askd reads any body as JSON, whatever its Content-Type says.
	return c.validate(at+"/content/application~1json/schema", body)
}

// responseAt returns the response the operation documents for status, and
// where it is in the document: its components entry, or its place in the
// operation.
func responseAt(route *routers.Route, status int) (*openapi3.ResponseRef, string) {
	rs := route.Operation.Responses
	key := strconv.Itoa(status)
	resp := rs.Value(key)
	if resp == nil {
		key = "default"
		resp = rs.Default()
	}
	if resp == nil {
		return nil, ""
	}
	if resp.Ref != "" {
		return resp, resp.Ref
	}
	return resp, "#/paths/" + pointerToken(route.Path) + "/" + strings.ToLower(route.Method) + "/responses/" + key
}

// checkEvents checks each event of a Server-Sent Events body: its data
// against the schema the media type's x-askd-event-data refers to.
func (c *Checker) checkEvents(media *openapi3.MediaType, body []byte) error {
	ref, _ := media.Extensions["x-askd-event-data"].(map[string]any)
	at, _ := ref["$ref"].(string)
	if !strings.HasPrefix(at, "#/") {
		return fmt.Errorf("an event stream whose x-askd-event-data refers to no schema (%v)", media.Extensions["x-askd-event-data"])
	}
	for _, line := range strings.Split(string(body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if err := c.validate(at, []byte(data)); err != nil {
			return fmt.Errorf("an event's data does not fit %s: %w", at, err)
		}
	}
	return nil
}

// CheckWebhook checks a webhook askd sent, by its name in the document's
// webhooks (tell, notification): its required headers are there, and its
// body fits the document's schema.
func (c *Checker) CheckWebhook(name string, h http.Header, body []byte) error {
	item := c.doc.Webhooks[name]
	if item == nil || item.Post == nil {
		return fmt.Errorf("api/openapi.json has no webhook %q", name)
	}
	for _, p := range item.Post.Parameters {
		if p.Value.In == openapi3.ParameterInHeader && p.Value.Required && h.Get(p.Value.Name) == "" {
			return fmt.Errorf("webhook %s: no %s header", name, p.Value.Name)
		}
	}
	if err := c.validate("#/webhooks/"+pointerToken(name)+"/post/requestBody/content/application~1json/schema", body); err != nil {
		return fmt.Errorf("webhook %s: the body does not fit the document: %w", name, err)
	}
	return nil
}

// validate checks the JSON data against the schema at the document's
// location at (a JSON pointer fragment, "#/components/schemas/Ask"),
// compiling it the first time.
func (c *Checker) validate(at string, data []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	c.mu.Lock()
	s, ok := c.compiled[at]
	if !ok {
		if s, err = c.compiler.Compile(documentURL + at); err != nil {
			c.mu.Unlock()
			return fmt.Errorf("the document's schema at %s does not compile: %v", at, err)
		}
		c.compiled[at] = s
	}
	c.mu.Unlock()
	if err := s.Validate(v); err != nil {
		return short(err)
	}
	return nil
}

// pointerToken escapes s as one token of a JSON pointer.
func pointerToken(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// short is err's message cut to its first lines: validators' errors can go
// on for pages.
func short(err error) error {
	lines := strings.SplitAfter(err.Error(), "\n")
	if len(lines) <= 12 {
		return err
	}
	return errors.New(strings.Join(lines[:12], "") + "…")
}

// recordedBody keeps what a handler reads of a request's body.
type recordedBody struct {
	io.ReadCloser
	buf bytes.Buffer
}

func (b *recordedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.buf.Len() < maxRecorded {
		b.buf.Write(p[:n])
	}
	return n, err
}

// recorder passes a response on and keeps its status, headers and body.
type recorder struct {
	http.ResponseWriter
	code   int
	header http.Header
	buf    bytes.Buffer
	cut    bool // the body was longer than maxRecorded
}

func (rec *recorder) WriteHeader(code int) {
	if rec.code == 0 {
		rec.code, rec.header = code, rec.ResponseWriter.Header().Clone()
	}
	rec.ResponseWriter.WriteHeader(code)
}

func (rec *recorder) Write(p []byte) (int, error) {
	if rec.code == 0 {
		rec.WriteHeader(http.StatusOK)
	}
	if rec.buf.Len()+len(p) <= maxRecorded {
		rec.buf.Write(p)
	} else {
		rec.cut = true
	}
	return rec.ResponseWriter.Write(p)
}

// Flush passes a flush on (event streams).
func (rec *recorder) Flush() {
	if rec.code == 0 {
		rec.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(rec.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

func (rec *recorder) status() int {
	if rec.code == 0 {
		return http.StatusOK // nothing written: net/http sends 200
	}
	return rec.code
}

// body is the response's body as sent, decompressed when gzip-encoded.
func (rec *recorder) body() ([]byte, error) {
	if rec.cut {
		return nil, fmt.Errorf("a body over %d bytes, too long to check", maxRecorded)
	}
	if rec.header == nil {
		rec.header = rec.ResponseWriter.Header().Clone()
	}
	if rec.header.Get("Content-Encoding") != "gzip" {
		return rec.buf.Bytes(), nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(rec.buf.Bytes()))
	if err != nil {
		return nil, fmt.Errorf("a gzip body that does not read: %v", err)
	}
	return io.ReadAll(zr)
}
