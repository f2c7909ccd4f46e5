package tell

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/askd-dev/askd"
)

// ParseChannel reads askd serve --tell: "hook", "webhook=URL" or
// "webhook=URL,secret=S" (secret, when not in the value, is the one given
// apart, e.g. from ASKD_TELL_SECRET), or "command=ARGV" with ARGV a JSON
// array of arguments or words split on spaces. The channel is validated.
func ParseChannel(spec, secret string) (askd.Channel, error) {
	var ch askd.Channel
	switch {
	case spec == "" || spec == "hook":
		ch.Type = askd.ChannelHook
	case strings.HasPrefix(spec, "webhook="):
		ch.Type = askd.ChannelWebhook
		rest := strings.TrimPrefix(spec, "webhook=")
		if i := strings.LastIndex(rest, ",secret="); i >= 0 {
			rest, secret = rest[:i], rest[i+len(",secret="):]
		}
		ch.URL, ch.Secret = rest, secret
	case strings.HasPrefix(spec, "command="):
		argv, err := ParseArgv(strings.TrimPrefix(spec, "command="))
		if err != nil {
			return ch, err
		}
		ch.Type, ch.Argv = askd.ChannelCommand, argv
	default:
		return ch, fmt.Errorf("%q is not hook, webhook=URL[,secret=S] or command=ARGV", spec)
	}
	if err := ch.Validate(); err != nil {
		return ch, errors.New(askd.ErrorMessage(err))
	}
	return ch, nil
}

// ParseArgv reads a command line given as a flag's value: a JSON array of
// strings (`["claude","-p","{prompt}"]`, for arguments with spaces), or
// words split on spaces. It is never given to a shell.
func ParseArgv(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	var argv []string
	if strings.HasPrefix(s, "[") {
		if err := json.Unmarshal([]byte(s), &argv); err != nil {
			return nil, fmt.Errorf("command: not a JSON array of strings: %w", err)
		}
	} else {
		argv = strings.Fields(s)
	}
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("command: no program given")
	}
	return argv, nil
}

// ParseNotifiers reads the values of a --notify-* flag (repeated, or
// comma-separated URLs) as notifiers of type t.
func ParseNotifiers(t askd.ChannelType, values []string) ([]askd.Channel, error) {
	var out []askd.Channel
	for _, v := range values {
		for _, u := range strings.Split(v, ",") {
			if u = strings.TrimSpace(u); u == "" {
				continue
			}
			n := askd.Channel{Type: t, URL: u}
			if err := n.ValidateNotifier(); err != nil {
				return nil, errors.New(askd.ErrorMessage(err))
			}
			out = append(out, n)
		}
	}
	return out, nil
}
