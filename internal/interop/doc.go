// Package interop runs askd against the tools integrators use, from npm,
// pinned, with the real askd binary (SPEC §19): a TypeScript client whose
// types openapi-typescript generates from GET /api/openapi.json, compiled
// by tsc and run by node, creates an ask and answers it; the official
// Standard Webhooks library verifies askd's tell and notification webhooks
// on a loopback receiver, and refuses a replayed delivery and a tampered
// one. It has no code but its tests.
package interop
