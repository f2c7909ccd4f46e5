package tell

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// Slack messages (Block Kit): a section with the ask's text, and an actions
// block with a button per answer link and one into the inbox. Agent text is
// text (slackShown): Slack's control characters (&, <, >) are escaped, so it
// can make no link or mention; mrkdwn text objects are verbatim, so Slack
// links no URL, channel or name in them; and what reads as a URL is
// defanged anyway, for the clients that show the message's fallback text.

type slackMessage struct {
	Text            string       `json:"text"` // what notifications and old clients show
	Blocks          []slackBlock `json:"blocks,omitempty"`
	ReplaceOriginal bool         `json:"replace_original,omitempty"` // response_url: update the message
	ResponseType    string       `json:"response_type,omitempty"`    // response_url: "ephemeral", to the clicker only
}

type slackBlock struct {
	Type     string     `json:"type"`
	BlockID  string     `json:"block_id,omitempty"`
	Text     *slackText `json:"text,omitempty"`
	Elements []any      `json:"elements,omitempty"` // slackButton in actions, slackText in context
}

type slackText struct {
	Type string `json:"type"` // "mrkdwn" or "plain_text"
	Text string `json:"text"`
	// Verbatim (mrkdwn only) stops Slack from turning URLs, channel and
	// user names in the text into links and mentions.
	Verbatim bool `json:"verbatim,omitempty"`
}

type slackButton struct {
	Type     string    `json:"type"` // "button"
	Text     slackText `json:"text"`
	ActionID string    `json:"action_id"`
	URL      string    `json:"url,omitempty"`   // opens this
	Value    string    `json:"value,omitempty"` // sent to the interactivity endpoint
	Style    string    `json:"style,omitempty"`
}

// Slack's limits that a message of askd's could reach.
const slackButtonChars = 75

// Action ids of askd's buttons: an answer's (slackAnswerAction and its
// index) carries its link's code as value; the inbox button only opens.
const (
	slackAnswerAction = "askd-answer-"
	slackOpenAction   = "askd-open"
)

// notifySlack posts a to a Slack incoming webhook.
func (w *Worker) notifySlack(ctx context.Context, d *askd.Delivery, a *askd.Ask) error {
	text, whole := shownText(a)
	links, err := w.mint(ctx, a, 0, d.Channel.As)
	if err != nil {
		return err
	}
	// In place (the code as value) only when the message shows the whole
	// ask and every button reads differently; otherwise each button opens
	// its link's confirm page, which shows everything.
	inPlace := w.opts.SlackInteractive && whole && distinctButtons(links)
	if !labelled(links) {
		links = nil // a button must say something; the inbox button stays
	}
	buttons := make([]any, 0, len(links)+1)
	for i, l := range links {
		b := slackButton{Type: "button", Text: plain(buttonLabel(l.Label)), ActionID: slackAnswerAction + strconv.Itoa(i), Style: l.Style}
		if inPlace {
			b.Value = l.Code
		} else {
			b.URL = w.answerURL(l.Code)
		}
		buttons = append(buttons, b)
	}
	link := w.link(a.ID)
	buttons = append(buttons, slackButton{Type: "button", Text: plain("Open in the inbox"), ActionID: slackOpenAction, URL: link})
	msg := slackMessage{
		Text: fmt.Sprintf("*%s*\n%s\n<%s|Open in the inbox>", slackShown(headline(a)), slackShown(subject(a)), link),
		Blocks: []slackBlock{
			{Type: "section", Text: mrkdwn("*" + slackShown(headline(a)) + "*\n" + slackEscape(text))},
			{Type: "actions", BlockID: slackBlockID(a), Elements: buttons},
		},
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	return w.post(ctx, w.http, d.Channel.URL, body, func(h http.Header) { h.Set("Content-Type", "application/json") })
}

// slackSettled is a's message once settled (what a click in place turns the
// notification into): its text, who settled it and how, and the inbox link.
func slackSettled(a *askd.Ask, note, link string) slackMessage {
	text, _ := shownText(a)
	said := app.SettledText(a, note)
	return slackMessage{
		Text:            slackShown(headline(a)) + ": " + slackShown(said),
		ReplaceOriginal: true,
		Blocks: []slackBlock{
			{Type: "section", Text: mrkdwn("*" + slackShown(headline(a)) + "*\n" + slackEscape(text))},
			{Type: "context", Elements: []any{*mrkdwn(slackShown(said))}},
			{Type: "actions", BlockID: slackBlockID(a), Elements: []any{
				slackButton{Type: "button", Text: plain("Open in the inbox"), ActionID: slackOpenAction, URL: link},
			}},
		},
	}
}

// slackEphemeral is a reply only the person who clicked sees.
func slackEphemeral(text string) slackMessage {
	return slackMessage{Text: slackShown(text), ResponseType: "ephemeral"}
}

func slackBlockID(a *askd.Ask) string { return fmt.Sprintf("askd-%d-%d", a.ID, a.Revision) }

// plain is a button's text: Slack takes at most 75 characters.
func plain(s string) slackText {
	if utf8.RuneCountInString(s) > slackButtonChars {
		s = string([]rune(s)[:slackButtonChars-1]) + "…"
	}
	return slackText{Type: "plain_text", Text: s}
}

// distinctButtons reports whether the links' buttons all read differently
// once cut to Slack's length.
func distinctButtons(links []app.MintedLink) bool {
	labels := make([]string, len(links))
	for i, l := range links {
		labels[i] = plain(buttonLabel(l.Label)).Text
	}
	return distinct(labels)
}

// labelled reports whether every link's button has something to say.
func labelled(links []app.MintedLink) bool {
	for _, l := range links {
		if buttonLabel(l.Label) == "" {
			return false
		}
	}
	return true
}

// mrkdwn is a verbatim mrkdwn text object holding text, already escaped.
func mrkdwn(text string) *slackText { return &slackText{Type: "mrkdwn", Text: text, Verbatim: true} }

// slackShown is Slack's encoder of agent text: shown (agenttext.go), then
// escaped for mrkdwn.
func slackShown(s string) string { return slackEscape(shown(s)) }

// slackEscape escapes Slack's control characters: what is left makes no
// link, mention or command (<url|text>, <!here>, <@U123>).
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
