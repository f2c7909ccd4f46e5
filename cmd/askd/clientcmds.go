package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
)

// side is whose command it is: the token it takes and where from.
type side int

const (
	agentSide  side = iota // agent token (ASKD_TOKEN), no session flag
	askingSide             // agent token (ASKD_TOKEN) asking in a session (ASKD_SESSION)
	personSide             // human token (ASKD_HUMAN_TOKEN)
)

// remote holds the flags every command that talks to a server shares.
type remote struct {
	url, token, session string
	json                bool
	side                side
}

// remoteFlags defines --url, --token (and --session when asking) and
// --json. The person's commands take their token from ASKD_HUMAN_TOKEN, so
// someone with both tokens in their shell (an agent's ASKD_TOKEN exported
// for Claude Code) gets the right one for each command.
func remoteFlags(e *env, fs *flag.FlagSet, s side) *remote {
	r := &remote{side: s}
	fs.StringVar(&r.url, "url", "http://127.0.0.1:7777", "the askd server")
	if s == personSide {
		fs.StringVar(&r.token, "token", "", "a human token (askd token create --human NAME)")
		e.envName("token", "ASKD_HUMAN_TOKEN")
	} else {
		fs.StringVar(&r.token, "token", "", "an agent token (askd token create --agent NAME)")
	}
	if s == askingSide {
		fs.StringVar(&r.session, "session", "", "the session to ask in (default: the token's name)")
	}
	fs.BoolVar(&r.json, "json", false, "print JSON")
	return r
}

// client is a client of the server with the command's token. A token of the
// other role is refused here, by its prefix, before the server would answer
// something else (an agent token's GET /api/asks lists its own settled asks).
func (r *remote) client() (*client.Client, error) {
	if r.side == personSide {
		switch {
		case r.token == "":
			return nil, usageError("no human token: set ASKD_HUMAN_TOKEN or pass --token (ASKD_TOKEN is the agent's; askd token create --human NAME makes one)")
		case strings.HasPrefix(r.token, app.TokenPrefix(askd.RoleAgent)):
			return nil, usageError("--token: that is an agent token; the person's commands (list, show, answer, dismiss, rule) need a human token, from ASKD_HUMAN_TOKEN or --token")
		}
	} else {
		switch {
		case r.token == "":
			return nil, usageError("no agent token: set ASKD_TOKEN or pass --token (askd token create --agent NAME makes one)")
		case strings.HasPrefix(r.token, app.TokenPrefix(askd.RoleHuman)):
			return nil, usageError("--token: that is a human token; the agent's commands (ask, check, cancel, session) need an agent token, from ASKD_TOKEN or --token")
		}
	}
	if u, err := url.Parse(r.url); err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, usageError(fmt.Sprintf("--url: %q is not an http(s) URL such as http://127.0.0.1:7777", r.url))
	}
	c := client.New(strings.TrimRight(r.url, "/"), r.token)
	c.Session = r.session
	return c, nil
}

func (r *remote) print(e *env, v any, human func(w io.Writer)) error {
	if r.json {
		return writeJSON(e.stdout, v)
	}
	human(e.stdout)
	return nil
}

// writeJSON writes v as one line of JSON in which no character can act on a
// terminal: encoding/json escapes C0 and U+2028/9 already, but writes DEL,
// C1 (U+009B is a CSI to some terminals), bidi controls and invisible
// characters as they are; those are escaped here too (\u009b, \u202e), and a
// raw payload's bytes that are not UTF-8 become \ufffd. Every JSON reader gets
// the same values.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeJSON(buf.Bytes()))
	return err
}

// escapeJSON escapes what askd.Printable would in encoded JSON, where such
// characters can only be inside strings.
func escapeJSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		if b[i] < 0x7f {
			out = append(out, b[i])
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, `\ufffd`...)
		case !askd.Unprintable(r):
			out = append(out, b[i:i+n]...)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += n
	}
	return out
}

// term is agent or person text as it may be printed on a terminal
// (askd.Printable).
func term(s string) string { return askd.Printable(s) }

// options collects repeated --option "LABEL[: what it means]" flags.
type options []askd.Option

func (o *options) String() string { return fmt.Sprint(len(*o)) }
func (o *options) Set(v string) error {
	label, desc, _ := strings.Cut(v, ":")
	*o = append(*o, askd.Option{Label: strings.TrimSpace(label), Description: strings.TrimSpace(desc)})
	return nil
}

func cmdAsk(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "ask", "--kind KIND --title TEXT [--option \"LABEL[: meaning]\"]... [--wait 5m]")
	r := remoteFlags(e, fs, askingSide)
	kind := fs.String("kind", "decision", "question, decision, action, ready, blocked or approval")
	title := fs.String("title", "", "what you need, in one line (attention asks and approvals)")
	details := fs.String("details", "", "more context (plain text)")
	question := fs.String("question", "", "the question (kind question)")
	header := fs.String("header", "", "a short chip label, at most 12 characters (kind question)")
	multi := fs.Bool("multi", false, "allow several options (kind question)")
	recommended := fs.String("recommended", "", "the option you recommend (decision)")
	payload := fs.String("payload", "", "a JSON object the person may edit (approval)")
	wait := fs.Duration("wait", 0, "wait this long for the answer (0: return at once)")
	var opts options
	fs.Var(&opts, "option", "an option, \"LABEL\" or \"LABEL: what it means\" (repeat)")
	if err := parse(e, fs, args); err != nil {
		return err
	}
	in := askd.AskInput{Kind: askd.Kind(*kind), Title: *title, Details: *details, Recommended: *recommended}
	if in.Kind == askd.KindQuestion {
		in.Questions = []askd.Question{{Question: *question, Header: *header, Options: opts, MultiSelect: *multi}}
	} else if len(opts) > 0 {
		in.Options = opts
	}
	if *payload != "" {
		if err := jsonObject("--payload", *payload); err != nil {
			return err
		}
		in.Payload = json.RawMessage(*payload)
	}
	c, err := r.client()
	if err != nil {
		return err
	}
	a, err := c.Create(ctx, &in, *wait)
	if err != nil {
		return err
	}
	return r.print(e, a, func(w io.Writer) { describe(w, a) })
}

func cmdCheck(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "check", "ID [--wait 30s]")
	r := remoteFlags(e, fs, askingSide)
	wait := fs.Duration("wait", 0, "wait up to this long for the ask to settle")
	id, err := parseWithID(e, fs, args)
	if err != nil {
		return err
	}
	c, err := r.client()
	if err != nil {
		return err
	}
	a, err := c.Check(ctx, id, *wait)
	if err != nil {
		return err
	}
	return r.print(e, a, func(w io.Writer) { describe(w, a) })
}

func cmdCancel(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "cancel", "ID")
	r := remoteFlags(e, fs, askingSide)
	id, err := parseWithID(e, fs, args)
	if err != nil {
		return err
	}
	c, err := r.client()
	if err != nil {
		return err
	}
	a, err := c.Withdraw(ctx, id)
	if err != nil {
		return err
	}
	return r.print(e, a, func(w io.Writer) { describe(w, a) })
}

func cmdList(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "list", "[--status S] [--agent NAME] [--session NAME] [--kind K] [--limit N]")
	r := remoteFlags(e, fs, personSide)
	status := fs.String("status", "", "pending, answered or cancelled (default: pending, then the last settled)")
	agent := fs.String("agent", "", "only this agent token's asks (with --session: its session of that name)")
	session := fs.String("session", "", "only sessions of this name (of every agent token, unless --agent)")
	kind := fs.String("kind", "", "only this kind")
	limit := fs.Int("limit", 0, "at most this many settled asks")
	for _, n := range []string{"status", "agent", "session", "kind", "limit"} {
		e.envName(n, "") // an agent's ASKD_SESSION must not narrow the person's list
	}
	if err := parse(e, fs, args); err != nil {
		return err
	}
	c, err := r.client()
	if err != nil {
		return err
	}
	asks, err := c.List(ctx, client.ListOptions{Status: askd.Status(*status), Agent: *agent, Session: *session, Kind: askd.Kind(*kind), Limit: *limit})
	if err != nil {
		return err
	}
	return r.print(e, asks, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tKIND\tAGENT\tSESSION\tWHAT")
		for _, a := range asks {
			st := string(a.Status)
			if a.CancelReason != "" {
				st += "/" + string(a.CancelReason)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", a.ID, term(st), term(string(a.Kind)), term(a.Agent), term(a.Session), oneLine(a.Summary(), 60))
		}
		tw.Flush()
	})
}

func cmdShow(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "show", "ID")
	r := remoteFlags(e, fs, personSide)
	id, err := parseWithID(e, fs, args)
	if err != nil {
		return err
	}
	c, err := r.client()
	if err != nil {
		return err
	}
	d, err := c.Show(ctx, id)
	if err != nil {
		return err
	}
	return r.print(e, d, func(w io.Writer) {
		describe(w, &d.Ask)
		fmt.Fprintln(w, "\nHistory:")
		for _, ev := range d.History {
			line := fmt.Sprintf("  %s  %-10s by %s", ev.At.Local().Format("2006-01-02 15:04:05"), term(ev.Action), term(ev.Actor))
			if ev.Note != "" {
				line += "  " + term(ev.Note)
			}
			fmt.Fprintln(w, line)
		}
	})
}

const answerSynopsis = `ID LABEL | ID OWN WORDS --own-words | ID approve|reject [--comment TEXT] | ID modify --payload JSON [--comment TEXT]
       askd answer ID HEADER=LABEL... (several questions; repeat a header for several labels) [--response TEXT]
       askd answer ID --body JSON

An answer must be one of the ask's option labels, exactly; a near miss (other
case or spacing) is refused with the closest labels named. --own-words sends
words that are not a label as the person's own. Flags may come anywhere.`

func cmdAnswer(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "answer", answerSynopsis)
	r := remoteFlags(e, fs, personSide)
	var f answerFlags
	fs.StringVar(&f.body, "body", "", "the whole answer body as JSON (SPEC §3.1), instead of words")
	fs.StringVar(&f.payload, "payload", "", "approval, with modify: the edited payload, a JSON object")
	fs.StringVar(&f.comment, "comment", "", "approval: a comment for the agent")
	fs.StringVar(&f.response, "response", "", "question: a reply for the agent besides the answers")
	fs.BoolVar(&f.ownWords, "own-words", false, "send words that are not an option label as the person's own answer")
	for _, n := range []string{"body", "payload", "comment", "response", "own-words"} {
		e.envName(n, "") // an answer is never taken from the environment
	}
	if err := parse(e, fs, args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return usageError("answer: give the ask id, then the answer (askd answer -h)")
	}
	id, err := askID("answer", rest[0])
	if err != nil {
		return err
	}
	c, err := r.client()
	if err != nil {
		return err
	}
	var ans askd.Answer
	if f.body != "" {
		if len(rest) > 1 || f.payload != "" || f.comment != "" || f.response != "" || f.ownWords {
			return usageError("answer: --body is the whole answer; give no words or other answer flags with it")
		}
		if err := askd.Decode([]byte(f.body), &ans); err != nil {
			return err // askd.Decode names the body
		}
	} else {
		d, err := c.Show(ctx, id)
		if err != nil {
			return err
		}
		if ans, err = answerFromArgs(&d.Ask, rest[1:], f); err != nil {
			return err
		}
	}
	a, err := c.Answer(ctx, id, &ans)
	if err != nil {
		return err
	}
	return r.print(e, a, func(w io.Writer) { describe(w, a) })
}

// answerFlags are askd answer's flags besides the id and words.
type answerFlags struct {
	body, payload, comment, response string
	ownWords                         bool
}

// answerFromArgs builds an answer body from words on the command line and
// the flags. A flag the ask's kind does not take is refused, never dropped,
// and so are words that are not a label, unless --own-words.
func answerFromArgs(a *askd.Ask, words []string, f answerFlags) (askd.Answer, error) {
	var ans askd.Answer
	if len(words) == 0 {
		return ans, usageError(fmt.Sprintf("answer: give the answer after the id (ask #%d is %s; askd show %d)", a.ID, a.Kind, a.ID))
	}
	refuse := func(flag string, set bool) error {
		if set {
			return usageError(fmt.Sprintf("answer: %s is not for %s asks", flag, a.Kind))
		}
		return nil
	}
	switch {
	case a.Kind == askd.KindApproval:
		if err := errors.Join(refuse("--response", f.response != ""), refuse("--own-words", f.ownWords)); err != nil {
			return ans, err
		}
		if len(words) > 1 {
			return ans, usageError(fmt.Sprintf("answer: an approval takes one word, approve, reject or modify, not %q; a comment goes in --comment", strings.Join(words, " ")))
		}
		switch strings.ToLower(words[0]) {
		case "approve", "approved":
			ans.Decision = askd.DecisionApproved
		case "reject", "rejected":
			ans.Decision = askd.DecisionRejected
		case "modify", "modified":
			ans.Decision = askd.DecisionModified
		default:
			return ans, usageError(fmt.Sprintf("answer: %q: an approval takes approve, reject or modify --payload JSON", words[0]))
		}
		switch {
		case ans.Decision == askd.DecisionModified && f.payload == "":
			return ans, usageError("answer: modify needs --payload JSON, the edited payload")
		case ans.Decision != askd.DecisionModified && f.payload != "":
			return ans, usageError(fmt.Sprintf("answer: --payload goes with modify, not %s", words[0]))
		case f.payload != "":
			if err := jsonObject("--payload", f.payload); err != nil {
				return ans, err
			}
			ans.Payload = json.RawMessage(f.payload)
		}
		ans.Comment = f.comment
	case a.Kind == askd.KindQuestion:
		if err := errors.Join(refuse("--payload", f.payload != ""), refuse("--comment", f.comment != "")); err != nil {
			return ans, err
		}
		var err error
		if ans.Answers, err = questionAnswers(a, words, f.ownWords); err != nil {
			return ans, err
		}
		ans.Response = f.response
	default:
		if err := errors.Join(refuse("--payload", f.payload != ""), refuse("--comment", f.comment != ""), refuse("--response", f.response != "")); err != nil {
			return ans, err
		}
		ans.Answer = strings.Join(words, " ")
		if len(a.Options) > 0 {
			if err := checkLabel("answer", ans.Answer, a.Options, f.ownWords); err != nil {
				return ans, err
			}
		}
	}
	return ans, nil
}

// questionAnswers reads a question ask's answers: for one question its
// label (the words joined), or one label per word when several may be
// chosen; for several questions HEADER=LABEL words, a header (or question
// text) repeated for several labels.
func questionAnswers(a *askd.Ask, words []string, ownWords bool) (map[string]askd.Choice, error) {
	answers := map[string]askd.Choice{}
	if len(a.Questions) == 1 {
		q := a.Questions[0]
		values := []string{strings.Join(words, " ")}
		if q.MultiSelect {
			values = words
		}
		for _, v := range values {
			if err := checkLabel("answer", v, q.Options, ownWords); err != nil {
				return nil, err
			}
		}
		answers[q.Question] = askd.Choice{Values: values, Multi: q.MultiSelect}
		return answers, nil
	}
	var headers []string
	for _, q := range a.Questions {
		headers = append(headers, q.Header)
	}
	for _, w := range words {
		key, value, ok := strings.Cut(w, "=")
		if !ok {
			return nil, usageError(fmt.Sprintf("answer: ask #%d has %d questions: answer each as HEADER=LABEL (headers %s), not %q", a.ID, len(a.Questions), quoteList(headers), w))
		}
		q := findQuestion(a.Questions, key)
		if q == nil {
			return nil, usageError(fmt.Sprintf("answer: %q is not a question of ask #%d; its headers are %s", key, a.ID, quoteList(headers)))
		}
		if err := checkLabel(fmt.Sprintf("answer to %q", q.Header), value, q.Options, ownWords); err != nil {
			return nil, err
		}
		c := answers[q.Question]
		if len(c.Values) > 0 && !q.MultiSelect {
			return nil, usageError(fmt.Sprintf("answer: %q takes one answer, given twice", q.Header))
		}
		answers[q.Question] = askd.Choice{Values: append(c.Values, value), Multi: q.MultiSelect}
	}
	for _, q := range a.Questions {
		if _, ok := answers[q.Question]; !ok {
			return nil, usageError(fmt.Sprintf("answer: %q is not answered; give %s=LABEL too", q.Header, q.Header))
		}
	}
	return answers, nil
}

// findQuestion is the question whose header or text is key, ignoring case.
func findQuestion(qs []askd.Question, key string) *askd.Question {
	key = strings.TrimSpace(key)
	for i, q := range qs {
		if strings.EqualFold(q.Header, key) || strings.EqualFold(q.Question, key) {
			return &qs[i]
		}
	}
	return nil
}

// checkLabel refuses a value that is not one of the options' labels, unless
// the person said it is their own words: a near miss (the same letters in
// another case or spacing) is named, so EU-WEST for eu-west is a question
// back, not a silent "own words".
func checkLabel(what, v string, opts []askd.Option, ownWords bool) error {
	labels := make([]string, len(opts))
	for i, o := range opts {
		if o.Label == v {
			return nil
		}
		labels[i] = o.Label
	}
	if ownWords {
		return nil
	}
	var near []string
	for _, l := range labels {
		if fold(l) == fold(v) {
			near = append(near, l)
		}
	}
	if len(near) > 0 {
		return usageError(fmt.Sprintf("%s: %q is not an option; did you mean %s? Give the label exactly, or --own-words to send %q as your own words", what, v, quoteList(near), v))
	}
	return usageError(fmt.Sprintf("%s: %q is none of the options (%s); give one of them, or --own-words to send it as your own words", what, v, quoteList(labels)))
}

// fold is s without case, spaces, hyphens or underscores: what a near miss
// of a label shares with it.
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '-' || r == '_' {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// quoteList is labels quoted, safe for a terminal, comma-separated.
func quoteList(labels []string) string {
	q := make([]string, len(labels))
	for i, l := range labels {
		q[i] = strconv.Quote(term(l))
	}
	return strings.Join(q, ", ")
}

// jsonObject checks that a flag's value is a JSON object, in the words of
// the flag rather than Go's.
func jsonObject(flag, v string) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(v), &obj); err != nil || obj == nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return usageError(fmt.Sprintf("%s: not valid JSON (%s at byte %d); give an object such as '{\"batch\": 100}'", flag, strings.TrimPrefix(syn.Error(), "invalid character "), syn.Offset))
		}
		return usageError(fmt.Sprintf("%s: must be a JSON object such as '{\"batch\": 100}'", flag))
	}
	return nil
}

func cmdDismiss(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "dismiss", "ID [--response TEXT]")
	r := remoteFlags(e, fs, personSide)
	response := fs.String("response", "", "a reply passed to the agent")
	id, err := parseWithID(e, fs, args)
	if err != nil {
		return err
	}
	c, err := r.client()
	if err != nil {
		return err
	}
	a, err := c.Dismiss(ctx, id, *response)
	if err != nil {
		return err
	}
	return r.print(e, a, func(w io.Writer) { describe(w, a) })
}

// parseWithID parses flags and the single ID argument, in either order.
func parseWithID(e *env, fs *flag.FlagSet, args []string) (int64, error) {
	if err := parse(e, fs, args); err != nil {
		return 0, err
	}
	switch fs.NArg() {
	case 0:
		return 0, usageError(fmt.Sprintf("%s: give the ask id", fs.Name()))
	case 1:
	default:
		return 0, usageError(fmt.Sprintf("%s: one ask id, not %d arguments (%s)", fs.Name(), fs.NArg(), strings.Join(fs.Args(), " ")))
	}
	return askID(fs.Name(), fs.Arg(0))
}

// askID parses an ask id argument, #17 or 17.
func askID(cmd, arg string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64)
	if err != nil || id <= 0 {
		return 0, usageError(fmt.Sprintf("%s: %q is not an ask id (a number, as askd list shows)", cmd, arg))
	}
	return id, nil
}

// describe prints an ask for people: everything the other side acts on.
// For an approval its details and payload and, after an edit, the edited
// payload as a diff against the original; comments and replies; for
// questions the answer to each. Every string from the server goes through
// term: a database written before askd refused control characters, or text a
// field may hold, reaches no terminal raw.
func describe(w io.Writer, a *askd.Ask) {
	st := string(a.Status)
	if a.CancelReason != "" {
		st += " (" + string(a.CancelReason) + ")"
	}
	fmt.Fprintf(w, "ask #%d  %s  %s  session %s of agent %s", a.ID, term(string(a.Kind)), term(st), term(a.Session), term(a.Agent))
	if a.Revision > 1 {
		fmt.Fprintf(w, "  revision %d", a.Revision)
	}
	fmt.Fprintln(w)
	if a.Title != "" {
		fmt.Fprintf(w, "  %s\n", term(a.Title))
	}
	if a.ToolName != "" {
		fmt.Fprintf(w, "  tool: %s\n", term(a.ToolName))
	}
	if a.Details != "" {
		block(w, "  ", a.Details)
	}
	ans := a.Answer
	for _, q := range a.Questions {
		multi := ""
		if q.MultiSelect {
			multi = " (several may be chosen)"
		}
		fmt.Fprintf(w, "  [%s] %s%s\n", term(q.Header), term(q.Question), multi)
		for _, o := range q.Options {
			option(w, o, "")
		}
		if ans != nil {
			if c, ok := ans.Answers[q.Question]; ok {
				fmt.Fprintf(w, "    answer: %s\n", choiceText(q.Options, c.Values))
			}
		}
	}
	for _, o := range a.Options {
		mark := ""
		if o.Label == a.Recommended {
			mark = " (recommended)"
		}
		option(w, o, mark)
	}
	if a.Payload != nil {
		fmt.Fprintln(w, "  payload:")
		block(w, "    ", indentJSON(a.Payload))
	}
	if ans != nil {
		by := "by " + term(a.SettledBy)
		switch {
		case ans.Decision != "":
			fmt.Fprintf(w, "  decision %s: %s\n", by, term(ans.Decision))
		case ans.Answer != "":
			fmt.Fprintf(w, "  answer %s: %s\n", by, choiceText(a.Options, []string{ans.Answer}))
		case len(ans.Answers) > 0:
			fmt.Fprintf(w, "  answered %s\n", by)
		case ans.Response != "":
			fmt.Fprintf(w, "  dismissed %s\n", by)
		}
		if ans.Decision == askd.DecisionModified {
			fmt.Fprintln(w, "  edited payload (- the agent's, + the person's):")
			block(w, "    ", payloadDiff(a.Payload, ans.Payload))
		}
		if ans.Comment != "" {
			fmt.Fprintln(w, "  comment:")
			block(w, "    ", ans.Comment)
		}
		if ans.Response != "" {
			fmt.Fprintln(w, "  reply:")
			block(w, "    ", ans.Response)
		}
	} else if a.Status == askd.StatusCancelled {
		fmt.Fprintf(w, "  no answer (%s by %s)\n", term(string(a.CancelReason)), term(a.SettledBy))
	}
}

// option prints one option of a list.
func option(w io.Writer, o askd.Option, mark string) {
	if o.Description == "" {
		fmt.Fprintf(w, "    - %s%s\n", term(o.Label), mark)
		return
	}
	fmt.Fprintf(w, "    - %s%s  %s\n", term(o.Label), mark, term(o.Description))
}

// choiceText is the values of an answer, each marked when it is the
// person's own words rather than a label.
func choiceText(opts []askd.Option, values []string) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = term(v)
		if len(opts) > 0 && !slices.ContainsFunc(opts, func(o askd.Option) bool { return o.Label == v }) {
			parts[i] += " (own words)"
		}
	}
	return strings.Join(parts, ", ")
}

// block prints text of several lines, each indented and made safe for a
// terminal on its own.
func block(w io.Writer, indent, text string) {
	for line := range strings.SplitSeq(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(w, "%s%s\n", indent, term(line))
	}
}

// indentJSON is a JSON value indented by two spaces, its keys in the order
// given; raw as it came when it is not JSON.
func indentJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// canonicalJSON is a JSON value indented with its keys sorted, so that two
// payloads differ line by line only where their values do.
func canonicalJSON(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// payloadDiff is the edited payload against the original, line by line:
// "- " for the agent's lines the person changed, "+ " for theirs, "  " for
// lines both share.
func payloadDiff(orig, edited json.RawMessage) string {
	return lineDiff(strings.Split(canonicalJSON(orig), "\n"), strings.Split(canonicalJSON(edited), "\n"))
}

// maxDiffCells bounds lineDiff's table (the lines of one times the lines of
// the other); past it the diff is the whole of both.
const maxDiffCells = 4_000_000

// lineDiff is a's lines turned into b's along a longest common subsequence.
func lineDiff(a, b []string) string {
	var out strings.Builder
	if len(a)*len(b) > maxDiffCells {
		for _, l := range a {
			out.WriteString("- " + l + "\n")
		}
		for _, l := range b {
			out.WriteString("+ " + l + "\n")
		}
		return out.String()
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	for i, j := 0, 0; i < len(a) || j < len(b); {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out.WriteString("  " + a[i] + "\n")
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			out.WriteString("- " + a[i] + "\n")
			i++
		default:
			out.WriteString("+ " + b[j] + "\n")
			j++
		}
	}
	return out.String()
}

// oneLine is s on one line of at most n characters, safe for a terminal.
func oneLine(s string, n int) string {
	s = term(strings.Join(strings.Fields(s), " "))
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
