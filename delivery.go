package askd

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ChannelType is how a session's agent is told of settled asks (SPEC §5).
type ChannelType string

const (
	// ChannelHook (the default): the text waits for the session's Stop hook,
	// check_ask or `askd check`, which mark the ask told.
	ChannelHook ChannelType = "hook"
	// ChannelWebhook: POST to a URL, with an Idempotency-Key and an HMAC-SHA256
	// signature over the body.
	ChannelWebhook ChannelType = "webhook"
	// ChannelCommand: run one of the operator's command templates (askd
	// serve --tell-command), chosen by name, without a shell.
	ChannelCommand ChannelType = "command"
	// ChannelBridge is never set on a session: it is the channel of a tell
	// delivery written while a channel bridge (askd mcp --channel) was
	// attached to the session, which that bridge pushes into the running
	// Claude Code session. Like a hook channel's, no worker sends it, and
	// the Stop hook, check_ask or askd check tell it when no bridge does.
	ChannelBridge ChannelType = "bridge"
)

// Notifier types: how a person hears of a new ask. They are stored in a
// Channel's Type on deliveries of kind DeliveryNotify.
const (
	NotifyWebhook ChannelType = "webhook" // generic: POST JSON
	NotifySlack   ChannelType = "slack"   // Slack incoming webhook: POST {"text": ...}
	NotifyNtfy    ChannelType = "ntfy"    // ntfy topic URL: POST plain text, Title and Click headers
	NotifyEmail   ChannelType = "email"   // an email to Channel.Email through the server's SMTP server (SPEC §16)
)

// Placeholders a command template's argv may hold, each replaced within every
// argument on its own: the session's name, the told text, the ask's id.
const (
	PlaceholderSession = "{session}"
	PlaceholderPrompt  = "{prompt}"
	PlaceholderID      = "{id}"
)

// Limits of channels.
const (
	MaxArgv         = 32       // arguments of a command template, the program included
	MaxArgBytes     = 4 << 10  // each argument
	MaxTemplateName = 64       // characters of a command template's name
	MaxURLBytes     = 2048     // webhook and notifier URLs
	MaxSecretBytes  = 256      // webhook secrets
	MaxErrorBytes   = 1 << 10  // a delivery's last error, as kept
	secretShown     = "******" // what a secret reads as once stored
)

// Channel is where and how something is sent: a session's delivery channel
// (hook, webhook or command), or, on a notification's delivery, a notifier
// (webhook, slack or ntfy, with URL).
type Channel struct {
	Type   ChannelType `json:"type"`
	URL    string      `json:"url,omitempty"`    // webhook, notifiers
	Secret string      `json:"secret,omitempty"` // webhook: the HMAC-SHA256 key
	// Name is a command channel's operator template (askd serve
	// --tell-command NAME=ARGV): agents choose a program only by its name.
	Name string `json:"name,omitempty"`
	// Argv is what command channels held before operator templates: a
	// program chosen by whoever held an agent token. It is kept only so that
	// such channels, still stored in older databases, can be recognised and
	// refused: Validate never accepts it and nothing runs it.
	Argv []string `json:"argv,omitempty"`
	// Email is an email notifier's address, one mailbox (CheckMailbox): a
	// person's own, or the server's fallback (askd serve --notify-email-to).
	Email string `json:"email,omitempty"`
	// As is the person a notifier's notification is for (SPEC §10: their own
	// ntfy topic, webhook or Web Push subscriptions): its answer buttons
	// answer as them, and a push goes to their subscriptions only. "" for
	// the server-wide notifiers (askd serve --notify-*).
	As string `json:"as,omitempty"`
}

// Redacted returns a copy of c fit to show: the secret replaced.
func (c Channel) Redacted() Channel {
	if c.Secret != "" {
		c.Secret = secretShown
	}
	c.Argv = nil // never shown: it is refused, and may hold what an agent meant to run
	return c
}

// Validate checks c as a session's delivery channel. Errors are EINVALID and
// name the field: url must be an http or https URL; a command channel names
// an operator template (whether the server defines it is the app's to
// check) and never carries argv.
func (c *Channel) Validate() error {
	var p problems
	switch c.Type {
	case ChannelHook:
		p.none("url", c.URL != "", c.Type)
		p.none("secret", c.Secret != "", c.Type)
		p.none("name", c.Name != "", c.Type)
	case ChannelWebhook:
		p.httpURL("url", c.URL)
		switch {
		case c.Secret == "":
			p.add("secret", "required with type webhook: the key of the Askd-Signature HMAC")
		case len(c.Secret) > MaxSecretBytes:
			p.size("secret", len(c.Secret), MaxSecretBytes)
		}
		p.none("name", c.Name != "", c.Type)
	case ChannelCommand:
		if c.Name == "" {
			p.add("name", "required with type command: the name of one of the operator's command templates (askd serve --tell-command NAME=ARGV)")
		} else {
			p.templateName("name", c.Name)
		}
		p.none("url", c.URL != "", c.Type)
		p.none("secret", c.Secret != "", c.Type)
	case "":
		p.add("type", "required: hook, webhook or command")
	default:
		p.add("type", "%q is not hook, webhook or command", c.Type)
	}
	if c.Argv != nil {
		p.add("argv", "not accepted: programs come only from the operator's command templates (askd serve --tell-command NAME=ARGV); choose one with {\"type\": \"command\", \"name\": NAME}")
	}
	return p.err()
}

// ValidateTemplate checks an operator's command template (askd serve
// --tell-command NAME=ARGV): a name of letters, digits, '.', '_' and '-'
// not starting with '-'; 1 to 32 arguments of at most 4 KiB, without NUL;
// the first the program, which no placeholder may fill.
func ValidateTemplate(name string, argv []string) error {
	var p problems
	p.templateName("name", name)
	p.count("argv", len(argv), 1, MaxArgv)
	for i, arg := range argv {
		path := fmt.Sprintf("argv[%d]", i)
		switch {
		case i == 0 && strings.TrimSpace(arg) == "":
			p.add(path, "required: the program to run")
		case i == 0 && hasPlaceholder(arg):
			p.add(path, "the program may not hold a placeholder: no agent value chooses what runs")
		case len(arg) > MaxArgBytes:
			p.size(path, len(arg), MaxArgBytes)
		case strings.ContainsRune(arg, 0):
			p.add(path, "may not contain the NUL character")
		}
	}
	return p.err()
}

// templateName checks a command template's name: 1 to 64 of A-Z a-z 0-9 . _ -,
// the first a letter or digit.
func (p *problems) templateName(path, name string) {
	switch {
	case name == "" || len(name) > MaxTemplateName:
		p.add(path, "1 to %d characters, not %d", MaxTemplateName, len(name))
		return
	case !isAlnum(name[0]):
		p.add(path, "must start with a letter or digit")
		return
	}
	for i := 0; i < len(name); i++ {
		if b := name[i]; !isAlnum(b) && b != '.' && b != '_' && b != '-' {
			p.add(path, "only letters, digits, '.', '_' and '-'")
			return
		}
	}
}

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

func hasPlaceholder(s string) bool {
	return strings.Contains(s, PlaceholderSession) || strings.Contains(s, PlaceholderPrompt) || strings.Contains(s, PlaceholderID)
}

// ExpandTemplate returns template's argv with {session}, {prompt} and {id}
// replaced in each argument: every argument stays one argument, whatever the
// values hold, and no shell ever sees them. No value may become an option
// of the program: an argument that starts with "-" only because a value put
// the "-" there is refused (EINVALID naming the argument and the
// placeholder), unless an earlier argument is "--", after which programs
// read operands, not options.
func ExpandTemplate(template []string, session, prompt string, id int64) ([]string, error) {
	r := strings.NewReplacer(PlaceholderSession, session, PlaceholderPrompt, prompt, PlaceholderID, strconv.FormatInt(id, 10))
	out := make([]string, len(template))
	operands := false // after "--"
	for i, arg := range template {
		out[i] = r.Replace(arg)
		// A template's own text cannot start its argument with "-" here, so
		// a placeholder's value did.
		if !operands && strings.HasPrefix(out[i], "-") && !strings.HasPrefix(arg, "-") {
			return nil, Errorf(EINVALID, "argv[%d] (%s): %q starts with \"-\" and would reach the program as an option, so it was not run (a template may put \"--\" before it, for a program that reads operands after \"--\")", i, clipValue(arg), clipValue(out[i]))
		}
		if arg == "--" {
			operands = true
		}
	}
	return out, nil
}

// clipValue shortens a value quoted in an error to 40 bytes.
func clipValue(s string) string {
	if len(s) <= 40 {
		return s
	}
	return strings.ToValidUTF8(s[:40], "") + "…"
}

// ValidateNotifier checks c as a notifier: type webhook, slack or ntfy, and
// an http or https url.
func (c *Channel) ValidateNotifier() error {
	var p problems
	switch c.Type {
	case NotifyWebhook, NotifySlack, NotifyNtfy:
	default:
		p.add("type", "%q is not webhook, slack or ntfy", c.Type)
	}
	p.httpURL("url", c.URL)
	return p.err()
}

// none adds a problem when a field is set that type t does not take.
func (p *problems) none(path string, set bool, t ChannelType) {
	if set {
		p.add(path, "not allowed with type %s", t)
	}
}

// httpURL checks that s is an absolute http or https URL with a host.
func (p *problems) httpURL(path, s string) {
	if s == "" {
		p.add(path, "required: an http or https URL")
		return
	}
	if len(s) > MaxURLBytes {
		p.size(path, len(s), MaxURLBytes)
		return
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		p.add(path, "not a URL: %s", strings.TrimPrefix(err.Error(), "parse "))
	case u.Scheme != "http" && u.Scheme != "https":
		p.add(path, "must be an http or https URL, not %q", u.Scheme)
	case u.Host == "":
		p.add(path, "has no host")
	}
}

// DeliveryKind is what a delivery carries.
type DeliveryKind string

const (
	DeliveryTell   DeliveryKind = "tell"   // a settled ask's outcome, to the agent
	DeliveryNotify DeliveryKind = "notify" // a new ask, to people
)

// DeliveryStatus is where a delivery is: pending until sent, or failed for
// good.
type DeliveryStatus string

const (
	DeliveryPending DeliveryStatus = "pending"
	DeliverySent    DeliveryStatus = "sent"
	DeliveryFailed  DeliveryStatus = "failed"
)

// Delivery is one message in the outbox: written in the transaction that
// made it due, sent by a worker that claims it with a lease, retried with
// backoff until sent or failed.
type Delivery struct {
	ID      int64        `json:"id"`
	Kind    DeliveryKind `json:"kind"`
	Key     string       `json:"key"` // unique; the Idempotency-Key of webhooks
	AskID   int64        `json:"ask_id"`
	Session string       `json:"session"`
	// Channel is a snapshot of where it goes, taken when it was written: the
	// session's channel (tell), or the notifier (notify).
	Channel  Channel        `json:"channel"`
	Status   DeliveryStatus `json:"status"`
	Attempts int            `json:"attempts"` // claims so far
	// NextAt is when a worker may next claim it; nil for a hook channel's
	// tells, which no worker sends (the agent fetches them).
	NextAt *time.Time `json:"next_at,omitempty"`
	// ClaimedUntil is the lease of the worker sending it; past it, another
	// worker may claim it again (its sender died).
	ClaimedUntil *time.Time `json:"claimed_until,omitempty"`
	LastError    string     `json:"last_error,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
}

// StableTime is the format of times in delivery keys: RFC 3339 in UTC, to
// the microsecond (what both stores keep), always with six digits.
const StableTime = "2006-01-02T15:04:05.000000Z07:00"

// TellKey is the idempotency key of the delivery telling a settled ask's
// outcome: "ask:<id>@<settled_at>". It is the same however often it is
// computed, and different for a later settlement of the same id.
func TellKey(a *Ask) string {
	var at time.Time
	if a.SettledAt != nil {
		at = *a.SettledAt
	}
	return fmt.Sprintf("ask:%d@%s", a.ID, at.UTC().Truncate(time.Microsecond).Format(StableTime))
}

// NotifyKey is the key of the delivery of a new ask (or a new revision of an
// attention ask) to notifier number i.
func NotifyKey(a *Ask, i int) string {
	return fmt.Sprintf("notify:%d.%d#%d", a.ID, a.Revision, i)
}

// PersonNotifyKey is the idempotency key of the delivery notifying person,
// through their channel of type t, of a's revision (SPEC §10):
// "notify:<id>.<revision>@<person>/<type>".
func PersonNotifyKey(a *Ask, person string, t ChannelType) string {
	return fmt.Sprintf("notify:%d.%d@%s/%s", a.ID, a.Revision, person, t)
}

// ChannelTx is what a transaction may do with sessions' delivery channels
// and the channel bridges attached to them.
type ChannelTx interface {
	// SetChannel sets the delivery channel of agent's session session,
	// replacing any, and records the session (AddSession) if it is new.
	SetChannel(ctx context.Context, agent, session string, c *Channel) error
	// Channel returns the delivery channel of agent's session session;
	// ENOTFOUND when none was set.
	Channel(ctx context.Context, agent, session string) (*Channel, error)
	// AttachBridge records that a channel bridge (askd mcp --channel) is
	// attached to agent's session session until until, the end of its
	// lease; a later lease already recorded (another bridge's) is kept.
	// ENOTFOUND when the session is not recorded (AddSession first).
	AttachBridge(ctx context.Context, agent, session string, until time.Time) error
	// DetachBridge ends the bridge lease until of agent's session session,
	// unless another bridge's lease has replaced it since; a no-op when the
	// session is not recorded.
	DetachBridge(ctx context.Context, agent, session string, until time.Time) error
	// BridgeUntil returns when the last bridge lease of agent's session
	// session ends; zero when none is recorded (or the session is not).
	BridgeUntil(ctx context.Context, agent, session string) (time.Time, error)
	// TellChannel is Channel and BridgeUntil in one read, for the settlement
	// that writes a tell delivery: the session's channel (nil when none was
	// set, or the session is not recorded) and the end of its bridge lease
	// (zero when none).
	TellChannel(ctx context.Context, agent, session string) (*Channel, time.Time, error)
}

// DeliveryTx is what a transaction may do with the outbox's deliveries.
type DeliveryTx interface {
	// CreateDelivery adds d to the outbox and sets d.ID. A delivery with d.Key
	// already there is ECONFLICT, and leaves the transaction usable.
	CreateDelivery(ctx context.Context, d *Delivery) error
	// AddDelivery is CreateDelivery for a caller that needs neither d.ID nor
	// to know whether d.Key was taken: a delivery with d.Key already there is
	// left as it is, and no error. Like AddEvent's, its insert may be held
	// back: d.ID may stay unset, and an error of the insert (ENOTFOUND for a
	// missing ask) may come from the transaction's next statement or from
	// Update.
	AddDelivery(ctx context.Context, d *Delivery) error
	// Delivery returns the delivery with the key; ENOTFOUND when there is none.
	Delivery(ctx context.Context, key string) (*Delivery, error)
	// ClaimDeliveries leases up to limit pending deliveries due at now (NextAt
	// not after now, no lease running), oldest due first: each gets
	// ClaimedUntil now+lease and one more attempt. Concurrent claimers, in
	// this process or others, never get the same delivery while its lease
	// runs.
	ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*Delivery, error)
	// NextDeliveryAt returns when the next pending delivery becomes claimable
	// (its NextAt, or the end of its lease if later); zero when none will.
	NextDeliveryAt(ctx context.Context) (time.Time, error)
	// UpdateDelivery replaces the stored delivery d.ID's status, attempts,
	// NextAt, ClaimedUntil, LastError and UpdatedAt with d's.
	UpdateDelivery(ctx context.Context, d *Delivery) error
	// ClaimSessionTells leases, for a channel bridge, up to limit pending
	// tell deliveries of agent's session session that no worker sends (NextAt
	// nil: hook and bridge channels) and whose ask is settled, to be told and
	// not told yet, with no lease running at now: each gets ClaimedUntil
	// now+lease and one more attempt. Oldest first. Concurrent claimers never
	// get the same delivery while its lease runs.
	ClaimSessionTells(ctx context.Context, agent, session string, now time.Time, lease time.Duration, limit int) ([]*Delivery, error)
}
