package askd

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// A Policy is an admin's demand that some approvals need more than one
// person (SPEC §11, "Quorum"): an approval it covers is decided only when
// Approvals distinct people have approved it; one rejection decides it at
// once. It matches as a rule does (Match, Tool, Prefix, Title), for every
// agent, for one agent token (Agent), or for the agents a team owns (Team).
// With ExcludeOwner the agent's owner, when a person, may not approve.
type Policy struct {
	ID           int64     `json:"id"`
	Match        RuleMatch `json:"match"`
	Tool         string    `json:"tool,omitempty"`
	Prefix       string    `json:"prefix,omitempty"`
	Title        string    `json:"title,omitempty"`
	Agent        string    `json:"agent,omitempty"`
	Team         string    `json:"team,omitempty"`
	Approvals    int       `json:"approvals"`
	ExcludeOwner bool      `json:"exclude_owner"`
	CreatedBy    string    `json:"created_by"`
	CreatedAt    time.Time `json:"created_at"`
}

// Limits of policies: a quorum is 2 to 5 people.
const (
	MinApprovals = 2
	MaxApprovals = 5
)

// PolicyInput is the body of POST /api/policies.
type PolicyInput struct {
	Match        RuleMatch `json:"match"`
	Tool         string    `json:"tool,omitempty"`
	Prefix       string    `json:"prefix,omitempty"`
	Title        string    `json:"title,omitempty"`
	Agent        string    `json:"agent,omitempty"`
	Team         string    `json:"team,omitempty"`
	Approvals    int       `json:"approvals"`
	ExcludeOwner bool      `json:"exclude_owner,omitempty"`
}

// Policy checks in and returns the policy it makes, without its id, maker
// and time. A path prefix is kept cleaned (CleanPathPrefix). Errors are one
// EINVALID *Error naming each broken field.
func (in *PolicyInput) Policy() (*Policy, error) {
	var p problems
	pol := &Policy{Match: in.Match, Tool: in.Tool, Prefix: in.Prefix, Title: in.Title,
		Agent: in.Agent, Team: in.Team, Approvals: in.Approvals, ExcludeOwner: in.ExcludeOwner}
	only := func(field, value string, match RuleMatch) {
		if value != "" && in.Match != match {
			p.add(field, "only with match %s", match)
		}
	}
	switch in.Match {
	case MatchTool, MatchPrefix:
		p.ident("tool", in.Tool, 1, MaxToolNameChars, "tool names")
		only("title", in.Title, MatchTitle)
		if in.Match == MatchTool {
			only("prefix", in.Prefix, MatchPrefix)
			break
		}
		pol.Prefix = in.policyPrefix(&p)
	case MatchTitle:
		p.line("title", in.Title, 1, MaxTitleChars, "titles")
		only("tool", in.Tool, MatchTool)
		only("prefix", in.Prefix, MatchPrefix)
	case "":
		p.add("match", "required, one of tool, prefix, title")
	default:
		p.add("match", "%q is not one of tool, prefix, title", in.Match)
	}
	switch {
	case in.Agent != "" && in.Team != "":
		p.add("team", "give agent or team, not both")
	case in.Agent != "":
		p.ident("agent", in.Agent, 1, MaxNameChars, "names")
	case in.Team != "":
		p.ident("team", in.Team, 1, MaxNameChars, "names")
	}
	if in.Approvals < MinApprovals || in.Approvals > MaxApprovals {
		p.add("approvals", "%d is not a number of people from %d to %d", in.Approvals, MinApprovals, MaxApprovals)
	}
	return pol, p.err()
}

// policyPrefix checks a prefix policy's prefix as a prefix rule's is
// checked, and returns it as the policy keeps it.
func (in *PolicyInput) policyPrefix(p *problems) string {
	switch PrefixField(in.Tool) {
	case "command":
		p.line("prefix", in.Prefix, 1, MaxRulePrefixChars, "prefixes")
		if op := ShellOperator(in.Prefix); op != "" {
			p.add("prefix", "contains %s; a prefix is one command and its first arguments, with no shell control operator, redirection or substitution", op)
		}
		if strings.TrimSpace(in.Prefix) != in.Prefix {
			p.add("prefix", "starts or ends with a blank; give the prefix as the command starts")
		}
		return in.Prefix
	case "file_path":
		clean, ok := CleanPathPrefix(in.Prefix)
		if !ok {
			p.add("prefix", "%q is not an absolute path without \"..\" (such as /srv/app/src)", in.Prefix)
		}
		return clean
	}
	p.add("tool", "prefix policies are for the command of Bash, git push and gate run and the file_path of Read, Write, Edit and MultiEdit, not %q: use match tool", in.Tool)
	return in.Prefix
}

// Covers reports whether p covers approval a: a is of p's agent (any, when
// p names none), or its agent is owned by p's team, and a is what p compares
// by, exactly as a rule of the same match compares.
func (p *Policy) Covers(a *Ask) bool {
	switch {
	case a.Kind != KindApproval:
		return false
	case p.Agent != "" && a.Agent != p.Agent:
		return false
	case p.Team != "" && a.Owner != "team:"+p.Team:
		return false
	}
	return approvalMatches(a, p.Match, p.Tool, p.Prefix, p.Title)
}

// Actor names p in history notes: "policy 3".
func (p *Policy) Actor() string { return "policy " + strconv.FormatInt(p.ID, 10) }

// An Approval is one person's approval of an approval a policy covers.
// Payload is set on the first approval of a count that an edit started
// again: that person's edited payload, which the others then approve, and
// the decision's once the count is full (modified). The ask's own Payload
// stays the agent's.
type Approval struct {
	By      string          `json:"by"`
	At      time.Time       `json:"at"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Approving is the payload the people approving a are approving: the
// edited one when an edit started the count, else the agent's.
func (a *Ask) Approving() json.RawMessage {
	if len(a.Approvals) > 0 && a.Approvals[0].Payload != nil {
		return a.Approvals[0].Payload
	}
	return a.Payload
}

// ApprovedBy reports whether person has approved a already (in its current
// count).
func (a *Ask) ApprovedBy(person string) bool {
	for _, ap := range a.Approvals {
		if ap.By == person {
			return true
		}
	}
	return false
}

// PolicyTx is what a transaction may do with policies.
type PolicyTx interface {
	// CreatePolicy stores p and sets p.ID; ids are never handed out twice.
	CreatePolicy(ctx context.Context, p *Policy) error
	// Policies returns every policy, oldest (lowest id) first.
	Policies(ctx context.Context) ([]*Policy, error)
	// DeletePolicy removes policy id; ENOTFOUND when there is none. Asks
	// it covered keep the quorum they were made with.
	DeletePolicy(ctx context.Context, id int64) error
}
