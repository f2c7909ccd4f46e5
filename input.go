package askd

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/askd-dev/askd/strictjson"
)

// AskInput is what an agent sends to create an ask: the body of POST /api/asks,
// and, without Kind, the arguments of the MCP tools (SPEC §2.1–2.3). Which fields
// are allowed depends on Kind; Validate refuses the others by name.
type AskInput struct {
	Kind Kind `json:"kind"`

	// question
	Questions []Question `json:"questions,omitempty"`

	// attention asks and approvals
	Title   string `json:"title,omitempty"`
	Details string `json:"details,omitempty"`

	// decision
	Options     []Option `json:"options,omitempty"`
	Recommended string   `json:"recommended,omitempty"`

	// approval
	Payload      json.RawMessage `json:"payload,omitempty"`
	GraceSeconds *int            `json:"grace_seconds,omitempty"`
	ToolName     string          `json:"tool_name,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`

	// Key makes an approval keyed (SPEC §12): the same agent token asking
	// with the same key, from any session, gets the same ask back whatever
	// its status; different content under the key is ECONFLICT naming it.
	// At most MaxGateKeyChars characters, no control characters.
	Key string `json:"key,omitempty"`
	// Replaces, with Key, cancels as replaced the token's pending keyed
	// approvals whose key starts with it (and is not Key): a newer push of
	// a ref replaces the older one's pending ask.
	Replaces string `json:"replaces,omitempty"`
	// OneCall, with Key, asks that one approval answer one call (SPEC §14,
	// the MCP gate): the same key gets the approval back while it is
	// pending, or decided and not yet told; once told, the same key makes a
	// new approval. A key is asked one way: with one_call or without.
	OneCall bool `json:"one_call,omitempty"`

	// form (SPEC §9): Title is the message; Schema (form mode) or URL (url
	// mode), never both.
	Source string          `json:"source,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"`
	URL    string          `json:"url,omitempty"`
}

// PermissionInput is the input of Claude Code's permission prompt tool.
type PermissionInput struct {
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
}

// Validate checks the input against every rule of its kind and returns one
// EINVALID *Error naming each broken rule, or nil.
func (in *AskInput) Validate(previewHTML bool) error {
	var p problems
	if !in.Kind.Valid() {
		if in.Kind == "" {
			p.add("kind", "required, one of question, decision, action, ready, blocked, approval, form")
		} else {
			p.add("kind", "%q is not one of question, decision, action, ready, blocked, approval, form", in.Kind)
		}
		return p.err()
	}
	only := func(field string, set bool, allowed string) {
		if set {
			p.add(field, "only on %s asks", allowed)
		}
	}
	switch {
	case in.Kind == KindQuestion:
		validateQuestions(&p, in.Questions, previewHTML)
		only("title", in.Title != "", "attention, approval and form")
		only("details", in.Details != "", "attention and approval")
	case in.Kind.IsAttention():
		p.line("title", in.Title, 1, MaxTitleChars, "titles")
		p.blob("details", in.Details, MaxDetailsBytes)
		only("questions", in.Questions != nil, "question")
	case in.Kind == KindApproval:
		p.line("title", in.Title, 1, MaxTitleChars, "titles")
		p.blob("details", in.Details, MaxApprovalDetails)
		only("questions", in.Questions != nil, "question")
	case in.Kind == KindForm:
		p.text("title", in.Title, 1, MaxFormTitleChars)
		only("details", in.Details != "", "attention and approval")
		only("questions", in.Questions != nil, "question")
	}
	switch in.Kind {
	case KindForm:
		validateForm(&p, in)
	case KindApproval:
		// The MCP server whose gate asks (SPEC §14).
		p.line("source", in.Source, 0, MaxSourceChars, "source names")
	default:
		only("source", in.Source != "", "form and approval")
	}
	if in.Kind != KindForm {
		only("schema", in.Schema != nil, "form")
		only("url", in.URL != "", "form")
	}
	if in.Kind == KindDecision {
		if in.Options != nil {
			p.count("options", len(in.Options), MinOptions, MaxDecisionOptions)
			validateOptions(&p, "options", in.Options, false)
		}
		switch {
		case in.Recommended == "":
		case in.Options == nil:
			p.add("recommended", "only with options")
		case !hasLabel(in.Options, in.Recommended):
			p.ident("recommended", in.Recommended, 0, MaxLabelChars, "labels")
			p.add("recommended", "%q is not one of the options' labels", in.Recommended)
		}
	} else {
		only("options", in.Options != nil, "decision")
		only("recommended", in.Recommended != "", "decision")
	}
	if in.Kind == KindApproval {
		if in.Payload != nil {
			validateObject(&p, "payload", in.Payload)
		}
		if in.GraceSeconds != nil && (*in.GraceSeconds < 0 || *in.GraceSeconds > MaxGraceSeconds) {
			p.add("grace_seconds", "%d, must be 0 to %d", *in.GraceSeconds, MaxGraceSeconds)
		}
		p.ident("tool_name", in.ToolName, 0, MaxToolNameChars, "tool names")
		p.ident("tool_use_id", in.ToolUseID, 0, MaxToolUseIDChars, "tool use ids")
		p.ident("key", in.Key, 0, MaxGateKeyChars, "keys")
		p.ident("replaces", in.Replaces, 0, MaxGateKeyChars, "keys")
		switch {
		case in.Replaces != "" && in.Key == "":
			p.add("replaces", "only with key")
		case in.Key != "" && in.ToolUseID != "":
			p.add("key", "not with tool_use_id: a tool call re-attaches by its tool use id")
		}
		switch {
		case in.OneCall && in.Key == "":
			p.add("one_call", "only with key")
		case in.OneCall && in.Replaces != "":
			p.add("replaces", "not with one_call: a one-call approval is replaced by the next once told")
		}
	} else {
		only("payload", in.Payload != nil, "approval")
		only("grace_seconds", in.GraceSeconds != nil, "approval")
		only("tool_name", in.ToolName != "", "approval")
		only("tool_use_id", in.ToolUseID != "", "approval")
		only("key", in.Key != "", "approval")
		only("replaces", in.Replaces != "", "approval")
		only("one_call", in.OneCall, "approval")
	}
	return p.err()
}

// Validate checks a permission prompt's input.
func (in *PermissionInput) Validate() error {
	var p problems
	p.ident("tool_name", in.ToolName, 1, MaxToolNameChars, "tool names")
	p.ident("tool_use_id", in.ToolUseID, 0, MaxToolUseIDChars, "tool use ids")
	if in.Input == nil {
		p.add("input", "required, a JSON object")
	} else {
		validateObject(&p, "input", in.Input)
	}
	return p.err()
}

// validateForm checks a form ask's source and its schema or URL (SPEC §9).
func validateForm(p *problems, in *AskInput) {
	p.line("source", in.Source, 0, MaxSourceChars, "source names")
	switch {
	case in.Schema != nil && in.URL != "":
		p.add("url", "only without schema: a form ask is a form (schema) or a link to open (url), not both")
	case in.Schema != nil:
		if len(in.Schema) > MaxFormSchemaBytes {
			p.size("schema", len(in.Schema), MaxFormSchemaBytes)
		} else {
			_, sp := parseKept(in.Schema)
			p.merge(sp)
		}
	case in.URL != "":
		p.formURL("url", in.URL)
	default:
		p.add("schema", "required: a form ask has a schema (form mode) or a url (url mode)")
	}
}

// formURL checks a url-mode form's URL: http or https, with a host, at most
// MaxFormURLBytes, no spaces or control characters. askd never fetches it.
func (p *problems) formURL(path, s string) {
	if len(s) > MaxFormURLBytes {
		p.size(path, len(s), MaxFormURLBytes)
		return
	}
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f || unicode.IsSpace(r) }) {
		p.add(path, "contains a space or a control character; a URL has neither")
		return
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		p.add(path, "not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		p.add(path, "must start with https:// or http://")
	case u.Host == "":
		p.add(path, "has no host")
	}
}

func validateQuestions(p *problems, qs []Question, previewHTML bool) {
	p.count("questions", len(qs), 1, MaxQuestions)
	seen := map[string]int{}
	for i, q := range qs {
		path := fmt.Sprintf("questions[%d]", i)
		p.text(path+".question", q.Question, 1, MaxQuestionChars)
		if j, dup := seen[q.Question]; dup && q.Question != "" {
			p.add(path+".question", "same text as questions[%d]; answers are keyed by the text, so each must differ", j)
		} else {
			seen[q.Question] = i
		}
		p.line(path+".header", q.Header, 1, MaxHeaderChars, "headers")
		p.count(path+".options", len(q.Options), MinOptions, MaxOptions)
		validateOptions(p, path+".options", q.Options, true)
	}
}

func validateOptions(p *problems, path string, opts []Option, previews bool) {
	seen := map[string]int{}
	for i, o := range opts {
		op := fmt.Sprintf("%s[%d]", path, i)
		p.ident(op+".label", o.Label, 1, MaxLabelChars, "labels")
		if j, dup := seen[o.Label]; dup && o.Label != "" {
			p.add(op+".label", "same label as %s[%d]; labels must differ", path, j)
		} else {
			seen[o.Label] = i
		}
		p.text(op+".description", o.Description, 0, MaxDescChars)
		if o.Preview != "" {
			if !previews {
				p.add(op+".preview", "only on question options")
			}
			p.blob(op+".preview", o.Preview, MaxPreviewBytes)
		}
	}
}

func validateObject(p *problems, path string, raw json.RawMessage) {
	if len(raw) > MaxPayloadBytes {
		p.size(path, len(raw), MaxPayloadBytes)
		return
	}
	// Values stay raw: decoding them would refuse valid JSON such as 1e400,
	// which float64 cannot hold.
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		p.add(path, "must be a JSON object")
		return
	}
	// A body through Decode is checked already; this is for Go callers.
	if sub, rule := strictjson.Check(raw); rule != "" {
		if !strings.HasPrefix(sub, "[") {
			sub = "." + sub
		}
		p.add(path+sub, "%s", rule)
	}
}

func hasLabel(opts []Option, label string) bool {
	for _, o := range opts {
		if o.Label == label {
			return true
		}
	}
	return false
}
