package apicmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
)

const answerSynopsis = `ID LABEL | ID OWN WORDS --own-words | ID approve|reject [--comment TEXT] | ID modify --payload JSON [--comment TEXT]
       askd answer ID HEADER=LABEL... (several questions; repeat a header for several labels) [--response TEXT]
       askd answer ID FIELD=VALUE... | ID --done | ID --decline   (form asks)
       askd answer ID --body JSON

An answer must be one of the ask's option labels, exactly; a near miss (other
case or spacing) is refused with the closest labels named. --own-words sends
words that are not a label as the person's own. Flags may come anywhere.

A form ask (an MCP server's question; askd show ID lists its fields) takes
FIELD=VALUE for each field you fill in: a number as 42 or 2.5, a true or
false field as true, false, yes or no, a choice as its value (as askd show
prints it, before its title), text as it is (quote it for the shell). A
multi-select field is repeated, once per choice: tags=a tags=b (tags= alone
chooses none). Fields not given take their defaults. The answer is checked
as the server checks it before anything is sent; a near miss is named
("gren": did you mean "green"?). --done accepts a url-mode form once you
have finished at its address, or a form as it is pre-filled; --decline
refuses either.`

// Answer is askd answer: it answers an ask with a human token, from words
// (a label, approve/reject/modify, HEADER=LABEL, FIELD=VALUE) read against
// the ask as the server shows it, or from --body. Words it cannot take as
// meant are a cli.UsageError, and nothing is answered.
func Answer(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "answer", answerSynopsis)
	r := cli.RemoteFlags(e, fs, cli.PersonSide)
	var f answerFlags
	fs.StringVar(&f.body, "body", "", "the whole answer body as JSON (SPEC §3.1), instead of words")
	fs.StringVar(&f.payload, "payload", "", "approval, with modify: the edited payload, a JSON object")
	fs.StringVar(&f.comment, "comment", "", "approval: a comment for the agent")
	fs.StringVar(&f.response, "response", "", "question: a reply for the agent besides the answers")
	fs.BoolVar(&f.ownWords, "own-words", false, "send words that are not an option label as the person's own answer")
	fs.BoolVar(&f.done, "done", false, "form: accept; url mode: you have finished at the address; form mode: send the form\nas it is pre-filled (FIELD=VALUE words accept without it)")
	fs.BoolVar(&f.decline, "decline", false, "form: decline, refusing what the MCP server asks")
	for _, n := range []string{"body", "payload", "comment", "response", "own-words", "done", "decline"} {
		e.SetEnvName(n, "") // an answer is never taken from the environment
	}
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return cli.UsageError("answer: give the ask id, then the answer (askd answer -h)")
	}
	id, err := cli.AskID("answer", rest[0])
	if err != nil {
		return err
	}
	c, err := r.Client()
	if err != nil {
		return err
	}
	var ans askd.Answer
	if f.body != "" {
		if len(rest) > 1 || f.payload != "" || f.comment != "" || f.response != "" || f.ownWords || f.done || f.decline {
			return cli.UsageError("answer: --body is the whole answer; give no words or other answer flags with it")
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
	return r.Print(e, a, func(w io.Writer) { describe(w, a) })
}

// answerFlags are askd answer's flags besides the id and words.
type answerFlags struct {
	body, payload, comment, response string
	ownWords, done, decline          bool
}

// answerFromArgs builds an answer body from words on the command line and
// the flags. A flag the ask's kind does not take is refused, never dropped,
// and so are words that are not a label, unless --own-words.
func answerFromArgs(a *askd.Ask, words []string, f answerFlags) (askd.Answer, error) {
	var ans askd.Answer
	if a.Kind == askd.KindForm {
		return formAnswer(a, words, f)
	}
	refuse := func(flag string, set bool) error { return notFor(a.Kind, flag, set) }
	if err := errors.Join(refuse("--done", f.done), refuse("--decline", f.decline)); err != nil {
		return ans, err
	}
	if len(words) == 0 {
		return ans, cli.UsageError(fmt.Sprintf("answer: give the answer after the id (ask #%d is %s; askd show %d)", a.ID, a.Kind, a.ID))
	}
	switch {
	case a.Kind == askd.KindApproval:
		if err := errors.Join(refuse("--response", f.response != ""), refuse("--own-words", f.ownWords)); err != nil {
			return ans, err
		}
		if len(words) > 1 {
			return ans, cli.UsageError(fmt.Sprintf("answer: an approval takes one word, approve, reject or modify, not %q; a comment goes in --comment", strings.Join(words, " ")))
		}
		switch strings.ToLower(words[0]) {
		case "approve", "approved":
			ans.Decision = askd.DecisionApproved
		case "reject", "rejected":
			ans.Decision = askd.DecisionRejected
		case "modify", "modified":
			ans.Decision = askd.DecisionModified
		default:
			return ans, cli.UsageError(fmt.Sprintf("answer: %q: an approval takes approve, reject or modify --payload JSON", words[0]))
		}
		switch {
		case ans.Decision == askd.DecisionModified && f.payload == "":
			return ans, cli.UsageError("answer: modify needs --payload JSON, the edited payload")
		case ans.Decision != askd.DecisionModified && f.payload != "":
			return ans, cli.UsageError(fmt.Sprintf("answer: --payload goes with modify, not %s", words[0]))
		case f.payload != "":
			if err := cli.JSONObject("--payload", f.payload); err != nil {
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

// notFor refuses a flag, when set, that asks of kind k do not take.
func notFor(k askd.Kind, flag string, set bool) error {
	if set {
		return cli.UsageError(fmt.Sprintf("answer: %s is not for %s asks", flag, k))
	}
	return nil
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
			return nil, cli.UsageError(fmt.Sprintf("answer: ask #%d has %d questions: answer each as HEADER=LABEL (headers %s), not %q", a.ID, len(a.Questions), quoteList(headers), w))
		}
		q := findQuestion(a.Questions, key)
		if q == nil {
			return nil, cli.UsageError(fmt.Sprintf("answer: %q is not a question of ask #%d; its headers are %s", key, a.ID, quoteList(headers)))
		}
		if err := checkLabel(fmt.Sprintf("answer to %q", q.Header), value, q.Options, ownWords); err != nil {
			return nil, err
		}
		c := answers[q.Question]
		if len(c.Values) > 0 && !q.MultiSelect {
			return nil, cli.UsageError(fmt.Sprintf("answer: %q takes one answer, given twice", q.Header))
		}
		answers[q.Question] = askd.Choice{Values: append(c.Values, value), Multi: q.MultiSelect}
	}
	for _, q := range a.Questions {
		if _, ok := answers[q.Question]; !ok {
			return nil, cli.UsageError(fmt.Sprintf("answer: %q is not answered; give %s=LABEL too", q.Header, q.Header))
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
		return cli.UsageError(fmt.Sprintf("%s: %q is not an option; did you mean %s? Give the label exactly, or --own-words to send %q as your own words", what, v, quoteList(near), v))
	}
	return cli.UsageError(fmt.Sprintf("%s: %q is none of the options (%s); give one of them, or --own-words to send it as your own words", what, v, quoteList(labels)))
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
		q[i] = strconv.Quote(cli.Term(l))
	}
	return strings.Join(q, ", ")
}
