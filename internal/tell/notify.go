package tell

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// Notifying people of new asks (askd serve --notify-webhook, --notify-slack,
// --notify-ntfy; docs/notifications.md). Every notification carries the
// ask's text and a link into the inbox. ntfy and Slack notifications also
// carry answer buttons, one per one-tap answer of the ask
// (askd.Ask.OneTapAnswers), each a signed answer link minted for this
// notification (app.Service.MintAnswerLinks) and stored before it leaves:
//
//   - ntfy: up to three http actions that POST the link (a fourth answer
//     means none at all: a person never sees only some of the choices);
//   - Slack: a button per answer that opens the link's confirm page, or,
//     with a Slack app's signing secret (Options.SlackInteractive), answers
//     in place through POST /slack/interactions (slack.go).
//
// A button that answers without a confirm page (ntfy's, Slack's in place) is
// offered only when the notification shows the ask whole (shownText): no
// one approves what the notification had to cut. Without Options.LinkBase no
// links are minted, as they would point where phones cannot go.

// notification is what webhook notifiers are told of a new ask.
type notification struct {
	Event     string    `json:"event"` // "ask.created"; "ask.updated" for a new revision; "ask.approved_in_part" when more approvals are needed
	ID        int64     `json:"id"`
	Kind      askd.Kind `json:"kind"`
	Session   string    `json:"session"`
	Agent     string    `json:"agent"`
	Title     string    `json:"title"`            // the title, or the first question; a form's message's first line
	Source    string    `json:"source,omitempty"` // the MCP server a form asks for, or an approval came through (a gate's, SPEC §14)
	Revision  int       `json:"revision"`
	Link      string    `json:"link"`
	CreatedAt time.Time `json:"created_at"`
	// An approval a policy covers: how many approvals it needs, and those
	// given so far (SPEC §11).
	ApprovalsNeeded int             `json:"approvals_needed,omitempty"`
	Approvals       []askd.Approval `json:"approvals,omitempty"`
}

// ntfyMaxActions is how many action buttons ntfy takes on one notification.
const ntfyMaxActions = 3

// ntfyMaxMessage is, in bytes, the longest body ntfy takes as a message (its
// default message-size-limit); a longer one it takes as an attachment, or
// refuses where attachments are off.
const ntfyMaxMessage = 4096

// maxShown bounds, in characters, the text a notification shows of an ask
// (ntfy's message, Slack's section, which takes 3,000).
const maxShown = 2000

// notify tells a person of a new ask through a notifier.
func (w *Worker) notify(ctx context.Context, cl *app.Claimed) error {
	d, a := cl.Delivery, cl.Ask
	switch d.Channel.Type {
	case askd.NotifyWebhook:
		n := notification{
			Event: "ask.created", ID: a.ID, Kind: a.Kind, Session: a.Session, Agent: a.Agent,
			Title: a.Summary(), Source: a.Source, Revision: a.Revision, Link: w.link(a.ID), CreatedAt: a.CreatedAt,
		}
		if a.Kind == askd.KindForm {
			n.Title, _ = firstLine(a.Title)
		}
		if a.Revision > 1 {
			n.Event = "ask.updated"
		}
		if app.IsApprovalNotify(d) {
			n.Event = "ask.approved_in_part"
		}
		if a.Pending() {
			n.ApprovalsNeeded, n.Approvals = a.ApprovalsNeeded, a.Approvals
		}
		body, err := json.Marshal(n)
		if err != nil {
			return err
		}
		return w.post(ctx, w.notifier(d.Channel), d.Channel.URL, body, func(h http.Header) {
			h.Set("Content-Type", "application/json")
			h.Set(HeaderIdempotencyKey, d.Key)
			if d.Channel.Secret != "" { // --notify-webhook-secret, a person's webhook_secret
				sign(h, d.Channel.Secret, d.Key, w.svc.Config().Now(), body) // standard.go
			}
		})
	case askd.NotifySlack:
		return w.notifySlack(ctx, d, a)
	case askd.NotifyNtfy:
		return w.notifyNtfy(ctx, d, a)
	case askd.NotifyPush:
		return w.notifyPush(ctx, a, d.Channel.As)
	case askd.NotifyEmail:
		return w.notifyEmail(ctx, d, a)
	}
	return &failure{msg: fmt.Sprintf("notifier type %q cannot be sent by this askd", d.Channel.Type), permanent: true}
}

// notifier is the client that sends a notification through ch: a person's
// own ntfy topic or webhook (ch.As set, PUT /api/me/notify) is held to the
// destination guard as an agent's webhook is (SPEC §10); the operator's
// --notify-* are not.
func (w *Worker) notifier(ch askd.Channel) *http.Client {
	if ch.As != "" {
		return w.guarded
	}
	return w.http
}

// notifyNtfy publishes a to an ntfy topic: the text as the message, the
// headline as Title, the inbox link as Click, Priority and Tags by kind, and
// the answer buttons as Actions. Title and Actions hold agent text and go
// through ntfyHeader. (ntfy's JSON publishing would not spare that: ntfy
// turns a JSON body's title and actions back into these headers and
// decodes them the same way.)
func (w *Worker) notifyNtfy(ctx context.Context, d *askd.Delivery, a *askd.Ask) error {
	text, whole := shownText(a)
	if len(text) > ntfyMaxMessage {
		text, whole = cutBytes(text, ntfyMaxMessage), false
	}
	var links []app.MintedLink
	if whole {
		var err error
		if links, err = w.mint(ctx, a, ntfyMaxActions, d.Channel.As); err != nil {
			return err
		}
	}
	actions, err := w.ntfyActions(links)
	if err != nil {
		return err
	}
	return w.post(ctx, w.notifier(d.Channel), d.Channel.URL, []byte(text), func(h http.Header) {
		h.Set("Content-Type", "text/plain; charset=utf-8")
		h.Set("Title", ntfyHeader(shownLine(headline(a))))
		h.Set("Click", w.link(a.ID))
		h.Set("Priority", strconv.Itoa(ntfyPriority(a)))
		h.Set("Tags", ntfyTags(a))
		if actions != "" {
			h.Set("Actions", ntfyHeader(actions))
		}
	})
}

// ntfyAction is one action of ntfy's JSON form of the Actions header: an
// http action that POSTs an answer link what its POST takes, and clears
// the notification.
type ntfyAction struct {
	Action  string            `json:"action"` // "http"
	Label   string            `json:"label"`
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	Clear   bool              `json:"clear"`
}

// ntfyActions is ntfy's Actions header for links, in its JSON form (a
// label is then any text, with no quoting rules of the simple form to get
// right), before ntfyHeader; "" for no links, and when the labels would not
// read as distinct buttons (none is better than two alike; Click still
// opens the card).
func (w *Worker) ntfyActions(links []app.MintedLink) (string, error) {
	labels := make([]string, len(links))
	for i, l := range links {
		labels[i] = buttonLabel(l.Label)
	}
	if len(links) == 0 || !distinct(labels) {
		return "", nil
	}
	actions := make([]ntfyAction, len(links))
	for i, l := range links {
		actions[i] = ntfyAction{Action: "http", Label: labels[i], URL: w.answerURL(l.Code), Method: http.MethodPost,
			Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, Body: confirmBody, Clear: true}
	}
	b, err := json.Marshal(actions)
	return string(b), err
}

// distinct reports whether labels are all non-empty and all different.
func distinct(labels []string) bool {
	seen := map[string]bool{}
	for _, l := range labels {
		if l == "" || seen[l] {
			return false
		}
		seen[l] = true
	}
	return true
}

// confirmBody is the form body an answer link's POST takes (httpapi).
const confirmBody = "confirm=1"

// ntfyPriority is how loudly ntfy announces a: a permission prompt is urgent
// (5: a tool call waits on it, briefly), blocking questions, approvals and
// forms (an MCP server waits) high (4), attention asks default (3), a ready ask low (2).
func ntfyPriority(a *askd.Ask) int {
	switch {
	case a.Kind == askd.KindApproval && a.ToolName != "":
		return 5
	case a.Kind == askd.KindApproval, a.Kind == askd.KindQuestion, a.Kind == askd.KindForm:
		return 4
	case a.Kind == askd.KindReady:
		return 2
	}
	return 3
}

// ntfyTags are an emoji (ntfy shows a tag naming one as the emoji) and the
// kind.
func ntfyTags(a *askd.Ask) string {
	emoji := map[askd.Kind]string{
		askd.KindQuestion: "question", askd.KindDecision: "thinking", askd.KindAction: "hammer_and_wrench",
		askd.KindReady: "white_check_mark", askd.KindBlocked: "construction", askd.KindApproval: "raising_hand",
		askd.KindForm: "clipboard",
	}[a.Kind]
	if a.Kind == askd.KindApproval && a.ToolName != "" {
		emoji = "lock"
	}
	if emoji == "" {
		return string(a.Kind)
	}
	return emoji + "," + string(a.Kind)
}

// mint makes the answer links of a notification of a, at most max (0: no
// limit; more answers than that make none), answering as the person as (a
// person's own channel, SPEC §10), else as the notify-as token. None
// without a LinkBase, or for a viewer. When that token or the ask is gone,
// the notification goes without buttons; other failures fail the attempt,
// which is retried (with new links: those of a failed attempt are never
// shown, and expire).
func (w *Worker) mint(ctx context.Context, a *askd.Ask, max int, as string) ([]app.MintedLink, error) {
	if w.opts.LinkBase == "" {
		return nil, nil
	}
	var links []app.MintedLink
	var err error
	if as != "" {
		links, err = w.svc.MintAnswerLinksFor(ctx, as, a.ID, a.Revision, max)
	} else {
		links, err = w.svc.MintAnswerLinks(ctx, a.ID, a.Revision, max)
	}
	if askd.ErrorCode(err) == askd.ENOTFOUND {
		w.log.Warn("notify: sent without answer buttons", "ask", a.ID, "err", err)
		return nil, nil
	}
	return links, err
}

// headline is a notification's first line: "askd: decision from s1". An
// approval an MCP gate asks (SPEC §14) names the server it came through
// (askd.Ask.Through): "askd: approval from s1 through filesystem", the
// server once when the session is named after it, as a gate's session is
// unless ASKD_SESSION names another: "askd: approval through filesystem".
func headline(a *askd.Ask) string {
	switch through := a.Through(); {
	case through == "":
		return fmt.Sprintf("askd: %s from %s", a.Kind, a.Session)
	case a.Session == a.Source:
		return fmt.Sprintf("askd: %s %s", a.Kind, through)
	default:
		return fmt.Sprintf("askd: %s from %s %s", a.Kind, a.Session, through)
	}
}

// shownText is what a notification shows of a: its title or question, the
// options (with descriptions, the recommended one marked), details, and an
// approval's payload (a form's: formText), as shown (agenttext.go); at most
// maxShown characters; then, for an approval a policy covers, its count so
// far (app.QuorumText), which no cut leaves out. whole is false when it
// had to be cut.
func shownText(a *askd.Ask) (text string, whole bool) {
	return shownTextMax(a, maxShown)
}

// shownTextMax is shownText cut at max characters rather than maxShown.
func shownTextMax(a *askd.Ask, max int) (text string, whole bool) {
	raw, whole := askText(a), true
	if a.Kind == askd.KindForm {
		raw, whole = formText(a)
	}
	text = shown(raw)
	if utf8.RuneCountInString(text) > max {
		text, whole = string([]rune(text)[:max-1])+"…", false
	}
	return withCount(text, a), whole
}

// withCount is text with covered approval a's count so far (askd's words,
// with people's names) on a line of its own.
func withCount(text string, a *askd.Ask) string {
	if q := app.QuorumText(a); q != "" {
		return text + "\n\n" + q
	}
	return text
}

// askText is what a notification shows of a (not a form), before shown().
func askText(a *askd.Ask) string {
	var b strings.Builder
	b.WriteString(a.Summary())
	options := a.Options
	if a.Kind == askd.KindQuestion && len(a.Questions) > 0 {
		options = a.Questions[0].Options
	}
	for _, o := range options {
		b.WriteString("\n• " + o.Label)
		if o.Label == a.Recommended {
			b.WriteString(" (recommended)")
		}
		if o.Description != "" {
			b.WriteString(": " + o.Description)
		}
	}
	for _, q := range a.Questions[min(1, len(a.Questions)):] {
		b.WriteString("\n\n" + q.Question)
	}
	if a.Details != "" {
		b.WriteString("\n\n" + a.Details)
	}
	// What the people approving approve: an edit's payload once someone
	// edited it (quorum.go), which the buttons approve.
	if p := a.Approving(); a.Kind == askd.KindApproval && len(p) > 0 {
		b.WriteString("\n\n" + string(p))
	}
	return b.String()
}

// cutBytes cuts text to at most max bytes, between characters, ending it
// with "…".
func cutBytes(text string, max int) string {
	n := max - len("…")
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n] + "…"
}

// link is the inbox's URL of ask id.
func (w *Worker) link(id int64) string {
	return strings.TrimRight(w.opts.PublicURL, "/") + "/?ask=" + strconv.FormatInt(id, 10)
}

// answerURL is the URL of the answer link with the code.
func (w *Worker) answerURL(code string) string {
	return strings.TrimRight(w.opts.LinkBase, "/") + "/a/" + code
}
