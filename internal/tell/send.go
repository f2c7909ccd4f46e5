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
			sign(h, ch.Secret, d.Key, w.svc.Config().Now(), body) // standard.go
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
