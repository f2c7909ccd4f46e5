package askd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// A team's inbox (SPEC §10): people have an access level, agents an owner,
// teams of people escalate what waits too long, and an ask is routed to its
// agent's owner.

// Access is what a person (a human token) may do.
type Access string

const (
	// AccessAdmin may do everything, including teams, policies, the audit
	// trail and anyone's rules.
	AccessAdmin Access = "admin"
	// AccessApprover answers any ask, and makes rules only from asks routed
	// to them or to nobody.
	AccessApprover Access = "approver"
	// AccessViewer reads the inbox and history; answers, dismisses, snoozes,
	// claims and makes rules not at all.
	AccessViewer Access = "viewer"
)

// Accesses lists every access level, highest first.
var Accesses = []Access{AccessAdmin, AccessApprover, AccessViewer}

// Valid reports whether a is one of Accesses.
func (a Access) Valid() bool { return a == AccessAdmin || a == AccessApprover || a == AccessViewer }

// rank orders the levels: a viewer 1, an approver 2, an admin 3; 0 for none.
func (a Access) rank() int {
	switch a {
	case AccessAdmin:
		return 3
	case AccessApprover:
		return 2
	case AccessViewer:
		return 1
	}
	return 0
}

// Needs is nil when c, a person, has access need or above, else an
// EFORBIDDEN naming the role needed: "needs the approver role". Agents are
// refused as they are everywhere a person's act is asked for.
func (c Caller) Needs(need Access) error {
	if c.Role != RoleHuman {
		return Errorf(EFORBIDDEN, "only people (human tokens) may do this")
	}
	if c.Access.rank() < need.rank() {
		return Errorf(EFORBIDDEN, "needs the %s role (this token is a %s)", need, c.Access)
	}
	return nil
}

// TeamPrefix marks an owner or escalation target that is a team:
// "team:platform". Without it, the name is a person's.
const TeamPrefix = "team:"

// TeamOf is the team an owner or target names, and whether it names one.
func TeamOf(route string) (string, bool) { return strings.CutPrefix(route, TeamPrefix) }

// Team is a group of people that agents may belong to and asks be routed
// to. A person who wants escalation is a team of one.
type Team struct {
	Name    string   `json:"name"`
	Members []string `json:"members"` // people (human token names), sorted
	// EscalateAfter: an ask routed to the team, pending, unclaimed and not
	// snoozed this long after it was created (or last revised), is escalated
	// once to EscalateTo (a person, or "team:NAME"). Zero: never.
	EscalateAfter time.Duration `json:"-"` // JSON: "10m" (MarshalJSON)
	EscalateTo    string        `json:"escalate_to,omitempty"`
	CreatedAt     time.Time     `json:"created_at"`
}

// teamJSON is a Team's JSON: its escalation as a duration such as "10m",
// absent when it has none.
type teamJSON struct {
	Name          string    `json:"name"`
	Members       []string  `json:"members"`
	EscalateAfter string    `json:"escalate_after,omitempty"`
	EscalateTo    string    `json:"escalate_to,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
}

// MarshalJSON writes t with escalate_after as a duration ("10m", "1h30m").
func (t Team) MarshalJSON() ([]byte, error) {
	j := teamJSON{Name: t.Name, Members: t.Members, EscalateTo: t.EscalateTo, CreatedAt: t.CreatedAt}
	if j.Members == nil {
		j.Members = []string{}
	}
	if t.EscalateAfter > 0 {
		j.EscalateAfter = ShortDuration(t.EscalateAfter)
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (t *Team) UnmarshalJSON(data []byte) error {
	var j teamJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*t = Team{Name: j.Name, Members: j.Members, EscalateTo: j.EscalateTo, CreatedAt: j.CreatedAt}
	if j.EscalateAfter != "" {
		d, err := time.ParseDuration(j.EscalateAfter)
		if err != nil {
			return fmt.Errorf("escalate_after: %w", err)
		}
		t.EscalateAfter = d
	}
	return nil
}

// ShortDuration is d as askd's flags take it, without zero tails: 10m,
// not 10m0s; 1h, not 1h0m0s.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// PersonNotify is where one person wants to hear of asks routed to them:
// their own ntfy topic, webhook and email address (their Web Push
// subscriptions are kept with their browser sessions).
type PersonNotify struct {
	Person  string `json:"-"`
	Ntfy    string `json:"ntfy,omitempty"`
	Webhook string `json:"webhook,omitempty"`
	// Email is the address the person chose (SPEC §16), one mailbox; nil
	// while they have not chosen, and then ProviderEmail is mailed; ""
	// is a choice of none, which sign-ins keep.
	Email *string `json:"email,omitempty"`
	// ProviderEmail is the address their identity provider gave, verified,
	// at their last sign-in (SPEC §15); "" when it gave none. It is the
	// provider's to set: a person's PUT cannot change it.
	ProviderEmail string `json:"provider_email,omitempty"`
	// MailOff, in replies only, says this askd mails no one (askd serve
	// has no --notify-smtp): an address is kept, and mailed once it does.
	// The stores keep nothing of it; a PUT's is ignored.
	MailOff bool `json:"mail_off,omitempty"`
	// WebhookSecret, when set, signs the webhook's notifications as tell
	// webhooks are signed (Askd-Signature and the Standard Webhooks
	// headers, SPEC §19). It is never shown: a reply carries "******" in
	// its place (Redacted), and a setting sent back with "******" keeps the
	// secret stored (KeepsSecret).
	WebhookSecret string `json:"webhook_secret,omitempty"`
}

// Validate checks n's URLs: each empty, or an absolute http or https URL
// with a host of at most MaxURLBytes; its email: unset, empty, or one
// mailbox (CheckMailbox); and its webhook secret: only with a webhook, at
// most MaxSecretBytes. Errors are EINVALID naming the field (ntfy,
// webhook, email, webhook_secret). Where the URLs may point is the
// server's to say (the destination guard, WebhookAllow.CheckURL).
func (n *PersonNotify) Validate() error {
	var p problems
	if n.Ntfy != "" {
		p.httpURL("ntfy", n.Ntfy)
	}
	if n.Webhook != "" {
		p.httpURL("webhook", n.Webhook)
	}
	if n.Email != nil && *n.Email != "" {
		p.mailbox("email", *n.Email)
	}
	switch {
	case n.WebhookSecret != "" && n.Webhook == "":
		p.add("webhook_secret", "only with webhook: it signs the webhook's notifications")
	case len(n.WebhookSecret) > MaxSecretBytes:
		p.size("webhook_secret", len(n.WebhookSecret), MaxSecretBytes)
	}
	return p.err()
}

// Redacted returns a copy of n fit to show: its webhook secret, if any,
// replaced with "******".
func (n PersonNotify) Redacted() PersonNotify {
	if n.WebhookSecret != "" {
		n.WebhookSecret = secretShown
	}
	return n
}

// MailTo is the address n's person is mailed at: the one they chose, else
// while they have not chosen their provider's; "" for none.
func (n *PersonNotify) MailTo() string {
	if n.Email != nil {
		return *n.Email
	}
	return n.ProviderEmail
}

// None reports whether n holds nothing to keep: no channel, no choice of
// address (a choice of none is kept), no provider's address.
func (n *PersonNotify) None() bool {
	return n.Ntfy == "" && n.Webhook == "" && n.Email == nil && n.ProviderEmail == ""
}

// KeepsSecret reports whether n, as a person sends it, asks to keep the
// webhook secret stored: its webhook_secret is the "******" a reply shows
// in its place, so that a setting read, changed and sent back keeps it.
func (n *PersonNotify) KeepsSecret() bool { return n.WebhookSecret == secretShown }

// TeamTx is what a transaction may do with teams, and with people's
// notification settings. A person is a human token's name: revoking the
// token takes the person out of every team and drops their settings.
type TeamTx interface {
	// CreateTeam stores t (without members); a name in use is ECONFLICT.
	CreateTeam(ctx context.Context, t *Team) error
	// Team returns the team named name with its members; ENOTFOUND when
	// there is none.
	Team(ctx context.Context, name string) (*Team, error)
	// Teams returns every team with its members, by name.
	Teams(ctx context.Context) ([]*Team, error)
	// TeamsOf returns the names of the teams person is a member of, sorted.
	TeamsOf(ctx context.Context, person string) ([]string, error)
	// SetEscalation sets team name's EscalateAfter and EscalateTo;
	// ENOTFOUND when there is none.
	SetEscalation(ctx context.Context, name string, after time.Duration, to string) error
	// AddMembers adds people to team name (those in it already stay);
	// ENOTFOUND when there is no such team, or no human token is named one
	// of people (nothing is added then).
	AddMembers(ctx context.Context, name string, people []string) error
	// RemoveMember takes person out of team name; ENOTFOUND when the team
	// has no such member.
	RemoveMember(ctx context.Context, name, person string) error
	// DeleteTeam deletes team name and its memberships; ENOTFOUND when there
	// is none.
	DeleteTeam(ctx context.Context, name string) error

	// SetNotify replaces person's notification settings (None: none
	// kept), ENOTFOUND when a field is set and no human token is named
	// n.Person; Notify reads them (the zero value, with Person set, when
	// none); NotifyAll returns everyone's that has any, by person.
	SetNotify(ctx context.Context, n *PersonNotify) error
	Notify(ctx context.Context, person string) (*PersonNotify, error)
	NotifyAll(ctx context.Context) ([]*PersonNotify, error)
}
