// Package soak holds askd's fault tests, run against the real binary: kill -9
// of the server at random points under load and restart on the same database
// (nothing acknowledged is lost, every blocked agent gets its answer or a
// clear error, the counts add up), a stalled event-stream reader that must not
// hold up the others, and graceful shutdown on SIGTERM.
//
// `make test` runs a short version; `make soak` a long one, sized by
// ASKD_SOAK_CYCLES_SQLITE and ASKD_SOAK_CYCLES_PG (kill cycles). Figures of
// the long run are in docs/soak.md.
package soak
