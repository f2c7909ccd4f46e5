package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/askd-dev/askd"
)

// Command and webhook channels (SPEC §5):
//
//   - Programs come only from the operator: a command channel names one of
//     Config.TellCommands, and a delivery runs that template as this process
//     defines it when it is sent. A channel holding argv (stored by an askd
//     before templates) or naming a template this process does not define is
//     not run: its delivery fails for good with the reason in the ask's
//     history, and the ask waits, untold, for the Stop hook or check_ask.
//   - No value becomes an option: askd.ExpandTemplate fills each placeholder
//     into one argument and refuses a value that would start one with "-".
//   - Agents' webhooks are held to the destination guard (askd.RefusedAddr,
//     Config.WebhookAllow): refused when set if obviously refused, and, the
//     real guard, when dialled (internal/tell). The operator's own --tell
//     webhook and notifiers are not held to it.

// checkChannel checks what only the server's settings tell about a valid
// channel: that a command channel's template exists, and that a webhook's
// URL is not obviously one the guard refuses. Errors are EINVALID naming the
// field.
func (s *Service) checkChannel(ch *askd.Channel) error {
	switch ch.Type {
	case askd.ChannelCommand:
		if _, ok := s.cfg.TellCommands[ch.Name]; !ok {
			return askd.Errorf(askd.EINVALID, "name: %s", s.unknownTemplate(ch.Name))
		}
	case askd.ChannelWebhook:
		if s.WebhookGuarded(ch.URL) {
			return s.cfg.WebhookAllow.CheckURL("url", ch.URL)
		}
	}
	return nil
}

// unknownTemplate says that name is not one of the server's templates, and
// which are.
func (s *Service) unknownTemplate(name string) string {
	if len(s.cfg.TellCommands) == 0 {
		return fmt.Sprintf("no command template %q: this server defines none, so command channels are unavailable (the operator defines them: askd serve --tell-command NAME=ARGV)", name)
	}
	names := make([]string, 0, len(s.cfg.TellCommands))
	for n := range s.cfg.TellCommands {
		names = append(names, n)
	}
	slices.Sort(names)
	return fmt.Sprintf("no command template %q; this server defines: %s", name, strings.Join(names, ", "))
}

// WebhookGuarded reports whether a tell webhook to url is held to the
// destination guard: every one but the operator's --tell default (matched by
// its exact URL, which the operator chose as a destination).
func (s *Service) WebhookGuarded(url string) bool {
	return s.cfg.Tell.Type != askd.ChannelWebhook || url != s.cfg.Tell.URL
}

// TellArgv returns what a claimed command delivery runs: the operator's
// template its channel names, its placeholders filled from the delivery.
// Errors (EINVALID) say why it must not run: the channel holds argv (set by
// an agent before askd took programs only from templates), names a template
// this process does not define, or a value would become an option.
func (s *Service) TellArgv(cl *Claimed) ([]string, error) {
	d := cl.Delivery
	if d.Channel.Argv != nil {
		return nil, askd.Errorf(askd.EINVALID, "argv: this command channel holds a program chosen by an agent token (set before askd took programs only from the operator's templates), so it was not run; set the session's channel again, naming a template")
	}
	template, ok := s.cfg.TellCommands[d.Channel.Name]
	if !ok {
		return nil, askd.Errorf(askd.EINVALID, "name: %s", s.unknownTemplate(d.Channel.Name))
	}
	return askd.ExpandTemplate(template, d.Session, cl.Text, d.AskID)
}
