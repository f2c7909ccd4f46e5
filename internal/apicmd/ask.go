package apicmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
)

// options collects repeated --option "LABEL[: what it means]" flags.
type options []askd.Option

func (o *options) String() string { return fmt.Sprint(len(*o)) }
func (o *options) Set(v string) error {
	label, desc, _ := strings.Cut(v, ":")
	*o = append(*o, askd.Option{Label: strings.TrimSpace(label), Description: strings.TrimSpace(desc)})
	return nil
}

// Ask is askd ask: it asks a person something with an agent token, in the
// session --session names (default: the token's name), and prints the ask,
// with its answer if one came within --wait. A flag it cannot take is a
// cli.UsageError, and nothing is asked.
func Ask(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "ask", "--kind KIND --title TEXT [--option \"LABEL[: meaning]\"]... [--wait 5m]")
	r := cli.RemoteFlags(e, fs, cli.AskingSide)
	kind := fs.String("kind", "decision", "question, decision, action, ready, blocked, approval or form")
	title := fs.String("title", "", "what you need, in one line (attention asks and approvals); a form's message (several lines allowed)")
	details := fs.String("details", "", "more context (plain text)")
	question := fs.String("question", "", "the question (kind question)")
	header := fs.String("header", "", "a short chip label, at most 12 characters (kind question)")
	multi := fs.Bool("multi", false, "allow several options (kind question)")
	recommended := fs.String("recommended", "", "the option you recommend (decision)")
	payload := fs.String("payload", "", "a JSON object the person may edit (approval)")
	// ASKD_PAYLOAD is what askd gate run hands the command it runs (SPEC
	// §12), not a default for this flag: an askd ask in that command
	// would otherwise send the gate's payload.
	e.SetEnvName("payload", "")
	key := fs.String("key", "", "approval: the same key from this token is the same ask, decided or not (SPEC §12)")
	schema := fs.String("schema", "", "the form's fields: MCP's restricted JSON schema, an object of flat properties (form)")
	formURL := fs.String("form-url", "", "instead of --schema, a URL the person is to open (form, url mode; never opened by askd)")
	source := fs.String("source", "", "who asks, e.g. the MCP server's name (form)")
	wait := fs.Duration("wait", 0, "wait this long for the answer (0: return at once)")
	var opts options
	fs.Var(&opts, "option", "an option, \"LABEL\" or \"LABEL: what it means\" (repeat)")
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	in := askd.AskInput{Kind: askd.Kind(*kind), Title: *title, Details: *details, Recommended: *recommended, Source: *source, URL: *formURL, Key: *key}
	if *schema != "" {
		if err := cli.JSONObject("--schema", *schema); err != nil {
			return err
		}
		in.Schema = json.RawMessage(*schema)
	}
	if in.Kind == askd.KindQuestion {
		in.Questions = []askd.Question{{Question: *question, Header: *header, Options: opts, MultiSelect: *multi}}
	} else if len(opts) > 0 {
		in.Options = opts
	}
	if *payload != "" {
		if err := cli.JSONObject("--payload", *payload); err != nil {
			return err
		}
		in.Payload = json.RawMessage(*payload)
	}
	c, err := r.Client()
	if err != nil {
		return err
	}
	a, err := c.Create(ctx, &in, *wait)
	if err != nil {
		return err
	}
	return r.Print(e, a, func(w io.Writer) { describe(w, a) })
}
