package tell

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// Web Push (askd serve --notify-push; docs/notifications.md). One notify
// delivery per ask sends it to every push subscription of every person
// (app.Service.PushSubscriptions), through the client agents' webhooks use:
// a subscription's endpoint is a browser's choice, not the operator's, so
// it reaches no address of the server's own networks unless --webhook-allow
// allows it. Each request is signed with the server's VAPID key (RFC 8292)
// and carries the payload encrypted for the browser (RFC 8291, aes128gcm),
// both by webpush-go. A push service answering 404 or 410 says the
// subscription is gone: it is deleted. Any other failure fails the attempt,
// which the outbox retries (docs/telling.md) — to every subscription again:
// the notification's tag ("askd-<id>") makes a browser replace the one it
// showed rather than show two, and Topic makes a push service replace one it
// still holds.

// PushMessage is the JSON a push notification carries, which the service
// worker (internal/web/static/sw.js) shows.
type PushMessage struct {
	Title string `json:"title"` // "askd: decision from release"
	Body  string `json:"body"`  // the ask's text, short
	URL   string `json:"url"`   // the ask in the inbox: clicking the notification opens it
	Tag   string `json:"tag"`   // "askd-<id>": a newer notification of the ask replaces it
	AskID int64  `json:"ask"`
	// Actions are the answer buttons, each a signed answer link the service
	// worker POSTs confirm=1 to; none when the ask has more one-tap answers
	// than pushMaxActions, or its text had to be cut.
	Actions []PushAction `json:"actions,omitempty"`
}

// PushAction is one answer button of a push notification.
type PushAction struct {
	Action string `json:"action"` // the notification action's id: "answer-0", "answer-1"
	Title  string `json:"title"`  // the button's label
	Link   string `json:"link"`   // <public-url>/a/<code>
}

const (
	// pushMaxActions is how many actions browsers show on a notification
	// (Chromium: two).
	pushMaxActions = 2
	// pushMaxShown bounds, in characters, the body of a push notification:
	// a push service takes about 4 KB of payload, and a phone shows a few
	// lines.
	pushMaxShown = 600
	// pushTTL is how long a push service keeps a notification for a
	// browser that is offline: as long as its answer links work at most.
	pushTTL = app.AnswerLinkTTL
)

// notifyPush pushes a to every live push subscription of the person as
// ("": everyone's).
func (w *Worker) notifyPush(ctx context.Context, a *askd.Ask, as string) error {
	subs, err := w.svc.PushSubscriptions(ctx)
	if err != nil {
		return err
	}
	if as != "" {
		subs = slices.DeleteFunc(subs, func(s *askd.PushSubscription) bool { return s.Human != as })
	}
	if len(subs) == 0 {
		return nil
	}
	keys, err := w.svc.VAPIDKeys(ctx)
	if err != nil {
		return err
	}
	text, whole := shownTextMax(a, pushMaxShown)
	msgs := map[string][]byte{} // by person: their links answer as them
	var failed []string
	for _, sub := range subs {
		msg, ok := msgs[sub.Human]
		if !ok {
			if msg, err = w.pushMessage(ctx, a, text, whole, sub.Human); err != nil {
				return err
			}
			msgs[sub.Human] = msg
		}
		if err := w.push(ctx, keys, sub, msg, a); err != nil {
			failed = append(failed, err.Error())
		}
	}
	if len(failed) > 0 {
		return &failure{msg: fmt.Sprintf("push: %d of %d failed: %s", len(failed), len(subs), strings.Join(failed, "; "))}
	}
	return nil
}

// pushMessage is the payload of a's notification for human's browsers.
func (w *Worker) pushMessage(ctx context.Context, a *askd.Ask, text string, whole bool, human string) ([]byte, error) {
	m := PushMessage{Title: shownLine(headline(a)), Body: text, URL: w.link(a.ID), Tag: "askd-" + strconv.FormatInt(a.ID, 10), AskID: a.ID}
	if whole && w.opts.LinkBase != "" {
		links, err := w.svc.MintAnswerLinksFor(ctx, human, a.ID, a.Revision, pushMaxActions)
		if askd.ErrorCode(err) == askd.ENOTFOUND {
			w.log.Warn("push: sent without answer buttons", "ask", a.ID, "human", human, "err", err)
			err, links = nil, nil
		}
		if err != nil {
			return nil, err
		}
		labels := make([]string, len(links))
		for i, l := range links {
			labels[i] = buttonLabel(l.Label)
		}
		if !distinct(labels) {
			links = nil // two actions alike, or one blank: none; the notification opens the card
		}
		for i, l := range links {
			m.Actions = append(m.Actions, PushAction{Action: "answer-" + strconv.Itoa(i), Title: labels[i], Link: w.answerURL(l.Code)})
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

// push sends msg to one subscription. A subscription its push service says
// is gone (404, 410) is deleted, and is no failure.
func (w *Worker) push(ctx context.Context, keys *askd.VAPIDKeys, sub *askd.PushSubscription, msg []byte, a *askd.Ask) error {
	urgency := webpush.UrgencyNormal
	if a.Kind == askd.KindApproval || a.Kind == askd.KindQuestion || a.Kind == askd.KindForm {
		urgency = webpush.UrgencyHigh // an agent (or an MCP server) waits on it
	}
	resp, err := webpush.SendNotificationWithContext(ctx, msg, &webpush.Subscription{
		Endpoint: sub.Endpoint, Keys: webpush.Keys{P256dh: sub.Keys.P256dh, Auth: sub.Keys.Auth},
	}, &webpush.Options{
		HTTPClient: w.guarded, Subscriber: w.pushSubscriber(),
		VAPIDPublicKey: keys.Public, VAPIDPrivateKey: keys.Private,
		TTL: int(pushTTL / time.Second), Urgency: urgency, Topic: "askd-" + strconv.FormatInt(a.ID, 10),
	})
	host := endpointHost(sub.Endpoint)
	if err != nil {
		var refused *refusedError
		if errors.As(err, &refused) {
			return fmt.Errorf("%s: %w", host, err)
		}
		return fmt.Errorf("%s: %s", host, oneLine(err.Error()))
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		w.log.Info("push: subscription gone, deleted", "push_service", host, "status", resp.StatusCode, "human", sub.Human)
		return w.svc.DropPushSubscription(context.WithoutCancel(ctx), sub.Endpoint)
	}
	msgText := fmt.Sprintf("%s: HTTP %s", host, resp.Status)
	if s := oneLine(string(snippet)); s != "" {
		msgText += ": " + s
	}
	return errors.New(msgText)
}

// pushSubscriber is the VAPID JWT's "sub", a contact for the push service's
// operator: the public URL when it is https (webpush-go takes anything else
// as an e-mail address).
func (w *Worker) pushSubscriber() string {
	if strings.HasPrefix(w.opts.PublicURL, "https://") {
		return w.opts.PublicURL
	}
	return "askd@localhost"
}

// endpointHost is the host of a push endpoint, for errors and logs: the
// path is the subscription's capability, and stays out of them.
func endpointHost(endpoint string) string {
	rest, _ := strings.CutPrefix(endpoint, "https://")
	rest, _ = strings.CutPrefix(rest, "http://")
	host, _, _ := strings.Cut(rest, "/")
	return host
}
