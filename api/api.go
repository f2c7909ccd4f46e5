// Package api holds askd's OpenAPI document (openapi.json), the
// machine-readable form of the HTTP API's contract (SPEC §19): every /api
// route with its parameters, bodies, statuses and errors, both token
// schemes, and the webhooks askd sends. askd serves it at GET
// /api/openapi.json; the test suite checks every response it receives
// against it (internal/openapicheck), so the document cannot drift from
// the code.
//
// It is written by hand, not generated from the handlers' types: a document
// derived from the code would agree with the code by construction, and
// checking the code against it would prove nothing. Written apart, it is a
// second statement of the contract that the tests hold the code to, and it
// can say what no Go type says (which fields are required, the kinds' enums,
// the shape an ask takes with its history, each status's meaning).
package api

import (
	_ "embed"
)

//go:embed openapi.json
var document []byte

// Document returns the OpenAPI document, a copy the caller may keep.
func Document() []byte { return append([]byte(nil), document...) }
