// Package apicmd holds askd's commands that talk to a running askd over its
// HTTP API: the agent's (ask, check, cancel, session) with an agent token
// from ASKD_TOKEN, the person's (list, show, answer, dismiss, claim, rule,
// policy) with a human token from ASKD_HUMAN_TOKEN (cli.Remote). One file
// per command; what they print of an ask is describe.go's, and form.go's for
// form asks, every string from the server made safe for a terminal.
//
// Each command is a function of a *cli.Env and its arguments that
// cmd/askd's table points at. It returns an error carrying its exit status
// (cli.ExitCode): a cli.UsageError for a mistake in the command line,
// refused before the server is asked to change anything, or the server's or
// the connection's error.
package apicmd
