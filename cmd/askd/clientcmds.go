package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
)

// remote holds the flags every command that talks to a server shares.
type remote struct {
	url, token, session string
	json                bool
}

func remoteFlags(fs *flag.FlagSet, agent bool) *remote {
	r := &remote{}
	fs.StringVar(&r.url, "url", "http://127.0.0.1:7777", "the askd server")
	fs.StringVar(&r.token, "token", "", "your token (agent token for asking, human token for answering)")
	if agent {
		fs.StringVar(&r.session, "session", "", "the session to ask in (default: the token's name)")
	}
	fs.BoolVar(&r.json, "json", false, "print JSON")
	return r
}

func (r *remote) client() (*client.Client, error) {
	if r.token == "" {
		return nil, usageError("no token: set ASKD_TOKEN or pass --token")
	}
	c := client.New(r.url, r.token)
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
	r := remoteFlags(fs, true)
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
	r := remoteFlags(fs, true)
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
	r := remoteFlags(fs, true)
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
	r := remoteFlags(fs, false)
	status := fs.String("status", "", "pending, answered or cancelled (default: pending, then the last settled)")
	agent := fs.String("agent", "", "only this agent token's asks (with --session: its session of that name)")
	session := fs.String("session", "", "only sessions of this name (of every agent token, unless --agent)")
	kind := fs.String("kind", "", "only this kind")
	limit := fs.Int("limit", 0, "at most this many settled asks")
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
	r := remoteFlags(fs, false)
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
			fmt.Fprintf(w, "  %s  %-10s by %s %s\n", ev.At.Local().Format("2006-01-02 15:04:05"), term(ev.Action), term(ev.Actor), term(ev.Note))
		}
	})
}

func cmdAnswer(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "answer", "ID ANSWER... | ID approve|reject|modify [--payload JSON] [--comment TEXT] | ID --body JSON")
	r := remoteFlags(fs, false)
	body := fs.String("body", "", "the whole answer body as JSON (SPEC §3.1)")
	payload := fs.String("payload", "", "approval: the edited payload (with modify)")
	comment := fs.String("comment", "", "approval: a comment for the agent")
	if err := parse(e, fs, args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return usageError("usage: askd answer ID ANSWER...")
	}
	id, err := strconv.ParseInt(rest[0], 10, 64)
	if err != nil {
		return usageError(fmt.Sprintf("answer: %q is not an ask id", rest[0]))
	}
	c, err := r.client()
	if err != nil {
		return err
	}
	var ans askd.Answer
	if *body != "" {
		if err := askd.Decode([]byte(*body), &ans); err != nil {
			return err
		}
	} else {
		d, err := c.Show(ctx, id)
		if err != nil {
			return err
		}
		if ans, err = answerFromArgs(&d.Ask, rest[1:], *payload, *comment); err != nil {
			return err
		}
	}
	a, err := c.Answer(ctx, id, &ans)
	if err != nil {
		return err
	}
	return r.print(e, a, func(w io.Writer) { describe(w, a) })
}

// answerFromArgs builds an answer body from words on the command line.
func answerFromArgs(a *askd.Ask, words []string, payload, comment string) (askd.Answer, error) {
	var ans askd.Answer
	if len(words) == 0 {
		return ans, usageError("answer: give the answer after the id")
	}
	switch {
	case a.Kind == askd.KindApproval:
		switch words[0] {
		case "approve", "approved":
			ans.Decision = askd.DecisionApproved
		case "reject", "rejected":
			ans.Decision = askd.DecisionRejected
		case "modify", "modified":
			ans.Decision = askd.DecisionModified
			ans.Payload = json.RawMessage(payload)
		default:
			return ans, usageError("answer: an approval takes approve, reject or modify --payload JSON")
		}
		ans.Comment = comment
	case a.Kind == askd.KindQuestion:
		if len(a.Questions) != 1 {
			return ans, usageError("answer: this ask has several questions; pass --body '{\"answers\": {...}}'")
		}
		q := a.Questions[0]
		ch := askd.Choice{Values: []string{strings.Join(words, " ")}}
		if q.MultiSelect {
			ch = askd.Choice{Values: words, Multi: true}
		}
		ans.Answers = map[string]askd.Choice{q.Question: ch}
	default:
		ans.Answer = strings.Join(words, " ")
	}
	return ans, nil
}

func cmdDismiss(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "dismiss", "ID [--response TEXT]")
	r := remoteFlags(fs, false)
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
	var idArg string
	var rest []string
	for i, a := range args {
		if !strings.HasPrefix(a, "-") && idArg == "" && (i == 0 || !needsValue(fs, args[i-1])) {
			idArg = a
			continue
		}
		rest = append(rest, a)
	}
	if err := parse(e, fs, rest); err != nil {
		return 0, err
	}
	if idArg == "" {
		return 0, usageError(fmt.Sprintf("%s: give the ask id", fs.Name()))
	}
	id, err := strconv.ParseInt(idArg, 10, 64)
	if err != nil || id <= 0 {
		return 0, usageError(fmt.Sprintf("%s: %q is not an ask id", fs.Name(), idArg))
	}
	return id, nil
}

// needsValue reports whether arg is a flag that takes the next argument.
func needsValue(fs *flag.FlagSet, arg string) bool {
	name := strings.TrimLeft(arg, "-")
	if strings.Contains(name, "=") {
		return false
	}
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return false
	}
	return true
}

// describe prints an ask for people. Every string from the server goes
// through term: a database written before askd refused control characters, or
// text a field may hold (line breaks in a question), reaches no terminal raw.
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
	for _, q := range a.Questions {
		fmt.Fprintf(w, "  [%s] %s\n", term(q.Header), term(q.Question))
		for _, o := range q.Options {
			fmt.Fprintf(w, "    - %s  %s\n", term(o.Label), term(o.Description))
		}
	}
	for _, o := range a.Options {
		mark := ""
		if o.Label == a.Recommended {
			mark = " (recommended)"
		}
		fmt.Fprintf(w, "    - %s%s  %s\n", term(o.Label), mark, term(o.Description))
	}
	if a.Answer != nil {
		fmt.Fprintf(w, "  answer by %s: %s\n", term(a.SettledBy), term(answerText(a)))
	}
}

// answerText renders an answer in one line.
func answerText(a *askd.Ask) string {
	ans := a.Answer
	switch {
	case ans == nil:
		return ""
	case len(ans.Answers) > 0:
		var parts []string
		for _, q := range a.Questions {
			if c, ok := ans.Answers[q.Question]; ok {
				parts = append(parts, fmt.Sprintf("%s = %s", q.Header, c.Joined()))
			}
		}
		if ans.Response != "" {
			parts = append(parts, "response: "+ans.Response)
		}
		return strings.Join(parts, "; ")
	case ans.Decision != "":
		s := ans.Decision
		if ans.Comment != "" {
			s += ": " + ans.Comment
		}
		return s
	case ans.Answer != "":
		return ans.Answer
	}
	return ans.Response
}

// oneLine is s on one line of at most n characters, safe for a terminal.
func oneLine(s string, n int) string {
	s = term(strings.Join(strings.Fields(s), " "))
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
