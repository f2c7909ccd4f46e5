package tell

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/askd-dev/askd"
)

// DefaultTemplate is the name a --tell command=ARGV default is defined
// under: the operator's program, which agents may name like any template.
const DefaultTemplate = "default"

// ParseChannel reads askd serve --tell: "hook", "webhook=URL" or
// "webhook=URL,secret=S" (secret, when not in the value, is the one given
// apart, e.g. from ASKD_TELL_SECRET), "command=NAME" naming one of the
// operator's templates (--tell-command NAME=ARGV), or "command=ARGV" with
// ARGV a JSON array or words split on spaces: the operator's own program,
// returned as template to be defined under DefaultTemplate. A single word is
// always a template's name. Whether a named template exists is the
// caller's to check. The channel is validated.
func ParseChannel(spec, secret string) (ch askd.Channel, template []string, err error) {
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
		ch.Type = askd.ChannelCommand
		value := strings.TrimSpace(strings.TrimPrefix(spec, "command="))
		if strings.HasPrefix(value, "[") || strings.ContainsAny(value, " \t") {
			if template, err = ParseArgv(value); err != nil {
				return ch, nil, err
			}
			if err := askd.ValidateTemplate(DefaultTemplate, template); err != nil {
				return ch, nil, errors.New(askd.ErrorMessage(err))
			}
			value = DefaultTemplate
		}
		ch.Name = value
	default:
		return ch, nil, fmt.Errorf("%q is not hook, webhook=URL[,secret=S], command=NAME or command=ARGV", spec)
	}
	if err := ch.Validate(); err != nil {
		return ch, nil, errors.New(askd.ErrorMessage(err))
	}
	return ch, template, nil
}

// Template is an operator's command template: askd serve --tell-command
// NAME=ARGV.
type Template struct {
	Name string
	Argv []string
}

// ParseTemplates reads a --tell-command value: one or more NAME=ARGV, ARGV
// a JSON array of strings, separated by white space (so that
// ASKD_TELL_COMMAND can hold several), e.g.
// resume=["claude","-p","--resume","{session}","{prompt}"]. Each is
// validated by askd.ValidateTemplate.
func ParseTemplates(value string) ([]Template, error) {
	var out []Template
	rest := strings.TrimSpace(value)
	for rest != "" {
		name, argvText, ok := strings.Cut(rest, "=")
		if !ok || strings.ContainsAny(name, " \t\r\n") {
			return nil, fmt.Errorf("%q is not NAME=ARGV with ARGV a JSON array, e.g. resume='[\"claude\",\"-p\",\"--resume\",\"{session}\",\"{prompt}\"]'", rest)
		}
		dec := json.NewDecoder(strings.NewReader(argvText))
		var argv []string
		if err := dec.Decode(&argv); err != nil || !strings.HasPrefix(strings.TrimSpace(argvText), "[") {
			return nil, fmt.Errorf("%s: ARGV is not a JSON array of strings", name)
		}
		if err := askd.ValidateTemplate(name, argv); err != nil {
			return nil, fmt.Errorf("%s: %s", name, askd.ErrorMessage(err))
		}
		out = append(out, Template{Name: name, Argv: argv})
		rest = strings.TrimSpace(argvText[dec.InputOffset():])
	}
	if len(out) == 0 {
		return nil, errors.New("empty: want NAME=ARGV")
	}
	return out, nil
}

// ParseWebhookAllow reads --webhook-allow values (repeated, or
// comma-separated): a host name, matched against webhook URLs' hosts; an IP
// address or a CIDR, matched against the address dialled.
func ParseWebhookAllow(values []string) (askd.WebhookAllow, error) {
	var w askd.WebhookAllow
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			if p, err := netip.ParsePrefix(item); err == nil {
				w.Nets = append(w.Nets, p.Masked())
				continue
			}
			if ip, err := netip.ParseAddr(strings.Trim(item, "[]")); err == nil {
				ip = ip.Unmap().WithZone("")
				w.Nets = append(w.Nets, netip.PrefixFrom(ip, ip.BitLen()))
				continue
			}
			if !hostName(item) {
				return w, fmt.Errorf("%q is not a host name, an IP address or a CIDR", item)
			}
			w.Hosts = append(w.Hosts, strings.TrimSuffix(strings.ToLower(item), "."))
		}
	}
	return w, nil
}

// hostName reports whether s reads as a DNS host name: labels of letters,
// digits, '-' and '_', separated by dots.
func hostName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
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
