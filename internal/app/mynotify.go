package app

import (
	"context"

	"github.com/askd-dev/askd"
)

// # People's own notifications (SPEC §10)
//
// A person's own ntfy topic and webhook (PUT /api/me/notify) are held to
// the address rules of an agent's webhook (channel.go).

// MyNotify returns where person c hears of the asks routed to them (people
// of every role), and whether this askd mails no one (MailOff).
func (s *Service) MyNotify(ctx context.Context, c askd.Caller) (*askd.PersonNotify, error) {
	if err := c.Needs(askd.AccessViewer); err != nil {
		return nil, err
	}
	var out *askd.PersonNotify
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		out, err = tx.Teams.Notify(ctx, c.Name)
		return err
	})
	if err != nil {
		return nil, err
	}
	out.MailOff = !s.cfg.Mail
	return out, nil
}

// SetMyNotify replaces person c's notification settings with n (both URLs
// empty and no email: none). An email is one mailbox; absent, the person
// has not chosen and their provider's address is mailed; "" is a choice
// of none (mail.go). A provider_email sent is ignored. Each URL is an http(s) URL, not obviously one the
// destination guard refuses unless the operator allows it (as an agent's
// webhook, checkChannel; the real guard is when it is sent); errors are
// EINVALID naming the field, and nothing is stored then. A webhook secret
// of "******" (what a reply shows in its place) keeps the one stored;
// absent, the setting has none.
func (s *Service) SetMyNotify(ctx context.Context, c askd.Caller, n askd.PersonNotify) (*askd.PersonNotify, error) {
	if err := c.Needs(askd.AccessViewer); err != nil {
		return nil, err
	}
	if err := n.Validate(); err != nil {
		return nil, err
	}
	for _, f := range []struct{ field, url string }{{"ntfy", n.Ntfy}, {"webhook", n.Webhook}} {
		if f.url == "" {
			continue
		}
		if err := s.cfg.WebhookAllow.CheckURL(f.field, f.url); err != nil {
			return nil, err
		}
	}
	n.Person, n.MailOff = c.Name, false
	if err := s.store.Update(ctx, func(tx askd.Tx) error {
		old, err := tx.Teams.Notify(ctx, c.Name)
		if err != nil {
			return err
		}
		n.ProviderEmail = old.ProviderEmail // the provider's to set (mail.go), not the person's
		if n.KeepsSecret() {
			if old.WebhookSecret == "" {
				return askd.Errorf(askd.EINVALID, "webhook_secret: \"******\" keeps the secret stored, and none is; send the secret itself")
			}
			n.WebhookSecret = old.WebhookSecret
		}
		return tx.Teams.SetNotify(ctx, &n)
	}); err != nil {
		return nil, err
	}
	s.notifyKept.forget()
	n.MailOff = !s.cfg.Mail
	return &n, nil
}
