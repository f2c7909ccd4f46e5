package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
)

// Side is whose command it is: the token it takes and where from.
type Side int

const (
	AgentSide  Side = iota // agent token (ASKD_TOKEN), no session flag
	AskingSide             // agent token (ASKD_TOKEN) asking in a session (ASKD_SESSION)
	PersonSide             // human token (ASKD_HUMAN_TOKEN)
)

// Remote holds the flags every command that talks to a server shares.
type Remote struct {
	URL, Token, Session string
	JSON                bool
	Side                Side
}

// RemoteFlags defines --url, --token (and --session when asking) and
// --json. The person's commands take their token from ASKD_HUMAN_TOKEN, so
// someone with both tokens in their shell (an agent's ASKD_TOKEN exported
// for Claude Code) gets the right one for each command.
func RemoteFlags(e *Env, fs *flag.FlagSet, s Side) *Remote {
	r := ConnectFlags(e, fs, s)
	fs.BoolVar(&r.JSON, "json", false, "print JSON")
	return r
}

// ConnectFlags defines --url, --token (and --session when asking): those of
// RemoteFlags, for a command that prints no ask (askd gate run).
func ConnectFlags(e *Env, fs *flag.FlagSet, s Side) *Remote {
	r := &Remote{Side: s}
	fs.StringVar(&r.URL, "url", "http://127.0.0.1:7777", "the askd server")
	if s == PersonSide {
		fs.StringVar(&r.Token, "token", "", "a human token (askd token create --human NAME)")
		e.SetEnvName("token", "ASKD_HUMAN_TOKEN")
	} else {
		fs.StringVar(&r.Token, "token", "", "an agent token (askd token create --agent NAME)")
	}
	if s == AskingSide {
		fs.StringVar(&r.Session, "session", "", "the session to ask in (default: the token's name)")
	}
	return r
}

// Client is a client of the server with the command's token. A token of the
// other role is refused here, by its prefix, before the server would answer
// something else (an agent token's GET /api/asks lists its own settled asks).
func (r *Remote) Client() (*client.Client, error) {
	if r.Side == PersonSide {
		switch {
		case r.Token == "":
			return nil, UsageError("no human token: set ASKD_HUMAN_TOKEN or pass --token (ASKD_TOKEN is the agent's; askd token create --human NAME makes one)")
		case strings.HasPrefix(r.Token, app.TokenPrefix(askd.RoleAgent)):
			return nil, UsageError("--token: that is an agent token; the person's commands (list, show, answer, dismiss, claim, rule) need a human token, from ASKD_HUMAN_TOKEN or --token")
		}
	} else {
		switch {
		case r.Token == "":
			return nil, UsageError("no agent token: set ASKD_TOKEN or pass --token (askd token create --agent NAME makes one)")
		case strings.HasPrefix(r.Token, app.TokenPrefix(askd.RoleHuman)):
			return nil, UsageError("--token: that is a human token; the agent's commands (ask, check, cancel, session) need an agent token, from ASKD_TOKEN or --token")
		}
	}
	if u, err := url.Parse(r.URL); err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, UsageError(fmt.Sprintf("--url: %q is not an http(s) URL such as http://127.0.0.1:7777", r.URL))
	}
	c := client.New(strings.TrimRight(r.URL, "/"), r.Token)
	c.Session = r.Session
	return c, nil
}

// Print prints v as JSON with --json, else as human writes it.
func (r *Remote) Print(e *Env, v any, human func(w io.Writer)) error {
	if r.JSON {
		return WriteJSON(e.Stdout, v)
	}
	human(e.Stdout)
	return nil
}

// WriteJSON writes v as one line of JSON in which no character can act on a
// terminal: encoding/json escapes C0 and U+2028/9 already, but writes DEL,
// C1 (U+009B is a CSI to some terminals), bidi controls and invisible
// characters as they are; those are escaped here too (\u009b, \u202e), and a
// raw payload's bytes that are not UTF-8 become \ufffd. Every JSON reader gets
// the same values.
func WriteJSON(w io.Writer, v any) error {
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

// Term is agent or person text as it may be printed on a terminal
// (askd.Printable).
func Term(s string) string { return askd.Printable(s) }

// JSONObject checks that a flag's value is a JSON object, in the words of
// the flag rather than Go's.
func JSONObject(flag, v string) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(v), &obj); err != nil || obj == nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return UsageError(fmt.Sprintf("%s: not valid JSON (%s at byte %d); give an object such as '{\"batch\": 100}'", flag, strings.TrimPrefix(syn.Error(), "invalid character "), syn.Offset))
		}
		return UsageError(fmt.Sprintf("%s: must be a JSON object such as '{\"batch\": 100}'", flag))
	}
	return nil
}

// ParseWithID parses flags and the single ID argument, in either order.
func ParseWithID(e *Env, fs *flag.FlagSet, args []string) (int64, error) {
	if err := Parse(e, fs, args); err != nil {
		return 0, err
	}
	switch fs.NArg() {
	case 0:
		return 0, UsageError(fmt.Sprintf("%s: give the ask id", fs.Name()))
	case 1:
	default:
		return 0, UsageError(fmt.Sprintf("%s: one ask id, not %d arguments (%s)", fs.Name(), fs.NArg(), strings.Join(fs.Args(), " ")))
	}
	return AskID(fs.Name(), fs.Arg(0))
}

// ParseListedID parses the flags and the one argument of `askd NOUN
// revoke ID` (fs's name): the id of a NOUN (rule, policy), #3 or 3, as
// askd NOUN list shows it.
func ParseListedID(e *Env, fs *flag.FlagSet, args []string, noun string) (int64, error) {
	if err := Parse(e, fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() != 1 {
		return 0, UsageError(fmt.Sprintf("%s: give one %s ID, as askd %s list shows it", fs.Name(), noun, noun))
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(fs.Arg(0), "#"), 10, 64)
	if err != nil || id <= 0 {
		return 0, UsageError(fmt.Sprintf("%s: %q is not a %s id (a number, as askd %s list shows)", fs.Name(), fs.Arg(0), noun, noun))
	}
	return id, nil
}

// AskID parses an ask id argument, #17 or 17.
func AskID(cmd, arg string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64)
	if err != nil || id <= 0 {
		return 0, UsageError(fmt.Sprintf("%s: %q is not an ask id (a number, as askd list shows)", cmd, arg))
	}
	return id, nil
}
