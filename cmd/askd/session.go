package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/askd-dev/askd"
)

func cmdSession(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "set-channel" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprintln(e.stdout, sessionUsage)
			return nil
		}
		return usageError(sessionUsage)
	}
	return cmdSetChannel(ctx, e, args[1:])
}

const sessionUsage = `usage: askd session set-channel NAME --hook | --webhook URL --secret S | --command ARG...

How the agent of session NAME is told of its settled asks (agent token):
  --hook              the answer waits for the Stop hook, check_ask or askd check (default)
  --webhook URL       POST {text, ask} to URL with Idempotency-Key, signed with
  --secret S          HMAC-SHA256 of the body under S in Askd-Signature
  --command ARG...    run ARG... on the server without a shell; every argument after
                      --command is one argument, in which {session}, {prompt} and {id}
                      are replaced, e.g. --command claude -p --resume {session} {prompt}`

// cmdSetChannel is askd session set-channel. Everything after --command is
// the argv, taken as given (no flag there is askd's).
func cmdSetChannel(ctx context.Context, e *env, args []string) error {
	var argv []string
	command := false
	for i, a := range args {
		if a == "--command" || a == "-command" {
			command, argv, args = true, args[i+1:], args[:i]
			break
		}
	}
	fs := flags(e, "session set-channel", "NAME --hook | --webhook URL --secret S | --command ARG...")
	r := remoteFlags(fs, false)
	hook := fs.Bool("hook", false, "tell through the Stop hook, check_ask or askd check")
	webhook := fs.String("webhook", "", "POST to this URL")
	secret := fs.String("secret", "", "the webhook's HMAC-SHA256 key")
	fs.Bool("command", false, "run the arguments that follow (each one argument; no shell)")
	// The name may come before or after the flags.
	var names []string
	for {
		if err := parse(e, fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		names = append(names, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(names) != 1 {
		return usageError("session set-channel: give one session NAME\n" + sessionUsage)
	}
	var ch askd.Channel
	chosen := 0
	if *hook {
		ch.Type, chosen = askd.ChannelHook, chosen+1
	}
	if *webhook != "" {
		ch.Type, ch.URL, ch.Secret, chosen = askd.ChannelWebhook, *webhook, *secret, chosen+1
	}
	if command {
		ch.Type, ch.Argv, chosen = askd.ChannelCommand, argv, chosen+1
	}
	if chosen != 1 {
		return usageError("session set-channel: give one of --hook, --webhook URL --secret S, --command ARG...\n" + sessionUsage)
	}
	if *secret != "" && ch.Type != askd.ChannelWebhook {
		return usageError("--secret goes with --webhook")
	}
	c, err := r.client()
	if err != nil {
		return err
	}
	got, err := c.SetChannel(ctx, names[0], ch)
	if err != nil {
		return err
	}
	return r.print(e, got, func(w io.Writer) {
		switch got.Type {
		case askd.ChannelWebhook:
			fmt.Fprintf(w, "session %s: told by webhook %s (signed)\n", term(names[0]), term(got.URL))
		case askd.ChannelCommand:
			fmt.Fprintf(w, "session %s: told by running %s\n", term(names[0]), term(strings.Join(quoteAll(got.Argv), " ")))
		default:
			fmt.Fprintf(w, "session %s: told through the Stop hook, check_ask or askd check\n", term(names[0]))
		}
	})
}

func quoteAll(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`") {
			out[i] = fmt.Sprintf("%q", a)
		} else {
			out[i] = a
		}
	}
	return out
}
