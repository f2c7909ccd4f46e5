package httpapi

import "net/http"

// routeTable is the mux as routes registers on it: each pattern is noted
// as it is registered, so that Routes can list what this server serves.
type routeTable struct {
	mux      *http.ServeMux
	patterns *[]string
}

func (t routeTable) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	*t.patterns = append(*t.patterns, pattern)
	t.mux.HandleFunc(pattern, h)
}

func (t routeTable) Handle(pattern string, h http.Handler) {
	*t.patterns = append(*t.patterns, pattern)
	t.mux.Handle(pattern, h)
}

// Routes returns the patterns of the routes s serves, in the order they
// were registered: "GET /api/asks/{id}", "/mcp", ... The tests hold every
// /api one to the OpenAPI document (api/openapi.json).
func (s *Server) Routes() []string { return append([]string(nil), s.patterns...) }
