package main

import (
	"context"
	"fmt"
)

// cmdGate runs a gate: askd gate git, the pre-receive hook askd install
// git-gate writes.
//
// A stand-in for the dispatch askd gate run brings (gate run | git); the
// two are reconciled when both land.
func cmdGate(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "git" {
		return gateGit(ctx, e, args[1:])
	}
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprintln(e.stdout, "Usage: askd gate git [--ref PATTERN]...   (the pre-receive hook askd install git-gate writes)")
		return nil
	}
	return usageError("gate: say which gate: git (askd gate -h)")
}
