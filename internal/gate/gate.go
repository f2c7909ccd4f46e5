// Package gate is askd gate: approvals for what is not an agent (SPEC §12).
// `askd gate run` asks a person before it runs a command (run.go); `askd gate
// git` is a git pre-receive hook that refuses a push to a protected ref until
// a person approved it (git.go); `askd gate mcp` puts a person between an MCP
// client and an MCP server (SPEC §14: package internal/mcpgate).
//
// Its contracts with the rest of askd: the key of a git push's approval
// (GitKey, GitKeyPrefix), which the server matches for `replaces`, and the
// config file and ref patterns askd install git-gate writes beside the hook
// (ReadConfig, ParseConfig, RefPatterns).
package gate

import (
	"context"
	"fmt"

	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/mcpgate"
)

// Command is askd gate: `askd gate run` (run.go), `askd gate git` (git.go)
// or `askd gate mcp` (mcpgate.Run). It returns an error carrying the exit
// status (cli.ExitCode).
func Command(ctx context.Context, e *cli.Env, args []string) error {
	sub, args, err := cli.Subcommand(e, "gate", gateUsage(), args, "run", "git", "mcp")
	switch sub {
	case "run":
		return gateRun(ctx, e, args)
	case "git":
		return gateGit(ctx, e, args)
	case "mcp":
		return mcpgate.Run(ctx, e, args)
	}
	return err
}

func gateUsage() string {
	return fmt.Sprintf(`Usage: askd gate run|git|mcp [flags]

  askd gate run %s
      ask a person to approve CMD, wait for the decision, then run CMD (a CI step,
      a deploy script): exit 1 when rejected, 75 when no one decided in time
  askd gate git %s
      git's pre-receive hook: a push to a protected ref is refused at once until a
      person approved it (askd install git-gate writes it)
  askd gate mcp --name NAME [--allow TOOL]... -- COMMAND ARGS...
  askd gate mcp --name NAME [--allow TOOL]... --upstream URL [--listen ADDR]
      an MCP server in front of the real one (a command it starts, or a URL): the
      client sees the same tools; each call of a tool --allow does not name waits for
      a person's approval, and the server's questions reach a person
      (askd install mcp-gate wires a client's server through it)

Run 'askd gate run -h', 'askd gate git -h' or 'askd gate mcp -h' for their flags.
`, gateRunSynopsis, gateGitSynopsis)
}
