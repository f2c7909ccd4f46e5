package apicmd

import (
	"context"
	"fmt"
	"io"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
)

// Session is askd session set-channel, with an agent token: how a
// session's agent is told of its settled asks.
func Session(ctx context.Context, e *cli.Env, args []string) error {
	if len(args) == 0 || args[0] != "set-channel" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprintln(e.Stdout, sessionUsage)
			return nil
		}
		return cli.UsageError("session: say set-channel (askd session -h)")
	}
	return setChannel(ctx, e, args[1:])
}

const sessionUsage = `usage: askd session set-channel NAME --hook | --webhook URL --secret S | --command TEMPLATE

How the agent of session NAME is told of its settled asks (agent token):
  --hook              the answer waits for the Stop hook, check_ask or askd check (default)
  --webhook URL       POST {text, ask} to URL with Idempotency-Key, signed with
  --secret S          HMAC-SHA256 of the body under S in Askd-Signature; a URL reaching
                      the server's own machine or networks (loopback, private, link-local...)
                      is refused unless the operator allows it (askd serve --webhook-allow)
  --command TEMPLATE  run the operator's command template TEMPLATE on the server (askd serve
                      --tell-command TEMPLATE=ARGV), with {session}, {prompt} and {id} filled
                      in; programs come only from the operator's templates`

// setChannel is askd session set-channel.
func setChannel(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "session set-channel", "NAME --hook | --webhook URL --secret S | --command TEMPLATE")
	r := cli.RemoteFlags(e, fs, cli.AgentSide)
	hook := fs.Bool("hook", false, "tell through the Stop hook, check_ask or askd check")
	webhook := fs.String("webhook", "", "POST to this URL (not the server's own machine or networks, unless askd serve --webhook-allow allows it)")
	secret := fs.String("secret", "", "the webhook's HMAC-SHA256 key")
	command := fs.String("command", "", "run the operator's command template of this name (askd serve --tell-command)")
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	names := fs.Args()
	if len(names) > 1 && *command != "" {
		return cli.UsageError("session set-channel: --command takes the name of one of the operator's templates, not a program and its arguments (programs come only from askd serve --tell-command)")
	}
	if len(names) != 1 {
		return cli.UsageError("session set-channel: give one session NAME (askd session -h)")
	}
	var ch askd.Channel
	chosen := 0
	if *hook {
		ch.Type, chosen = askd.ChannelHook, chosen+1
	}
	if *webhook != "" {
		ch.Type, ch.URL, ch.Secret, chosen = askd.ChannelWebhook, *webhook, *secret, chosen+1
	}
	if *command != "" {
		ch.Type, ch.Name, chosen = askd.ChannelCommand, *command, chosen+1
	}
	if chosen != 1 {
		return cli.UsageError("session set-channel: give one of --hook, --webhook URL --secret S, --command TEMPLATE (askd session -h)")
	}
	if *secret != "" && ch.Type != askd.ChannelWebhook {
		return cli.UsageError("--secret goes with --webhook")
	}
	c, err := r.Client()
	if err != nil {
		return err
	}
	got, err := c.SetChannel(ctx, names[0], ch)
	if err != nil {
		return err
	}
	return r.Print(e, got, func(w io.Writer) {
		switch got.Type {
		case askd.ChannelWebhook:
			fmt.Fprintf(w, "session %s: told by webhook %s (signed)\n", cli.Term(names[0]), cli.Term(got.URL))
		case askd.ChannelCommand:
			fmt.Fprintf(w, "session %s: told by running the operator's command template %s\n", cli.Term(names[0]), cli.Term(got.Name))
		default:
			fmt.Fprintf(w, "session %s: told through the Stop hook, check_ask or askd check\n", cli.Term(names[0]))
		}
	})
}
