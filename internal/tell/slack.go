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
// text: Slack's control characters (&, <, >) are escaped, so it can make no
// link or mention.

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
	links, err := w.mint(ctx, a, 0)
	if err != nil {
		return err
	}
	// In place (the code as value) only when the message shows the whole
	// ask and every button reads differently; otherwise each button opens
	// its link's confirm page, which shows everything.
	inPlace := w.opts.SlackInteractive && whole && distinctButtons(links)
	buttons := make([]any, 0, len(links)+1)
	for i, l := range links {
		b := slackButton{Type: "button", Text: plain(l.Label), ActionID: slackAnswerAction + strconv.Itoa(i), Style: l.Style}
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
		Text: fmt.Sprintf("*%s*\n%s\n<%s|Open in the inbox>", slackEscape(headline(a)), slackEscape(a.Summary()), link),
		Blocks: []slackBlock{
			{Type: "section", Text: &slackText{Type: "mrkdwn", Text: "*" + slackEscape(headline(a)) + "*\n" + slackEscape(text)}},
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
		Text:            slackEscape(headline(a)) + ": " + slackEscape(said),
		ReplaceOriginal: true,
		Blocks: []slackBlock{
			{Type: "section", Text: &slackText{Type: "mrkdwn", Text: "*" + slackEscape(headline(a)) + "*\n" + slackEscape(text)}},
			{Type: "context", Elements: []any{slackText{Type: "mrkdwn", Text: slackEscape(said)}}},
			{Type: "actions", BlockID: slackBlockID(a), Elements: []any{
				slackButton{Type: "button", Text: plain("Open in the inbox"), ActionID: slackOpenAction, URL: link},
			}},
		},
	}
}

// slackEphemeral is a reply only the person who clicked sees.
func slackEphemeral(text string) slackMessage {
	return slackMessage{Text: slackEscape(text), ResponseType: "ephemeral"}
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
	seen := map[string]bool{}
	for _, l := range links {
		t := plain(l.Label).Text
		if seen[t] {
			return false
		}
		seen[t] = true
	}
	return true
}

func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
