package response

import "context"

// AccessLine is a request's line in the access log while the request is
// served: the access log (internal/httpapi) puts one in each request's
// context, and a handler tells it what only the handler knows. A handler
// finds none (AccessLineOf is nil) when the access log is off, or in tests
// that mount it alone.
type AccessLine interface {
	// NoteRPC records an MCP request's JSON-RPC method and, for a
	// tools/call, its tool's name.
	NoteRPC(method, tool string)
	// Hijacked says the handler took the request's connection over
	// (http.Hijacker), before it returns: the line is then written by End,
	// not when the handler returns.
	Hijacked()
	// End writes a hijacked request's line, with the status of the response
	// written to its connection (0: none was). Only the first call counts.
	End(status int)
}

type accessLineKey struct{}

// WithAccessLine returns ctx carrying l.
func WithAccessLine(ctx context.Context, l AccessLine) context.Context {
	return context.WithValue(ctx, accessLineKey{}, l)
}

// AccessLineOf returns the access line ctx carries, or nil.
func AccessLineOf(ctx context.Context) AccessLine {
	l, _ := ctx.Value(accessLineKey{}).(AccessLine)
	return l
}
