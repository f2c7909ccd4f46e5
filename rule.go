package askd

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
)

// A Rule is a standing answer that a person gives while answering an approval
// ("always allow commands starting with npm test in this session, for 8h"):
// while it is live, a new approval of its session that it matches is answered
// at once, allowed or denied, and never shows as a card. (Not to be confused
// with limits.go, the limits and rules every input follows.)
//
// A rule belongs to one session, which is an agent token's (SPEC §1): Agent
// and Session together. It never answers an ask of another agent token, even
// in a session of the same name. Its agent, session, tool and title come from
// the ask it was made from, so a person makes rules only for sessions they
// have seen asks of.
type Rule struct {
	ID      int64     `json:"id"`
	Agent   string    `json:"agent"`
	Session string    `json:"session"`
	Tool    string    `json:"tool"` // tool and prefix rules: the tool's name
	Match   RuleMatch `json:"match"`
	// Prefix is a prefix rule's command prefix (Bash) or absolute path
	// prefix (file tools); Title a title rule's approval title.
	Prefix    string     `json:"prefix"`
	Title     string     `json:"title"`
	Effect    RuleEffect `json:"effect"`
	AskID     int64      `json:"ask_id"`     // the ask it was made from
	CreatedBy string     `json:"created_by"` // the human token's name
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt time.Time  `json:"expires_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	RevokedBy string     `json:"revoked_by,omitempty"`
}

// RuleMatch is what a rule compares an approval by.
type RuleMatch string

const (
	// MatchTool: any call of the tool (a permission prompt's tool_name).
	MatchTool RuleMatch = "tool"
	// MatchPrefix: a Bash command, or a file tool's file_path, starting with
	// Prefix (see CommandHasPrefix and PathHasPrefix).
	MatchPrefix RuleMatch = "prefix"
	// MatchTitle: a request_approval ask (no tool) with exactly this title.
	MatchTitle RuleMatch = "title"
)

// RuleEffect is how a rule answers: allowed (approved) or denied (rejected).
type RuleEffect string

const (
	EffectAllow RuleEffect = "allow"
	EffectDeny  RuleEffect = "deny"
)

// Limits of rules.
const (
	// MaxRuleLife bounds a rule's life: a standing answer is for a stretch
	// of work, not for good, and must be given again after a month.
	MaxRuleLife        = 30 * 24 * time.Hour
	MaxRulePrefixChars = 1000
	// MaxRulesPerSession bounds the live rules of one session.
	MaxRulesPerSession = 100
)

// RuleFilter selects rules. Zero fields match everything.
type RuleFilter struct {
	Agent   string
	Session string
	// LiveAt, when set, keeps only rules live at that time: not revoked,
	// and expiring after it.
	LiveAt time.Time
}

// Live reports whether r answers asks at t: not revoked, not expired.
func (r *Rule) Live(t time.Time) bool { return r.RevokedAt == nil && r.ExpiresAt.After(t) }

// Matches reports whether r matches approval a: a is of r's session (its
// agent token and session name both) and is what r compares by. It does not
// look at whether r is live or a pending.
func (r *Rule) Matches(a *Ask) bool {
	if a.Kind != KindApproval || a.Agent != r.Agent || a.Session != r.Session {
		return false
	}
	return approvalMatches(a, r.Match, r.Tool, r.Prefix, r.Title)
}

// approvalMatches reports whether approval a is what a rule or policy of
// match compares by: any call of tool (MatchTool); a Bash command or a file
// tool's file_path starting with prefix (MatchPrefix: CommandHasPrefix, with
// its shell-operator refusal, or PathHasPrefix); a request_approval ask with
// exactly title (MatchTitle).
func approvalMatches(a *Ask, match RuleMatch, tool, prefix, title string) bool {
	switch match {
	case MatchTool:
		return a.ToolName != "" && a.ToolName == tool
	case MatchPrefix:
		if a.ToolName == "" || a.ToolName != tool {
			return false
		}
		field := PrefixField(tool)
		v, ok := a.InputString(field)
		switch {
		case !ok:
			return false
		case field == "command":
			return CommandHasPrefix(v, prefix)
		}
		return PathHasPrefix(v, prefix)
	case MatchTitle:
		return a.ToolName == "" && a.Title == title
	}
	return false
}

// Note is what an ask's history says of r answering it: "allowed by rule 3
// (made by alice)".
func (r *Rule) Note() string {
	verb := "allowed"
	if r.Effect == EffectDeny {
		verb = "denied"
	}
	return fmt.Sprintf("%s by rule %d (made by %s)", verb, r.ID, r.CreatedBy)
}

// Actor is who an ask answered by r is settled by: "rule 3".
func (r *Rule) Actor() string { return "rule " + strconv.FormatInt(r.ID, 10) }

// GateTool reports whether tool is a gate's (SPEC §12): "git push" or
// "gate run". A gate's approval has no deadline of its own: the gate bounds
// its own wait, and nothing else waits on it.
func GateTool(tool string) bool { return tool == "git push" || tool == "gate run" }

// PrefixField is the field of tool's input a prefix rule compares: "command"
// for Bash and for the gates' approvals (SPEC §12: "git push" carries
// "<repository> <ref>", "gate run" the command line), "file_path" for Claude
// Code's file tools, "" for any other tool, which prefix rules do not take.
func PrefixField(tool string) string {
	switch tool {
	case "Bash", "git push", "gate run":
		return "command"
	case "Read", "Write", "Edit", "MultiEdit":
		return "file_path"
	}
	return ""
}

// InputString is the string field of approval a's payload, which for a
// permission prompt is the tool's input; ok is false when there is no such
// string field.
func (a *Ask) InputString(field string) (s string, ok bool) {
	var m map[string]json.RawMessage
	if field == "" || json.Unmarshal(a.Payload, &m) != nil {
		return "", false
	}
	if raw, found := m[field]; !found || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// CommandHasPrefix reports whether a prefix rule for prefix answers the
// shell command: the command, leading blanks aside, starts with prefix at a
// word boundary (followed by nothing, a space or a tab: "npm test" is not a
// prefix of "npm testify"), and holds no shell control operator or
// substitution anywhere (ShellOperator), so "npm test; rm -rf /" or "npm test
// && curl evil" is never answered by it: such a command comes to the inbox.
// Whatever follows the prefix otherwise is allowed: "npm test -- --watch".
func CommandHasPrefix(command, prefix string) bool {
	cmd := strings.TrimLeft(command, " \t")
	if prefix == "" || !strings.HasPrefix(cmd, prefix) {
		return false
	}
	if rest := cmd[len(prefix):]; rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return false
	}
	return ShellOperator(cmd) == ""
}

// ShellOperator returns the first thing in s that makes a shell do more than
// run one command with its arguments — a command separator or control
// operator (; & | and so && ||), a redirection (> <, and so process
// substitution), a command substitution ($( or a backquote), a line break —
// or any other control character; "" when there is none. Quoting is not
// looked at: "npm test ';'" counts too, and comes to the inbox.
func ShellOperator(s string) string {
	for i, r := range s {
		switch {
		case r == ';' || r == '&' || r == '|' || r == '>' || r == '<' || r == '`':
			return string(r)
		case r == '$' && strings.HasPrefix(s[i+1:], "("):
			return "$("
		case r == '\n':
			return "a line break"
		case r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f):
			return fmt.Sprintf("U+%04X (control character)", r)
		}
	}
	return ""
}

// PathHasPrefix reports whether a prefix rule for the absolute path prefix
// (as CleanPathPrefix gives it) answers a file tool's file_path: the path is
// absolute, has no ".." element and no control character, and is prefix or
// lies under it ("/repo/src" covers "/repo/src/a.go", not "/repo/srcs/a.go").
// Paths are compared as text: a symbolic link under prefix that leads
// elsewhere is not followed.
func PathHasPrefix(p, prefix string) bool {
	if !strings.HasPrefix(p, "/") || !strings.HasPrefix(prefix, "/") || badPath(p) {
		return false
	}
	clean := path.Clean(p)
	return prefix == "/" || clean == prefix || strings.HasPrefix(clean, prefix+"/")
}

// badPath reports whether p has a ".." element or a control character.
func badPath(p string) bool {
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return true
		}
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f {
			return true
		}
	}
	return false
}

// RuleInput is what a person sends to make a rule (POST /api/rules): the
// ask it is made from, which gives its session, tool and title; how it
// matches; how it answers; how long it lives.
type RuleInput struct {
	AskID  int64      `json:"ask_id"`
	Match  RuleMatch  `json:"match"`
	Prefix string     `json:"prefix,omitempty"` // with match prefix only
	Effect RuleEffect `json:"effect"`
	RuleLife
}

// RuleLife is how long a rule lives, from now: For, a duration ("8h", "30m",
// "7d"), or ExpiresAt, an RFC 3339 time; exactly one, at most MaxRuleLife
// ahead. It is also the body of PATCH /api/rules/{id}.
type RuleLife struct {
	For       string `json:"for,omitempty"`
	ExpiresAt string `json:"expires_at,omitempty"`
}

// Validate checks the input's own fields (not the ask it names) and returns
// when the rule would expire if made at now. Errors are one EINVALID *Error
// naming each broken rule.
func (in *RuleInput) Validate(now time.Time) (time.Time, error) {
	var p problems
	if in.AskID <= 0 {
		p.add("ask_id", "required, the id of the ask the rule is made from")
	}
	switch in.Match {
	case MatchTool, MatchTitle:
		if in.Prefix != "" {
			p.add("prefix", "only with match prefix")
		}
	case MatchPrefix:
		p.line("prefix", in.Prefix, 1, MaxRulePrefixChars, "prefixes")
		if strings.TrimSpace(in.Prefix) != in.Prefix {
			p.add("prefix", "starts or ends with a blank; give the prefix as the command or path starts")
		}
	case "":
		p.add("match", "required, one of tool, prefix, title")
	default:
		p.add("match", "%q is not one of tool, prefix, title", in.Match)
	}
	switch in.Effect {
	case EffectAllow, EffectDeny:
	case "":
		p.add("effect", "required, allow or deny")
	default:
		p.add("effect", "%q is not allow or deny", in.Effect)
	}
	until := in.RuleLife.until(&p, now)
	return until, p.err()
}

// Until checks l and returns when a rule given it at now expires. Errors are
// EINVALID, naming for or expires_at.
func (l RuleLife) Until(now time.Time) (time.Time, error) {
	var p problems
	until := l.until(&p, now)
	return until, p.err()
}

func (l RuleLife) until(p *problems, now time.Time) time.Time {
	limit := now.Add(MaxRuleLife)
	var until time.Time
	switch {
	case l.For != "" && l.ExpiresAt != "":
		p.add("for", "give either for or expires_at, not both")
		return time.Time{}
	case l.For != "":
		d, err := ParseDays(l.For)
		if err != nil || d <= 0 {
			p.add("for", "%q is not a positive duration such as 8h, 30m or 7d", l.For)
			return time.Time{}
		}
		if d > MaxRuleLife {
			p.add("for", "%s is longer than a rule may live, at most %s (30d)", l.For, MaxRuleLife)
			return time.Time{}
		}
		until = now.Add(d)
	case l.ExpiresAt != "":
		t, err := time.Parse(time.RFC3339, l.ExpiresAt)
		switch {
		case err != nil:
			p.add("expires_at", "%q is not an RFC 3339 time such as 2026-03-14T18:00:00Z", l.ExpiresAt)
			return time.Time{}
		case !t.After(now):
			p.add("expires_at", "%s is not in the future", l.ExpiresAt)
			return time.Time{}
		case t.After(limit):
			p.add("expires_at", "%s is more than 30 days ahead, the most a rule may live", l.ExpiresAt)
			return time.Time{}
		}
		until = t
	default:
		p.add("for", "required: how long the rule lives, for (such as 8h, at most 30d) or expires_at (RFC 3339)")
		return time.Time{}
	}
	return until.UTC().Truncate(time.Microsecond)
}

// ParseDays parses a Go duration ("8h", "90m"), or whole days ("7d").
func ParseDays(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 || days > 100000 {
			return 0, fmt.Errorf("%q is not a number of days", s)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// CleanPathPrefix is a path prefix as a rule keeps it: absolute, cleaned
// (no trailing slash but for "/"); ok is false for a prefix that is not
// absolute or has a ".." element.
func CleanPathPrefix(prefix string) (string, bool) {
	if !strings.HasPrefix(prefix, "/") || badPath(prefix) {
		return "", false
	}
	return path.Clean(prefix), true
}

// RuleTx is what a transaction may do with rules.
type RuleTx interface {
	// CreateRule stores r and sets r.ID; ids are never handed out twice.
	// ENOTFOUND when no token is named r.Agent or r.CreatedBy. Revoking
	// either token deletes the rule.
	CreateRule(ctx context.Context, r *Rule) error
	// Rule returns the rule with the id, live or not; ENOTFOUND when there
	// is none.
	Rule(ctx context.Context, id int64) (*Rule, error)
	// FindRules returns the matching rules, oldest (lowest id) first.
	FindRules(ctx context.Context, f RuleFilter) ([]*Rule, error)
	// UpdateRule replaces the stored rule r.ID's ExpiresAt, RevokedAt and
	// RevokedBy with r's (nothing else of a rule changes); ENOTFOUND when
	// there is none.
	UpdateRule(ctx context.Context, r *Rule) error
}
