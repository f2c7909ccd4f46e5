package tell_test

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/askd-dev/askd"
)

// The receivers of askd's notifications, as the tests play them: each reads
// what askd sent the way the program at the other end does, so a test can
// check what a person is shown and what a tap does, not what askd meant.

// ntfyNote is a notification as an ntfy server makes it of askd's request.
type ntfyNote struct {
	Title, Message, Click, Priority, Tags string
	Actions                               []ntfyButton
}

// ntfyButton is an action of an ntfy notification.
type ntfyButton struct {
	Action  string            `json:"action"`
	Label   string            `json:"label"`
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
	Extras  map[string]string `json:"extras"`
	Body    string            `json:"body"`
	Intent  string            `json:"intent"`
	Clear   bool              `json:"clear"`
}

// readNtfy reads a request as ntfy's server does: every header through
// Go's mime.WordDecoder (RFC 2047 encoded words decoded wherever they stand;
// a header that does not decode is taken as it is), trimmed; the body, UTF-8
// and at most 4,096 bytes, as the message; the Actions header parsed after
// decoding, in its JSON form when it starts with "[", else its simple form
// (parseNtfyActions). An error is what ntfy would refuse the request for.
func readNtfy(r received) (ntfyNote, error) {
	header := func(name string) string {
		v := r.header.Get(name)
		if d, err := new(mime.WordDecoder).DecodeHeader(v); err == nil {
			v = d
		}
		return strings.TrimSpace(v)
	}
	n := ntfyNote{Title: header("Title"), Message: string(r.body), Click: header("Click"),
		Priority: header("Priority"), Tags: header("Tags")}
	if !utf8.Valid(r.body) || len(r.body) > 4096 {
		return n, fmt.Errorf("a body of %d bytes, valid UTF-8 %t: ntfy takes it as an attachment", len(r.body), utf8.Valid(r.body))
	}
	var err error
	if s := header("Actions"); s != "" {
		n.Actions, err = parseNtfyActions(s)
	}
	return n, err
}

// parseNtfyActions parses an Actions header as ntfy does
// (https://docs.ntfy.sh/publish/#action-buttons): a JSON array, or the
// simple form, then checks what ntfy checks.
func parseNtfyActions(s string) ([]ntfyButton, error) {
	var actions []ntfyButton
	var err error
	if strings.HasPrefix(s, "[") {
		err = json.Unmarshal([]byte(s), &actions)
	} else {
		actions, err = parseNtfySimple(s)
	}
	if err != nil {
		return nil, err
	}
	if len(actions) > 3 {
		return nil, fmt.Errorf("%d actions, ntfy takes 3", len(actions))
	}
	for i := range actions {
		a := &actions[i]
		a.Action, a.Method = strings.ToLower(a.Action), strings.ToUpper(a.Method)
		switch {
		case a.Action != "view" && a.Action != "broadcast" && a.Action != "http":
			return nil, fmt.Errorf("action %q", a.Action)
		case a.Label == "":
			return nil, fmt.Errorf("action %d without a label", i)
		case a.Action != "broadcast" && a.URL == "":
			return nil, fmt.Errorf("%s action %q without a url", a.Action, a.Label)
		case a.Action == "http" && (a.Method == "GET" || a.Method == "HEAD") && a.Body != "":
			return nil, fmt.Errorf("http action %q: a body with %s", a.Label, a.Method)
		}
	}
	return actions, nil
}

// ntfyKey is a key of the simple form: "key=" before a value.
var ntfyKey = regexp.MustCompile(`^([-.\w]+)\s*=\s*`)

// parseNtfySimple parses ntfy's simple action form, following its rules:
// actions end at ';', sections at ','; a section is a value, or key=value
// (a key of letters, digits, '_', '-', '.'); a value is cut at the next ','
// or ';' and trimmed, unless it starts with a double or single quote: then
// it runs to the next such quote that has no backslash before it (a
// backslash before the quote escapes it, and only it), and nothing but
// spaces may follow before the section's end. Sections without a key are,
// in order, the action, the label, and (for view and http) the URL.
func parseNtfySimple(s string) ([]ntfyButton, error) {
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("not UTF-8")
	}
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
	var actions []ntfyButton
	pos := 0
	for pos < len(s) {
		a := ntfyButton{Headers: map[string]string{}, Extras: map[string]string{}}
		for section := 0; ; section++ {
			for pos < len(s) && isSpace(s[pos]) {
				pos++
			}
			key := ""
			if m := ntfyKey.FindStringSubmatch(s[pos:]); m != nil {
				key, pos = m[1], pos+len(m[0])
			}
			var value string
			last := false
			switch {
			case pos >= len(s) || s[pos] == ',' || s[pos] == ';':
				last = pos >= len(s) || s[pos] == ';'
				pos++
			case s[pos] == '"' || s[pos] == '\'':
				q := s[pos]
				start := pos + 1
				end := start
				for ; ; end++ {
					if end >= len(s) {
						return nil, fmt.Errorf("unterminated quote at %d", start)
					}
					if s[end] == q && (end == start || s[end-1] != '\\') {
						break
					}
				}
				value = strings.ReplaceAll(s[start:end], `\`+string(q), string(q))
				pos = end + 1
				for pos < len(s) && isSpace(s[pos]) {
					pos++
				}
				if pos < len(s) && s[pos] != ',' && s[pos] != ';' {
					return nil, fmt.Errorf("unexpected %q at %d", s[pos], pos)
				}
				last = pos >= len(s) || s[pos] == ';'
				pos++
			default:
				end := pos
				for end < len(s) && s[end] != ',' && s[end] != ';' {
					end++
				}
				value = strings.TrimSpace(s[pos:end])
				last = end >= len(s) || s[end] == ';'
				pos = end + 1
			}
			switch {
			case key == "" && section == 0:
				key = "action"
			case key == "" && section == 1:
				key = "label"
			case key == "" && section == 2 && (a.Action == "view" || a.Action == "http"):
				key = "url"
			}
			switch k := strings.ToLower(key); {
			case key == "":
				return nil, fmt.Errorf("term %q unknown", value)
			case strings.HasPrefix(key, "headers."):
				a.Headers[strings.TrimPrefix(key, "headers.")] = value
			case strings.HasPrefix(key, "extras."):
				a.Extras[strings.TrimPrefix(key, "extras.")] = value
			case k == "action":
				a.Action = value
			case k == "label":
				a.Label = value
			case k == "url":
				a.URL = value
			case k == "method":
				a.Method = value
			case k == "body":
				a.Body = value
			case k == "intent":
				a.Intent = value
			case k == "clear":
				switch strings.ToLower(value) {
				case "true", "yes", "1":
					a.Clear = true
				case "false", "no", "0":
				default:
					return nil, fmt.Errorf("clear=%q", value)
				}
			default:
				return nil, fmt.Errorf("key %q unknown", key)
			}
			if last {
				break
			}
		}
		actions = append(actions, a)
	}
	return actions, nil
}

// The linkifiers of the receivers: what each makes a link of in plain text.
var (
	// ntfy's web app (web/src/components/Notifications.jsx, autolink).
	ntfyWebLink = regexp.MustCompile(`(?i)\bhttps?://[-A-Z0-9+&\x{2019}@#/%?=()~_|!:,.;]*[-A-Z0-9+&@#/%=~()_|]\b`)
	// Android's Linkify.WEB_URLS (the ntfy app's title and message) and
	// Slack's and mail clients' autolinking, taken wide: a scheme and what
	// follows it; a host name of labels (ASCII letters and digits, and any
	// character from U+00A0, as Android's IRI labels take) ending in a
	// top-level-domain-like label (a letter, then one or more label
	// characters), with or without a scheme; an IPv4 address.
	schemeLink = regexp.MustCompile(`(?i)\b(?:https?|rtsp|ftp|ftps|file|mailto):/*[^\s<>"]+`)
	hostLink   = regexp.MustCompile(`(?:[0-9A-Za-z\x{A0}-\x{D7FF}\x{F900}-\x{FDCF}\x{FDF0}-\x{FFEF}_-]+\.)+[A-Za-z\x{A0}-\x{D7FF}\x{F900}-\x{FDCF}\x{FDF0}-\x{FFEF}][0-9A-Za-z\x{A0}-\x{D7FF}\x{F900}-\x{FDCF}\x{FDF0}-\x{FFEF}-]+`)
	ipLink     = regexp.MustCompile(`[0-9]{1,3}(?:\.[0-9]{1,3}){3}`)
)

// linksIn is every link a receiver would make of plain text.
func linksIn(text string) []string {
	var out []string
	for _, re := range []*regexp.Regexp{ntfyWebLink, schemeLink, hostLink, ipLink} {
		out = append(out, re.FindAllString(text, -1)...)
	}
	return out
}

// unprintableIn returns the first character of s that a title may not hold
// (control, line separator, bidi control, zero-width, invisible), or "".
func unprintableIn(s string) string {
	for _, r := range s {
		if askd.Unprintable(r) {
			return fmt.Sprintf("U+%04X", r)
		}
	}
	return ""
}

// slackNote is what Slack makes of askd's message: its texts as shown (mrkdwn
// entities decoded), the links it shows (from <url|text> and, where Slack
// links text, from linksIn), mentions and commands (<!here>, <@U123>,
// <#C1>), and the buttons.
type slackNote struct {
	Texts    []string
	Links    []string
	Mentions []string
	Buttons  []slackButton
}

// readSlack reads a Slack message body (incoming webhook or response_url).
func readSlack(body []byte) (slackNote, error) {
	var m struct {
		Text   string `json:"text"`
		Blocks []struct {
			Type     string            `json:"type"`
			Text     *slackTextObject  `json:"text"`
			Elements []json.RawMessage `json:"elements"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return slackNote{}, err
	}
	var n slackNote
	// The top-level text is linked as mrkdwn that is not verbatim.
	n.read(slackTextObject{Type: "mrkdwn", Text: m.Text})
	for _, b := range m.Blocks {
		if b.Text != nil {
			n.read(*b.Text)
		}
		for _, e := range b.Elements {
			var el struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal(e, &el); err != nil {
				return n, err
			}
			switch el.Type {
			case "button":
				var btn slackButton
				if err := json.Unmarshal(e, &btn); err != nil {
					return n, err
				}
				n.Buttons = append(n.Buttons, btn)
				if btn.URL != "" {
					n.Links = append(n.Links, btn.URL)
				}
			case "mrkdwn", "plain_text":
				var o slackTextObject
				if err := json.Unmarshal(e, &o); err != nil {
					return n, err
				}
				n.read(o)
			}
		}
	}
	return n, nil
}

// slackTextObject is a Slack text object.
type slackTextObject struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Verbatim bool   `json:"verbatim"`
}

// slackAngle is Slack's control sequence: <...>.
var slackAngle = regexp.MustCompile(`<([^<>]*)>`)

// read takes a text object as Slack shows it: in mrkdwn, <url|text> is a
// link, <!...>, <@...>, <#...> a mention or command; &amp; &lt; &gt; are
// the characters; and, unless verbatim, whatever reads as a URL is linked
// (Slack does not link plain_text).
func (n *slackNote) read(o slackTextObject) {
	text := o.Text
	if o.Type == "mrkdwn" {
		text = slackAngle.ReplaceAllStringFunc(text, func(m string) string {
			inner := m[1 : len(m)-1]
			target, label, _ := strings.Cut(inner, "|")
			switch {
			case strings.HasPrefix(inner, "!"), strings.HasPrefix(inner, "@"), strings.HasPrefix(inner, "#"):
				n.Mentions = append(n.Mentions, inner)
			default:
				n.Links = append(n.Links, target)
			}
			return label
		})
		text = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(text)
		if !o.Verbatim {
			n.Links = append(n.Links, linksIn(text)...)
		}
	}
	n.Texts = append(n.Texts, text)
}

// pushNote is what askd's service worker (internal/web/static/sw.js) makes
// of a push payload: showAsk's title, body and actions, and where a tap on
// each action sends its POST (answer: the link's path, on the worker's own
// origin).
type pushNote struct {
	Title, Body, Open string
	Actions           []pushButton
}

type pushButton struct{ ID, Title, Target string }

// readPush reads a decrypted push payload as sw.js does, the worker served
// from origin.
func readPush(payload []byte, origin string) (pushNote, error) {
	var m struct {
		Title   string `json:"title"`
		Body    string `json:"body"`
		URL     string `json:"url"`
		Actions []struct {
			Action string `json:"action"`
			Title  string `json:"title"`
			Link   string `json:"link"`
		} `json:"actions"`
	}
	if err := json.Unmarshal(payload, &m); err != nil {
		return pushNote{}, err
	}
	base, err := url.Parse(origin)
	if err != nil {
		return pushNote{}, err
	}
	n := pushNote{Title: m.Title, Body: m.Body, Open: m.URL}
	if n.Title == "" {
		n.Title = "askd"
	}
	for _, a := range m.Actions {
		u, err := base.Parse(a.Link)
		if err != nil {
			return n, err
		}
		n.Actions = append(n.Actions, pushButton{a.Action, a.Title, origin + u.EscapedPath()})
	}
	return n, nil
}
