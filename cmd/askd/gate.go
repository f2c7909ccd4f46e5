package main

import (
	"context"
	"fmt"

	"github.com/askd-dev/askd/internal/cli"
)

// cmdGate is askd gate: approvals for what is not an agent (SPEC §12).
// `askd gate run` asks before it runs a command (gate_run.go); `askd gate
// git` is a git pre-receive hook (gate_git.go).
func cmdGate(ctx context.Context, e *cli.Env, args []string) error {
	sub, args, err := cli.Subcommand(e, "gate", gateUsage(), args, "run", "git")
	switch sub {
	case "run":
		return gateRun(ctx, e, args)
	case "git":
		return gateGit(ctx, e, args)
	}
	return err
}

func gateUsage() string {
	return fmt.Sprintf(`Usage: askd gate run|git [flags]

  askd gate run %s
      ask a person to approve CMD, wait for the decision, then run CMD (a CI step,
      a deploy script): exit 1 when rejected, 75 when no one decided in time
  askd gate git %s
      git's pre-receive hook: a push to a protected ref is refused at once until a
      person approved it (askd install git-gate writes it)

Run 'askd gate run -h' or 'askd gate git -h' for their flags.
`, gateRunSynopsis, gateGitSynopsis)
}
