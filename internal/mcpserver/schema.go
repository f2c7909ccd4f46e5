package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/askd-dev/askd"
	"github.com/google/jsonschema-go/jsonschema"
)

// The types below are the tools' inputs, declared once: each handler decodes
// its arguments into one with askd.Decode (strict: a field not here is
// refused by its path), and clients see it as the tool's JSON Schema, with
// descriptions that teach a model when and how to use each. What the
// arguments must be beyond their shape is askd's validation, so the rules
// and their messages live in one place. A pointer field is one whose absence
// means something; its schema says what to send, not that null may be.

type schemaOption struct {
	Label       string `json:"label" jsonschema:"the choice as the person sees it: 1 to 5 words, unique within the question"`
	Description string `json:"description,omitempty" jsonschema:"what choosing this option means or implies"`
	Preview     string `json:"preview,omitempty" jsonschema:"optional preview shown beside the option: Markdown (a code block, a sketch), or an HTML fragment when the server runs with --preview-format html"`
}

type schemaQuestion struct {
	Question    string         `json:"question" jsonschema:"the complete question, ending with a question mark; answers are keyed by this exact text"`
	Header      string         `json:"header" jsonschema:"a very short label shown as a chip, at most 12 characters, e.g. Database"`
	Options     []schemaOption `json:"options" jsonschema:"2 to 4 distinct choices; the person can always type their own answer instead, so do not add an Other option"`
	MultiSelect bool           `json:"multiSelect,omitempty" jsonschema:"true when several options may be chosen together; the answer is then a list of labels"`
}

type askUserQuestionInput struct {
	Questions []schemaQuestion `json:"questions" jsonschema:"1 to 4 questions to ask at once"`
}

// questions is in's questions as askd's (nil when none were sent).
func (in *askUserQuestionInput) questions() []askd.Question {
	if in.Questions == nil {
		return nil
	}
	qs := make([]askd.Question, len(in.Questions))
	for i, q := range in.Questions {
		qs[i] = askd.Question{Question: q.Question, Header: q.Header, MultiSelect: q.MultiSelect}
		if q.Options != nil {
			qs[i].Options = make([]askd.Option, len(q.Options))
			for j, o := range q.Options {
				qs[i].Options[j] = askd.Option(o)
			}
		}
	}
	return qs
}

type decisionOption struct {
	Label       string `json:"label" jsonschema:"the choice, a few words, unique"`
	Description string `json:"description,omitempty" jsonschema:"what choosing it means"`
	// Preview is not offered (askSchema leaves it out), but read, so that
	// askd's validation says why it is refused: only on question options.
	Preview string `json:"preview,omitempty"`
}

// options is opts as askd's (nil when none were sent).
func options(opts []decisionOption) []askd.Option {
	if opts == nil {
		return nil
	}
	out := make([]askd.Option, len(opts))
	for i, o := range opts {
		out[i] = askd.Option(o)
	}
	return out
}

type askInput struct {
	Kind        askd.Kind        `json:"kind" jsonschema:"decision: you need the person to choose; action: they must do something you cannot (log in, approve a purchase); ready: work is ready for their review; blocked: you cannot go on without them"`
	Title       string           `json:"title" jsonschema:"one line saying what you need, at most 200 characters"`
	Details     string           `json:"details,omitempty" jsonschema:"optional context in plain text (at most 16 KiB): what you did, what you found, what happens next"`
	Options     []decisionOption `json:"options,omitempty" jsonschema:"decision only: 2 to 6 choices"`
	Recommended string           `json:"recommended,omitempty" jsonschema:"decision with options only: the label you recommend"`
}

type requestApprovalInput struct {
	Title        string          `json:"title" jsonschema:"what you want to do, one line, at most 200 characters"`
	Details      string          `json:"details,omitempty" jsonschema:"optional text the person reviews: a diff, a command, a plan (at most 64 KiB)"`
	Payload      json.RawMessage `json:"payload,omitempty" jsonschema:"optional JSON object of the parameters you will use; the person may edit it, and you must then use their version"`
	GraceSeconds *int            `json:"grace_seconds,omitempty" jsonschema:"how long to wait for a decision before returning pending, 0 to 120 seconds (default: the server's approval grace, 30 s)"`
}

// permissionPromptInput is askd.PermissionInput, described for the model.
type permissionPromptInput struct {
	ToolName  string          `json:"tool_name" jsonschema:"the tool Claude Code wants to run"`
	Input     json.RawMessage `json:"input" jsonschema:"the tool's input"`
	ToolUseID string          `json:"tool_use_id,omitempty" jsonschema:"the tool use's id; a retry with the same id attaches to the same request"`
}

type checkAskInput struct {
	ID          *int64 `json:"id,omitempty" jsonschema:"the ask's id; omit it to list your session's pending asks"`
	WaitSeconds *int   `json:"wait_seconds,omitempty" jsonschema:"with id: wait up to this many seconds (at most 60) for a pending ask to settle before answering"`
}

type cancelAskInput struct {
	ID *int64 `json:"id" jsonschema:"the id of your pending ask to withdraw"`
}

// rawObject is the schema of a free JSON object (payloads, a tool's input),
// which the handlers keep as the bytes sent.
var rawObject = &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{}}

// schemaFor infers T's schema (objects refuse unknown properties) and lets
// edit add the limits a model should see.
func schemaFor[T any](edit func(s *jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): rawObject,
	}})
	if err != nil {
		panic(fmt.Sprintf("schema: %v", err))
	}
	if edit != nil {
		edit(s)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

func limitText(s *jsonschema.Schema, min, max int) {
	if min > 0 {
		s.MinLength = ptr(min)
	}
	s.MaxLength = ptr(max)
}

// notNull says that a pointer field, inferred as nullable, takes its type.
func notNull(s *jsonschema.Schema) {
	for _, t := range s.Types {
		if t != "null" {
			s.Type, s.Types = t, nil
		}
	}
}

func limitItems(s *jsonschema.Schema, min, max int) {
	s.MinItems = ptr(min)
	s.MaxItems = ptr(max)
}

func questionSchema() *jsonschema.Schema {
	return schemaFor[askUserQuestionInput](func(s *jsonschema.Schema) {
		qs := s.Properties["questions"]
		limitItems(qs, 1, askd.MaxQuestions)
		q := qs.Items
		limitText(q.Properties["question"], 1, askd.MaxQuestionChars)
		limitText(q.Properties["header"], 1, askd.MaxHeaderChars)
		opts := q.Properties["options"]
		limitItems(opts, askd.MinOptions, askd.MaxOptions)
		limitText(opts.Items.Properties["label"], 1, askd.MaxLabelChars)
		limitText(opts.Items.Properties["description"], 0, askd.MaxDescChars)
	})
}

func askSchema() *jsonschema.Schema {
	return schemaFor[askInput](func(s *jsonschema.Schema) {
		s.Properties["kind"].Enum = []any{"decision", "action", "ready", "blocked"}
		limitText(s.Properties["title"], 1, askd.MaxTitleChars)
		opts := s.Properties["options"]
		delete(opts.Items.Properties, "preview")
		opts.Items.PropertyOrder = slices.DeleteFunc(opts.Items.PropertyOrder, func(p string) bool { return p == "preview" })
		limitItems(opts, askd.MinOptions, askd.MaxDecisionOptions)
		limitText(opts.Items.Properties["label"], 1, askd.MaxLabelChars)
		limitText(opts.Items.Properties["description"], 0, askd.MaxDescChars)
	})
}

func approvalSchema() *jsonschema.Schema {
	return schemaFor[requestApprovalInput](func(s *jsonschema.Schema) {
		limitText(s.Properties["title"], 1, askd.MaxTitleChars)
		g := s.Properties["grace_seconds"]
		notNull(g)
		g.Minimum, g.Maximum = ptr(0.0), ptr(float64(askd.MaxGraceSeconds))
	})
}

func permissionSchema() *jsonschema.Schema {
	return schemaFor[permissionPromptInput](nil)
}

func checkSchema() *jsonschema.Schema {
	return schemaFor[checkAskInput](func(s *jsonschema.Schema) {
		notNull(s.Properties["id"])
		s.Properties["id"].Minimum = ptr(1.0)
		w := s.Properties["wait_seconds"]
		notNull(w)
		w.Minimum, w.Maximum = ptr(0.0), ptr(float64(maxCheckWait))
	})
}

func cancelSchema() *jsonschema.Schema {
	return schemaFor[cancelAskInput](func(s *jsonschema.Schema) {
		notNull(s.Properties["id"])
		s.Properties["id"].Minimum = ptr(1.0)
	})
}
