package main

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/hostcheck"
	"github.com/askd-dev/askd/internal/httpapi"
	"github.com/askd-dev/askd/internal/openstore"
	"github.com/askd-dev/askd/internal/tell"
)

// check checks the flags of askd serve, in the order a person reads them,
// and reads their values into sc.cfg and sc.hosts. A mistake is a
// cli.UsageError naming its flag.
func (sc *serveConfig) check() error {
	switch sc.role {
	case httpapi.RoleAll, httpapi.RoleAgent, httpapi.RoleInbox:
	default:
		return cli.UsageError(fmt.Sprintf("--role: %q is not all, agent or inbox", sc.role))
	}
	if sc.role != httpapi.RoleAll && !openstore.IsPostgres(sc.db) {
		return cli.UsageError(fmt.Sprintf("--role %s needs PostgreSQL (--db postgres://...): on SQLite one process serves both sides, so run --role all", sc.role))
	}
	switch sc.previewFormat {
	case "markdown":
	case "html":
		sc.cfg.PreviewHTML = true
	default:
		return cli.UsageError(fmt.Sprintf("--preview-format: %q is not markdown or html", sc.previewFormat))
	}
	if sc.retain != "" {
		d, err := askd.ParseDays(sc.retain) // bounded: days that would wrap past the longest Duration are refused
		if err != nil || d <= 0 {
			return cli.UsageError(fmt.Sprintf("--retain: %q is not a duration such as 90d or 720h", sc.retain))
		}
		sc.cfg.Retain = d
	}
	if err := hostsConfig(sc); err != nil {
		return err
	}
	if sc.bodyTimeout <= 0 {
		return cli.UsageError("--body-timeout: must be positive")
	}
	if err := tellConfig(sc); err != nil {
		return err
	}
	if err := sc.mail.check(sc); err != nil { // serve_mail.go
		return err
	}
	if err := linksConfig(sc); err != nil {
		return err
	}
	if err := sc.signIn.check(sc.publicURL); err != nil {
		return err
	}
	sc.cfg.OIDC, sc.cfg.ProxyCreatePeople, sc.cfg.ProviderSessionMax = sc.signIn.oidc, sc.signIn.proxyCreate, sc.signIn.sessionMaxAge
	return nil
}

// hostsConfig checks --public-url and --allowed-hosts and collects the Host
// names served besides loopback ones.
func hostsConfig(sc *serveConfig) error {
	if sc.publicURL != "" {
		u, err := url.Parse(sc.publicURL)
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return cli.UsageError(fmt.Sprintf("--public-url: %q is not an http(s) URL such as https://askd.example.com", sc.publicURL))
		}
		sc.hosts = append(sc.hosts, u.Hostname())
	}
	for _, v := range sc.allowedHosts {
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h == "" {
				continue
			}
			if err := hostcheck.Valid(h); err != nil {
				return cli.UsageError("--allowed-hosts: " + err.Error())
			}
			sc.hosts = append(sc.hosts, h)
		}
	}
	return nil
}

// tellConfig reads the flags of telling and notifying into sc.cfg.
func tellConfig(sc *serveConfig) error {
	if err := commandConfig(sc); err != nil {
		return err
	}
	allow, err := tell.ParseWebhookAllow(sc.webhookAllow)
	if err != nil {
		return cli.UsageError("--webhook-allow: " + err.Error())
	}
	sc.cfg.WebhookAllow = allow
	if sc.tellTimeout <= 0 {
		return cli.UsageError("--tell-timeout: must be positive")
	}
	if sc.cfg.TellAttempts <= 0 {
		return cli.UsageError("--tell-attempts: must be at least 1")
	}
	if sc.beforeTell != "" {
		gate, err := tell.NewGate(sc.beforeTell, 10*time.Second)
		if err != nil {
			return cli.UsageError(err.Error())
		}
		sc.cfg.BeforeTell = gate
	}
	for _, n := range []struct {
		flag   string
		t      askd.ChannelType
		values []string
	}{
		{"--notify-webhook", askd.NotifyWebhook, sc.notifyWebhook},
		{"--notify-slack", askd.NotifySlack, sc.notifySlack},
		{"--notify-ntfy", askd.NotifyNtfy, sc.notifyNtfy},
	} {
		ns, err := tell.ParseNotifiers(n.t, n.values)
		if err != nil {
			return cli.UsageError(n.flag + ": " + err.Error())
		}
		sc.cfg.Notifiers = append(sc.cfg.Notifiers, ns...)
	}
	if err := notifySecretConfig(sc); err != nil {
		return err
	}
	if sc.notifyPush {
		sc.cfg.Notifiers = append(sc.cfg.Notifiers, askd.Channel{Type: askd.NotifyPush})
	}
	return nil
}

// notifySecretConfig gives --notify-webhook-secret to every --notify-webhook
// notifier, whose notifications it then signs (SPEC §19).
func notifySecretConfig(sc *serveConfig) error {
	secret := sc.notifyWebhookSecret
	if secret == "" {
		return nil
	}
	if len(secret) > askd.MaxSecretBytes {
		return cli.UsageError(fmt.Sprintf("--notify-webhook-secret: %d bytes, at most %d", len(secret), askd.MaxSecretBytes))
	}
	signed := 0
	for i, n := range sc.cfg.Notifiers {
		if n.Type == askd.NotifyWebhook {
			sc.cfg.Notifiers[i].Secret = secret
			signed++
		}
	}
	if signed == 0 {
		return cli.UsageError("--notify-webhook-secret: only with --notify-webhook, whose notifications it signs")
	}
	return nil
}

// linksConfig checks the flags of answer links: notifiers with answer
// buttons (ntfy, Slack) need --public-url, since a button's link to
// loopback opens nothing on a phone; --notify-as names a token (checked
// against the database at start, see serve).
func linksConfig(sc *serveConfig) error {
	if sc.publicURL != "" {
		return nil
	}
	if sc.notifyPush {
		return cli.UsageError("--notify-push: push notifications carry the inbox's address and answer buttons, which need --public-url:\n" +
			"the inbox's URL as people's phones reach it (https behind a TLS proxy, or http://localhost:PORT on this machine)")
	}
	for _, n := range sc.cfg.Notifiers {
		if n.Type == askd.NotifyNtfy || n.Type == askd.NotifySlack {
			return cli.UsageError(fmt.Sprintf("--notify-%s: its notifications carry answer buttons, which need --public-url: the inbox's URL as people's phones reach it\n"+
				"(without it they would link to this machine's loopback address, which opens nothing elsewhere)", n.Type))
		}
	}
	if sc.mail.server != "" {
		return cli.UsageError("--notify-smtp: mails carry answer links and a link to the ask, which need --public-url: the inbox's URL as people\n" +
			"reach it from their mail (without it they would link to this machine's loopback address, which opens nothing elsewhere)")
	}
	return nil
}

// answerButtons reports whether notifications carry answer buttons, and so
// need a --notify-as human: an ntfy or Slack notifier, or the fallback
// email address, is configured.
func (sc *serveConfig) answerButtons() bool {
	for _, n := range sc.cfg.Notifiers {
		if n.Type == askd.NotifyNtfy || n.Type == askd.NotifySlack || n.Type == askd.NotifyEmail {
			return true
		}
	}
	return sc.notifyAs != ""
}

// commandConfig reads --tell-command and --tell into sc.cfg: the templates
// by name, and the default channel, whose command=ARGV form defines the
// template tell.DefaultTemplate.
func commandConfig(sc *serveConfig) error {
	templates := map[string][]string{}
	for _, v := range sc.tellCommands {
		ts, err := tell.ParseTemplates(v)
		if err != nil {
			return cli.UsageError("--tell-command: " + err.Error())
		}
		for _, t := range ts {
			if _, dup := templates[t.Name]; dup {
				return cli.UsageError(fmt.Sprintf("--tell-command: %s is defined twice", t.Name))
			}
			templates[t.Name] = t.Argv
		}
	}
	ch, argv, err := tell.ParseChannel(sc.tell, sc.tellSecret)
	if err != nil {
		return cli.UsageError("--tell: " + err.Error())
	}
	if argv != nil {
		if _, dup := templates[ch.Name]; dup {
			return cli.UsageError(fmt.Sprintf("--tell: command=ARGV defines the template %q, which --tell-command defines too; give --tell command=%s", ch.Name, ch.Name))
		}
		templates[ch.Name] = argv
	}
	if _, ok := templates[ch.Name]; ch.Type == askd.ChannelCommand && !ok {
		names := slices.Sorted(maps.Keys(templates))
		if len(names) == 0 {
			return cli.UsageError(fmt.Sprintf("--tell: command=%s names no template: define it with --tell-command %s='[\"program\",\"{prompt}\"]', or give the program itself as a JSON array, command='[\"%s\"]'", ch.Name, ch.Name, ch.Name))
		}
		return cli.UsageError(fmt.Sprintf("--tell: command=%s names no template; defined: %s", ch.Name, strings.Join(names, ", ")))
	}
	sc.cfg.Tell = ch
	if len(templates) > 0 {
		sc.cfg.TellCommands = templates
	}
	return nil
}
