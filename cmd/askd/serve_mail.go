package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/tell"
)

// mailConfig is askd serve's flags of email (SPEC §16).
type mailConfig struct {
	server, user, passwordFile, from string
	insecure                         bool
	to                               listFlag

	mail *tell.Mail // read by check
}

// mailFlags are the flags of sending email.
func mailFlags(fs *flag.FlagSet, mc *mailConfig) {
	fs.StringVar(&mc.server, "notify-smtp", "", "mail each new ask to the people it is routed to who have an address (their own, PUT /api/me/notify,\n"+
		"or their identity provider's), through this SMTP server: smtp://HOST:PORT (STARTTLS) or smtps://HOST:PORT.\n"+
		"Only over TLS, its certificate verified (--notify-smtp-insecure: a loopback relay without);\n"+
		"needs --notify-email-from and --public-url")
	fs.StringVar(&mc.from, "notify-email-from", "", "the address askd's mail comes from (one mailbox, e.g. askd@example.com)")
	fs.Var(&mc.to, "notify-email-to", "mail each new ask that reaches nobody's own channel to this address, as the other --notify-*\n"+
		"notifiers are told (repeat, or comma-separate); its links answer as --notify-as")
	fs.StringVar(&mc.user, "notify-smtp-user", "", "authenticate to the SMTP server as this user (AUTH PLAIN, only over TLS: smtps, or a STARTTLS\n"+
		"that succeeded; a server that offers neither is sent nothing); needs --notify-smtp-password-file")
	fs.StringVar(&mc.passwordFile, "notify-smtp-password-file", "", "a file holding the SMTP password (read at start; taken from no flag or variable, so it is never in a\n"+
		"process list or a log)")
	fs.BoolVar(&mc.insecure, "notify-smtp-insecure", false, "reach a loopback SMTP server (a relay on this machine) without TLS, or with any certificate;\n"+
		"refused for any other server. Authentication still needs TLS")
}

// check checks the email flags and reads them into sc.cfg and mc.mail. A
// mistake is a cli.UsageError naming its flag.
func (mc *mailConfig) check(sc *serveConfig) error {
	if mc.server == "" {
		for _, f := range []struct{ name, v string }{{"--notify-email-from", mc.from}, {"--notify-email-to", mc.to.String()},
			{"--notify-smtp-user", mc.user}, {"--notify-smtp-password-file", mc.passwordFile}} {
			if f.v != "" {
				return cli.UsageError(f.name + ": needs --notify-smtp, the SMTP server that sends the mail")
			}
		}
		if mc.insecure {
			return cli.UsageError("--notify-smtp-insecure: needs --notify-smtp")
		}
		return nil
	}
	srv, err := tell.ParseSMTP(mc.server)
	if err != nil {
		return cli.UsageError("--notify-smtp: " + err.Error())
	}
	m := &tell.Mail{Server: srv, From: mc.from, Insecure: mc.insecure, User: mc.user}
	switch {
	case mc.from == "":
		return cli.UsageError("--notify-email-from: required with --notify-smtp: the address askd's mail comes from")
	case mc.insecure && !srv.Loopback():
		return cli.UsageError(fmt.Sprintf("--notify-smtp-insecure: only for a loopback server (a relay on this machine), not %s: mail across a network goes over TLS", srv.Host))
	case mc.user != "" && mc.passwordFile == "":
		return cli.UsageError("--notify-smtp-password-file: required with --notify-smtp-user: a file holding the password")
	case mc.user == "" && mc.passwordFile != "":
		return cli.UsageError("--notify-smtp-user: required with --notify-smtp-password-file")
	}
	if err := askd.CheckMailbox("--notify-email-from", mc.from); err != nil {
		return cli.UsageError(askd.ErrorMessage(err))
	}
	if mc.passwordFile != "" {
		b, err := os.ReadFile(mc.passwordFile)
		if err != nil {
			return cli.UsageError(fmt.Sprintf("--notify-smtp-password-file: %v", err))
		}
		if m.Password = strings.TrimRight(string(b), "\r\n"); m.Password == "" {
			return cli.UsageError(fmt.Sprintf("--notify-smtp-password-file: %s is empty", mc.passwordFile))
		}
	}
	for _, to := range splitList(mc.to) {
		if err := askd.CheckMailbox("--notify-email-to", to); err != nil {
			return cli.UsageError(askd.ErrorMessage(err))
		}
		sc.cfg.Notifiers = append(sc.cfg.Notifiers, askd.Channel{Type: askd.NotifyEmail, Email: to})
	}
	sc.cfg.Mail = true
	mc.mail = m
	return nil
}
