package tell

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// Header names of webhook requests.
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderSignature is "sha256=" and the hex HMAC-SHA256 of the body, keyed
	// with the channel's secret.
	HeaderSignature = "Askd-Signature"
)

// TellBody is the JSON body a webhook channel receives.
type TellBody struct {
	Text string    `json:"text"` // what to tell the agent, as its next prompt
	Ask  *askd.Ask `json:"ask"`
}

// Sign returns the Askd-Signature header value of body under secret.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether signature is body's Askd-Signature under secret,
// comparing in constant time: what a receiver does.
func Verify(secret string, body []byte, signature string) bool {
	return hmac.Equal([]byte(Sign(secret, body)), []byte(signature))
}

// attempt sends cl once and returns by what, and nil or the failure.
func (w *Worker) attempt(ctx context.Context, cl *app.Claimed) (how string, err error) {
	d := cl.Delivery
	ch := d.Channel
	if d.Kind == askd.DeliveryNotify {
		return string(ch.Type), w.notify(ctx, cl)
	}
	switch ch.Type {
	case askd.ChannelWebhook:
		body, err := json.Marshal(TellBody{Text: cl.Text, Ask: cl.Ask})
		if err != nil {
			return "webhook", err
		}
		client := w.guarded
		if !w.svc.WebhookGuarded(ch.URL) {
			client = w.http // the operator's --tell default
		}
		return "webhook", w.post(ctx, client, ch.URL, body, func(h http.Header) {
			h.Set("Content-Type", "application/json")
			h.Set(HeaderIdempotencyKey, d.Key)
			h.Set(HeaderSignature, Sign(ch.Secret, body))
		})
	case askd.ChannelCommand:
		return "command", w.run(ctx, cl)
	}
	// Hook channels are never due; anything else is a channel this askd does
	// not know (written by a newer one).
	return string(ch.Type), &failure{msg: fmt.Sprintf("channel type %q cannot be sent by this askd", ch.Type), permanent: true}
}

// post POSTs body to url with client: 2xx is sent; 410 Gone (the session is
// gone) and a destination the guard refused are permanent failures; anything
// else is a failure to retry.
func (w *Worker) post(ctx context.Context, client *http.Client, url string, body []byte, header func(http.Header)) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return &failure{msg: err.Error(), permanent: true}
	}
	req.Header.Set("User-Agent", w.opts.UserAgent)
	header(req.Header)
	resp, err := client.Do(req)
	if err != nil {
		var refused *refusedError
		return &failure{msg: err.Error(), permanent: errors.As(err, &refused)}
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	msg := "HTTP " + resp.Status
	if resp.StatusCode == http.StatusGone {
		msg += " (the receiver says the session is gone)"
	}
	if s := oneLine(string(snippet)); s != "" {
		msg += ": " + s
	}
	return &failure{msg: msg, permanent: resp.StatusCode == http.StatusGone}
}

// run runs a command channel: the operator's template it names, its
// placeholders filled (app.Service.TellArgv), directly (no shell ever sees
// it); exit status 0 is sent. A channel that may not run is a permanent
// failure saying why.
func (w *Worker) run(ctx context.Context, cl *app.Claimed) error {
	d := cl.Delivery
	argv, err := w.svc.TellArgv(cl)
	if err != nil {
		return &failure{msg: askd.ErrorMessage(err), permanent: true}
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(),
		"ASKD_SESSION="+d.Session,
		"ASKD_ASK_ID="+strconv.FormatInt(d.AskID, 10),
		"ASKD_IDEMPOTENCY_KEY="+d.Key,
	)
	var out tail
	cmd.Stdout, cmd.Stderr = &out, &out
	// A child that keeps the output open (a daemon it started) must not hold
	// the attempt past the timeout.
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Run()
	if err == nil {
		return nil
	}
	msg := err.Error()
	if ctx.Err() != nil {
		msg = "timed out, killed"
	}
	if s := oneLine(out.String()); s != "" {
		msg += ": " + s
	}
	return &failure{msg: msg}
}

// tail keeps the last 2 KiB written to it.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 2048 {
		t.b = t.b[len(t.b)-2048:]
	}
	return len(p), nil
}

func (t *tail) String() string { return strings.ToValidUTF8(string(t.b), "") }

// oneLine squeezes s's whitespace for a log line or an error, at most 300
// characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 300 {
		s = string([]rune(s)[:299]) + "…"
	}
	return s
}

// notification is what notifiers are told of a new ask.
type notification struct {
	Event     string    `json:"event"` // "ask.created", or "ask.updated" for a new revision
	ID        int64     `json:"id"`
	Kind      askd.Kind `json:"kind"`
	Session   string    `json:"session"`
	Agent     string    `json:"agent"`
	Title     string    `json:"title"` // the title, or the first question
	Revision  int       `json:"revision"`
	Link      string    `json:"link"`
	CreatedAt time.Time `json:"created_at"`
}

// notify tells a person of a new ask through a notifier.
func (w *Worker) notify(ctx context.Context, cl *app.Claimed) error {
	d, a := cl.Delivery, cl.Ask
	n := notification{
		Event: "ask.created", ID: a.ID, Kind: a.Kind, Session: a.Session, Agent: a.Agent,
		Title: a.Summary(), Revision: a.Revision, Link: w.link(a.ID), CreatedAt: a.CreatedAt,
	}
	if a.Revision > 1 {
		n.Event = "ask.updated"
	}
	headline := fmt.Sprintf("askd: %s from %s", a.Kind, a.Session)
	switch d.Channel.Type {
	case askd.NotifyWebhook:
		body, err := json.Marshal(n)
		if err != nil {
			return err
		}
		return w.post(ctx, w.http, d.Channel.URL, body, func(h http.Header) {
			h.Set("Content-Type", "application/json")
			h.Set(HeaderIdempotencyKey, d.Key)
		})
	case askd.NotifySlack:
		// Agent text is text: Slack's control characters are escaped, so it
		// cannot make links or mentions.
		text := fmt.Sprintf("*%s*\n%s\n<%s|Open in the inbox>", slackEscape(headline), slackEscape(n.Title), n.Link)
		body, err := json.Marshal(map[string]string{"text": text})
		if err != nil {
			return err
		}
		return w.post(ctx, w.http, d.Channel.URL, body, func(h http.Header) { h.Set("Content-Type", "application/json") })
	case askd.NotifyNtfy:
		return w.post(ctx, w.http, d.Channel.URL, []byte(n.Title), func(h http.Header) {
			h.Set("Content-Type", "text/plain; charset=utf-8")
			// ntfy reads RFC 2047 encoded words in headers for non-ASCII text.
			h.Set("Title", mime.QEncoding.Encode("utf-8", headline))
			h.Set("Click", n.Link)
		})
	}
	return &failure{msg: fmt.Sprintf("notifier type %q cannot be sent by this askd", d.Channel.Type), permanent: true}
}

// link is the inbox's URL of ask id.
func (w *Worker) link(id int64) string {
	return strings.TrimRight(w.opts.PublicURL, "/") + "/?ask=" + strconv.FormatInt(id, 10)
}

func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
