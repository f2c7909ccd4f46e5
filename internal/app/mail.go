package app

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"strings"

	"github.com/askd-dev/askd"
)

// # Email (SPEC §16)
//
// A person with an address is mailed as through any channel of their own
// (notifypeople.go): routed as SPEC §10 says, one delivery per ask and
// person through the outbox, their answer links answering as them (none
// for a viewer); --notify-email-to is the server's fallback address. The
// address mailed is the person's choice (PUT /api/me/notify, email), else,
// while they have not chosen, the one their identity provider gave,
// verified, at their last sign-in (setProviderEmail); a choice of none
// ("") is kept through sign-ins.
//
// One ask is one thread in a mail client: after the first mail, those
// about the same ask — a new revision, its escalation, an approval counted
// toward a quorum, its settling by someone else (enqueueSettledMail) — are
// follow-ups of it (internal/tell makes the threading headers from
// NotifyReasonOf). Every mail to a person carries a List-Unsubscribe link
// (UnsubscribeCode) that records their choice of none.

// NotifyReason is why a notify delivery was written.
type NotifyReason string

const (
	NotifyNew        NotifyReason = "new"              // a new ask, or a new revision of an attention ask
	NotifyEscalated  NotifyReason = "escalated"        // escalated to the delivery's person (escalate.go)
	NotifyApproval   NotifyReason = "approved_in_part" // an approval counted toward a quorum, more needed (quorum.go)
	NotifySettledMsg NotifyReason = "settled"          // settled by someone else (enqueueSettledMail); only mail
)

// settledNotify ends the key of a mail saying an ask was settled.
const settledNotify = "settled"

// NotifyReasonOf says why notify delivery d was written, from its key.
func NotifyReasonOf(d *askd.Delivery) NotifyReason {
	_, why, _ := strings.Cut(d.Key, "!")
	switch {
	case why == "escalated":
		return NotifyEscalated
	case strings.HasPrefix(why, approvalNotify):
		return NotifyApproval
	case why == settledNotify:
		return NotifySettledMsg
	}
	return NotifyNew
}

// enqueueSettledMail writes, as ask a settles by a person's answer or
// dismissal, a mail to each person (and the fallback address) mailed about
// it but the one who settled it, saying who did and how: their mail's
// links now answer nothing. It reports whether it wrote any. Whether one
// was mailed is whether its mail's delivery of a's revision is in the
// outbox (sent, or to be sent first: deliveries are claimed oldest first).
func (s *Service) enqueueSettledMail(ctx context.Context, tx askd.Tx, a *askd.Ask) (bool, error) {
	if !s.mails() || a.Status != askd.StatusAnswered && a.CancelReason != askd.ReasonDismissed {
		return false, nil
	}
	type mailed struct {
		ch  askd.Channel
		key string // the first mail's delivery key
	}
	var to []mailed
	for i, n := range s.cfg.Notifiers {
		if n.Type == askd.NotifyEmail {
			to = append(to, mailed{n, askd.NotifyKey(a, i)})
		}
	}
	routes := []string{a.Owner}
	if a.EscalatedTo != "" {
		routes = append(routes, a.EscalatedTo)
	}
	for _, route := range routes {
		people, err := routedPeople(ctx, tx, route)
		if err != nil {
			return false, err
		}
		chans, err := s.peopleChannels(ctx, tx, people)
		if err != nil {
			return false, err
		}
		for _, ch := range chans {
			if ch.Type == askd.NotifyEmail && ch.As != a.SettledBy {
				to = append(to, mailed{ch.Channel, askd.PersonNotifyKey(a, ch.As, askd.NotifyEmail)})
			}
		}
	}
	now := s.now()
	wrote := false
	for _, m := range to {
		first := ""
		for _, key := range []string{m.key, m.key + "!escalated"} {
			if _, err := tx.Deliveries.Delivery(ctx, key); err == nil {
				first = key
				break
			} else if askd.ErrorCode(err) != askd.ENOTFOUND {
				return false, err
			}
		}
		if first == "" {
			continue // never mailed about it
		}
		d := &askd.Delivery{
			Kind: askd.DeliveryNotify, Key: m.key + "!" + settledNotify, AskID: a.ID, Session: a.Session,
			Channel: m.ch, Status: askd.DeliveryPending, NextAt: &now, CreatedAt: now, UpdatedAt: now,
		}
		if err := tx.Deliveries.AddDelivery(ctx, d); err != nil { // a key taken: written already
			return false, err
		}
		wrote = true
	}
	return wrote, nil
}

// mails reports whether anyone may be mailed: people at their addresses,
// or the fallback address.
func (s *Service) mails() bool {
	return s.cfg.Mail || slices.ContainsFunc(s.cfg.Notifiers, func(n askd.Channel) bool { return n.Type == askd.NotifyEmail })
}

// setProviderEmail records email (verified by the provider, or "" for
// none) as person's provider's address, at a sign-in; it is mailed while
// the person has not chosen one of their own.
func setProviderEmail(ctx context.Context, tx askd.Tx, person, email string) error {
	n, err := tx.Teams.Notify(ctx, person)
	if err != nil || n.ProviderEmail == email {
		return err
	}
	n.ProviderEmail = email
	return tx.Teams.SetNotify(ctx, n)
}

// verifiedEmail is the address a provider's claims give when they mark it
// verified (email_verified true) and it is one mailbox; "" otherwise.
func verifiedEmail(claims map[string]any) string {
	email, _ := claims["email"].(string)
	verified := false
	switch v := claims["email_verified"].(type) {
	case bool:
		verified = v
	case string: // some providers send it as text
		verified = v == "true"
	}
	if !verified || askd.CheckMailbox("email", email) != nil {
		return ""
	}
	return email
}

// UnsubscribeCode is the code of person's List-Unsubscribe link, the
// same in every mail: their name and an HMAC-SHA256 of it keyed with the
// stored hash of their human token, a value of 256 random-looking bits
// that never leaves the database. So no table keeps the links, and
// rotating or revoking the token ends them all. ENOTFOUND when person has
// no human token.
func (s *Service) UnsubscribeCode(ctx context.Context, person string) (string, error) {
	var t *askd.Token
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		t, err = tx.Tokens.TokenByName(ctx, person)
		return err
	})
	if err != nil {
		return "", err
	}
	if t.Role != askd.RoleHuman {
		return "", askd.Errorf(askd.ENOTFOUND, "no person named %q", person)
	}
	return unsubscribeCode(t), nil
}

func unsubscribeCode(t *askd.Token) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(t.Name)) + "." + enc.EncodeToString(unsubscribeMAC(t))
}

func unsubscribeMAC(t *askd.Token) []byte {
	m := hmac.New(sha256.New, []byte(t.Hash))
	m.Write([]byte("askd unsubscribe\x00" + t.Name))
	return m.Sum(nil)[:16]
}

// unsubscriber is the person whose unsubscribe link has the code, read in
// tx; ENOTFOUND for a code that is no person's (mistyped, tampered with,
// their token rotated or revoked).
func unsubscriber(ctx context.Context, tx askd.Tx, code string) (string, error) {
	unknown := askd.Errorf(askd.ENOTFOUND, "this unsubscribe link is unknown: it was mistyped, or its person's token has changed")
	enc := base64.RawURLEncoding
	name, mac, ok := strings.Cut(code, ".")
	nameBytes, err1 := enc.DecodeString(name)
	macBytes, err2 := enc.DecodeString(mac)
	if !ok || err1 != nil || err2 != nil {
		return "", unknown
	}
	t, err := tx.Tokens.TokenByName(ctx, string(nameBytes))
	if askd.ErrorCode(err) == askd.ENOTFOUND {
		return "", unknown
	}
	if err != nil {
		return "", err
	}
	if t.Role != askd.RoleHuman || !hmac.Equal(macBytes, unsubscribeMAC(t)) {
		return "", unknown
	}
	return t.Name, nil
}

// OpenUnsubscribe returns the person whose unsubscribe link has the code,
// and changes nothing: opening a link (a person, a mail scanner) never
// unsubscribes. ENOTFOUND for an unknown code.
func (s *Service) OpenUnsubscribe(ctx context.Context, code string) (string, error) {
	var person string
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		person, err = unsubscriber(ctx, tx, code)
		return err
	})
	return person, err
}

// Unsubscribe records, for the person whose unsubscribe link has the code
// (RFC 8058's one-click POST, or the link page's button), a choice of no
// email, which later sign-ins keep; their other channels stay. It returns
// the person. ENOTFOUND for an unknown code.
func (s *Service) Unsubscribe(ctx context.Context, code string) (string, error) {
	var person string
	err := s.store.Update(ctx, func(tx askd.Tx) (err error) {
		if person, err = unsubscriber(ctx, tx, code); err != nil {
			return err
		}
		n, err := tx.Teams.Notify(ctx, person)
		if err != nil {
			return err
		}
		none := ""
		n.Email = &none
		return tx.Teams.SetNotify(ctx, n)
	})
	if err != nil {
		return "", err
	}
	s.notifyKept.forget()
	s.cfg.Logger.Info("email: unsubscribed by link", "person", person)
	return person, nil
}
