package tell

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// Headers of Slack's signed requests.
const (
	HeaderSlackTimestamp = "X-Slack-Request-Timestamp"
	HeaderSlackSignature = "X-Slack-Signature"
)

// slackWindow is how far a request's timestamp may be from askd's clock, as
// Slack's own SDKs take it; a signature is remembered as long, so a request
// is taken at most once.
const slackWindow = 5 * time.Minute

// SlackSignature is the X-Slack-Signature of a request: "v0=" and the hex
// HMAC-SHA256, keyed with the Slack app's signing secret, of
// "v0:<timestamp>:<body>".
func SlackSignature(secret, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "v0:%s:", timestamp)
	m.Write(body)
	return "v0=" + hex.EncodeToString(m.Sum(nil))
}

// SlackOptions configure SlackInteractions.
type SlackOptions struct {
	// SigningSecret is the Slack app's (askd serve --slack-signing-secret).
	SigningSecret string
	// PublicURL is the inbox's URL, for the inbox button of updated messages.
	PublicURL string
	// ResponseURLPrefix is what a click's response_url must start with to
	// be posted to; default "https://hooks.slack.com/", where Slack's are.
	ResponseURLPrefix string
	// Client posts to response_urls; default one that reaches only public
	// addresses (the agents' webhook guard, newGuardedClient), bounded by
	// Slack's 3 seconds for an answer.
	Client *http.Client
	// Now is the clock timestamps are judged by; default the service's.
	Now    func() time.Time
	Logger *slog.Logger
}

// SlackInteractions serves a Slack app's interactivity Request URL, POST
// /slack/interactions: a click on an answer button of an askd message
// (askd-answer-N, its answer link's code as value) answers the ask in place,
// as the notify-as human "via Slack (user U123/name)", and updates the
// message to say who answered, through the click's response_url. The Slack
// user is not an askd human: whoever can click in the channel answers as
// the notify-as human.
//
// A request is taken only when it is Slack's: its X-Slack-Signature must be
// SlackSignature of its body under the signing secret (compared in constant
// time), its timestamp within 5 minutes of askd's clock (checked before the
// body is read), and its signature not seen before (a replay is refused).
// Every refusal is 401 and changes nothing; every request taken is answered
// 200, as Slack wants within 3 seconds.
type SlackInteractions struct {
	svc    *app.Service
	opts   SlackOptions
	client *http.Client
	log    *slog.Logger
	seen   replays
}

// NewSlackInteractions returns the handler over svc.
func NewSlackInteractions(svc *app.Service, opts SlackOptions) *SlackInteractions {
	if opts.ResponseURLPrefix == "" {
		opts.ResponseURLPrefix = "https://hooks.slack.com/"
	}
	if opts.Now == nil {
		opts.Now = svc.Config().Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h := &SlackInteractions{svc: svc, opts: opts, client: opts.Client, log: opts.Logger, seen: replays{until: map[string]time.Time{}}}
	if h.client == nil {
		h.client = newGuardedClient(askd.WebhookAllow{}, nil, 2500*time.Millisecond)
	}
	return h
}

// slackPayload is what askd reads of an interaction payload.
type slackPayload struct {
	Type string `json:"type"` // "block_actions" for a button
	User struct {
		ID       string `json:"id"`
		Username string `json:"username"`
		Name     string `json:"name"`
	} `json:"user"`
	Actions []struct {
		ActionID string `json:"action_id"`
		Value    string `json:"value"`
	} `json:"actions"`
	ResponseURL string `json:"response_url"`
}

// ServeHTTP implements http.Handler.
func (h *SlackInteractions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := h.opts.Now()
	ts, sig := r.Header.Get(HeaderSlackTimestamp), r.Header.Get(HeaderSlackSignature)
	sent, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sig == "" {
		h.refuse(w, r, "not a signed Slack request: "+HeaderSlackTimestamp+" and "+HeaderSlackSignature+" are required")
		return
	}
	at := time.Unix(sent, 0)
	if d := now.Sub(at); d > slackWindow || d < -slackWindow {
		h.refuse(w, r, "stale request: its timestamp is more than 5 minutes from this server's clock")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, askd.MaxBodyBytes))
	if err != nil {
		http.Error(w, "body: larger than 1 MiB or not received", http.StatusBadRequest)
		return
	}
	if !hmac.Equal([]byte(SlackSignature(h.opts.SigningSecret, ts, body)), []byte(sig)) {
		h.refuse(w, r, "wrong signature: not signed with this Slack app's signing secret")
		return
	}
	if !h.seen.first(sig, at.Add(slackWindow), now) {
		h.refuse(w, r, "replayed request: this signature was seen already")
		return
	}
	form, err := url.ParseQuery(string(body))
	var p slackPayload
	if err == nil {
		err = json.Unmarshal([]byte(form.Get("payload")), &p)
	}
	if err != nil {
		http.Error(w, "payload: not an interaction payload", http.StatusBadRequest)
		return
	}
	if reply, ok := h.click(r.Context(), &p); ok {
		h.respond(r.Context(), p.ResponseURL, reply)
	}
	w.WriteHeader(http.StatusOK)
}

// click takes an answer button's click: it answers by the link whose code
// the button carries and returns the reply, ok false for anything else
// (the inbox button, other interactions), which is only acknowledged.
func (h *SlackInteractions) click(ctx context.Context, p *slackPayload) (slackMessage, bool) {
	if p.Type != "block_actions" {
		return slackMessage{}, false
	}
	code := ""
	for _, a := range p.Actions {
		if strings.HasPrefix(a.ActionID, slackAnswerAction) && a.Value != "" {
			code = a.Value
			break
		}
	}
	if code == "" {
		return slackMessage{}, false
	}
	name := p.User.Username
	if name == "" {
		name = p.User.Name
	}
	v, err := h.svc.AnswerByLink(ctx, code, fmt.Sprintf("via Slack (user %s/%s)", p.User.ID, name))
	switch {
	case askd.ErrorCode(err) == askd.EFORBIDDEN:
		return slackEphemeral("askd did not take this answer: " + askd.ErrorMessage(err)), true
	case askd.ErrorCode(err) == askd.ECONFLICT:
		// The link's person approved this ask already, another way
		// (quorum): the click counts once, and says so.
		return slackEphemeral("askd did not count this again: " + askd.ErrorMessage(err)), true
	case err != nil:
		h.log.Error("slack: answer by link", "err", err)
		return slackEphemeral("askd could not take this answer (" + askd.ErrorMessage(err) + "): try again, or answer in the inbox."), true
	case v.State == app.LinkSettled:
		return slackSettled(v.Ask, v.Note, strings.TrimRight(h.opts.PublicURL, "/")+"/?ask="+strconv.FormatInt(v.Ask.ID, 10)), true
	}
	return slackEphemeral(v.Says()), true
}

// respond posts reply to a click's response_url, when it is Slack's. A
// failure is logged: the answer stands either way.
func (h *SlackInteractions) respond(ctx context.Context, responseURL string, reply slackMessage) {
	if !strings.HasPrefix(responseURL, h.opts.ResponseURLPrefix) {
		h.log.Warn("slack: response_url is not Slack's; the message is not updated", "prefix", h.opts.ResponseURLPrefix)
		return
	}
	body, err := json.Marshal(reply)
	if err != nil {
		return
	}
	// Slack waits 3 seconds for the acknowledgement this precedes.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2500*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, responseURL, strings.NewReader(string(body)))
	if err != nil {
		h.log.Warn("slack: update the message", "err", err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(req)
	if err != nil {
		h.log.Warn("slack: update the message", "err", err)
		return
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		h.log.Warn("slack: update the message", "status", resp.Status)
	}
}

// refuse answers 401 without reading the body, and closes the connection.
func (h *SlackInteractions) refuse(w http.ResponseWriter, r *http.Request, why string) {
	h.log.Warn("slack: request refused", "why", why, "client", r.RemoteAddr)
	w.Header().Set("Connection", "close")
	http.Error(w, why, http.StatusUnauthorized)
}

// replays remembers the signatures of requests taken, each until its
// timestamp leaves the window, after which the timestamp refuses it anyway.
type replays struct {
	mu    sync.Mutex
	until map[string]time.Time
}

// first records sig as seen until until and reports whether it is new at now.
func (r *replays) first(sig string, until, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if u, ok := r.until[sig]; ok && now.Before(u) {
		return false
	}
	if len(r.until) >= 1024 {
		for s, u := range r.until {
			if !now.Before(u) {
				delete(r.until, s)
			}
		}
	}
	r.until[sig] = until
	return true
}
