package askd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/askd-dev/askd/strictjson"
)

// A form ask's schema is MCP's restricted elicitation schema (SPEC §9): an
// object of at most MaxFormFields flat properties, each a string, a number
// or integer, a boolean, a single-select enum (enum, oneOf of {const, title},
// or legacy enumNames) or a multi-select array (items.enum or items.anyOf of
// {const, title}); title, description and default on any of them; required.
// ParseFormSchema refuses anything else, naming the property and the rule;
// FormSchema.Check checks a person's answer against it the same way.
//
// Checked by hand rather than with a JSON Schema library: the schema is a
// small fixed subset, every refusal must name the field and the rule in the
// person's words ("count: 142 is above the maximum 100"), and a general
// validator (google/jsonschema-go, already a dependency through the MCP SDK)
// would accept the rest of JSON Schema that askd must refuse.

// MaxFormFields is the most properties a form's schema may have;
// MaxFormOptions the most choices of one field. Names, titles and choices
// follow the rules of labels (MaxLabelChars, one line, no invisible
// characters), descriptions those of option descriptions.
const (
	MaxFormFields   = 20
	MaxFormOptions  = 100
	maxPatternBytes = 1000
)

// FormSchema is a parsed form schema, its fields in the order given.
type FormSchema struct {
	Fields []FormField
}

// FormField is one property of a form.
type FormField struct {
	Name        string
	Type        FieldType
	Title       string
	Description string
	Required    bool
	Default     any // nil: none; else the JSON value (string, float64, bool, []any)

	MinLength, MaxLength *int   // string
	Format               string // string: email, uri, date, date-time
	Pattern              *regexp.Regexp
	Minimum, Maximum     *float64     // number, integer
	Options              []FormOption // enum, multi: the values and their titles
	MinItems, MaxItems   *int         // multi
}

// FieldType is the control a form field needs.
type FieldType string

// The field types of a form.
const (
	FieldString  FieldType = "string"
	FieldNumber  FieldType = "number"
	FieldInteger FieldType = "integer"
	FieldBoolean FieldType = "boolean"
	FieldEnum    FieldType = "enum"  // one of Options
	FieldMulti   FieldType = "multi" // several of Options
)

// FormOption is one value of an enum or multi-select field: Const is what
// the answer holds, Title what a person reads ("" reads as Const).
type FormOption struct{ Const, Title string }

// rfc3339 is RFC 3339's date-time, which time.Parse's RFC3339 layout reads
// more loosely (a one-digit hour, a comma before the fraction, an offset of
// +24:60): an MCP server may hold the person's answer to the RFC.
var rfc3339 = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$`)

// formats are the string formats a form may ask for.
var formats = []string{"email", "uri", "date", "date-time"}

// ParseFormSchema parses and checks a form schema. Errors are one EINVALID
// naming each broken rule under "schema." (schema.properties.NAME.maximum:
// ...).
//
// The schema returned is shared (parsed schemas are kept: see schemas), so
// it must not be changed.
func ParseFormSchema(raw json.RawMessage) (*FormSchema, error) {
	s, p := parseKept(raw)
	if err := p.err(); err != nil {
		return nil, err
	}
	return s, nil
}

// parseKept is parseFormSchema through schemas.
func parseKept(raw json.RawMessage) (*FormSchema, problems) {
	if s := schemas.get(raw); s != nil {
		return s, problems{}
	}
	s, p := parseFormSchema(raw)
	if len(p.list) == 0 {
		schemas.put(raw, s)
	}
	return s, p
}

// schemas keeps the schemas parsed last, by their text: a form's schema is
// parsed when the form is asked and again when it is answered, and an MCP
// server asks the same form again and again. Parsing took 40 µs of a form's
// create + answer cycle each time (docs/benchmarks.md). It holds at most
// schemaCacheBytes of schema text and forgets them all when full.
var schemas = &schemaCache{m: map[string]*FormSchema{}}

const schemaCacheBytes = 1 << 20

type schemaCache struct {
	mu    sync.Mutex
	m     map[string]*FormSchema
	bytes int
}

func (c *schemaCache) get(raw json.RawMessage) *FormSchema {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[string(raw)]
}

func (c *schemaCache) put(raw json.RawMessage, s *FormSchema) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bytes+len(raw) > schemaCacheBytes {
		clear(c.m)
		c.bytes = 0
	}
	c.m[string(raw)] = s
	c.bytes += len(raw)
}

// parseFormSchema is ParseFormSchema, its problems kept apart for an input
// that has more fields (AskInput.Validate).
func parseFormSchema(raw json.RawMessage) (*FormSchema, problems) {
	var p problems
	top, order, err := strictjson.Object(raw)
	if err != nil {
		p.add("schema", "%s", err)
		return nil, p
	}
	for _, k := range order {
		if !slices.Contains([]string{"type", "properties", "required", "$schema", "title", "description"}, k) {
			p.add(fmt.Sprintf("schema.%s", k), "not allowed in a form's schema (MCP's restricted schema has type, properties and required)")
		}
	}
	if t, ok := top["type"]; !ok || string(bytes.TrimSpace(t)) != `"object"` {
		p.add("schema.type", `must be "object"`)
	}
	props, names, err := strictjson.Members(top["properties"])
	switch {
	case top["properties"] == nil:
		p.add("schema.properties", "required, an object of the form's fields")
	case err != nil:
		p.add("schema.properties", "%s", err)
	case len(names) == 0:
		p.add("schema.properties", "a form needs at least one field")
	case len(names) > MaxFormFields:
		p.add("schema.properties", "%d fields, at most %d", len(names), MaxFormFields)
	}
	s := &FormSchema{}
	for _, name := range names {
		f, fp := parseField(name, props[name])
		p.merge(fp)
		s.Fields = append(s.Fields, f)
	}
	if raw := top["required"]; raw != nil {
		var req []string
		if json.Unmarshal(raw, &req) != nil {
			p.add("schema.required", "must be a list of field names")
		}
		for _, r := range req {
			i := slices.IndexFunc(s.Fields, func(f FormField) bool { return f.Name == r })
			if i < 0 {
				p.add("schema.required", "%q is not one of the form's fields", r)
				continue
			}
			s.Fields[i].Required = true
		}
	}
	return s, p
}

// fieldKeys are the keys a property may hold.
var fieldKeys = []string{"type", "title", "description", "default", "minLength", "maxLength", "format", "pattern",
	"minimum", "maximum", "enum", "enumNames", "oneOf", "items", "minItems", "maxItems"}

// parseField parses property name of a form's schema.
func parseField(name string, raw json.RawMessage) (FormField, problems) {
	var p problems
	at := "schema.properties." + name
	f := FormField{Name: name}
	m, keys, err := strictjson.Members(raw)
	if err != nil {
		p.add(at, "%s", err)
		return f, p
	}
	for _, k := range keys {
		if !slices.Contains(fieldKeys, k) {
			p.add(fmt.Sprintf("%s.%s", at, k), "not allowed in a form field (MCP's restricted schema: flat strings, numbers, booleans and enums)")
		}
	}
	str := func(k string) string {
		var v string
		if m[k] != nil && json.Unmarshal(m[k], &v) != nil {
			p.add(fmt.Sprintf("%s.%s", at, k), "must be a string")
		}
		return v
	}
	count := func(k string) *int {
		if m[k] == nil {
			return nil
		}
		var v float64
		if json.Unmarshal(m[k], &v) != nil || v < 0 || v != math.Trunc(v) || v > math.MaxInt32 {
			p.add(fmt.Sprintf("%s.%s", at, k), "must be a whole number, 0 or more")
			return nil
		}
		n := int(v)
		return &n
	}
	number := func(k string) *float64 {
		if m[k] == nil {
			return nil
		}
		var v float64
		if json.Unmarshal(m[k], &v) != nil {
			p.add(fmt.Sprintf("%s.%s", at, k), "must be a number")
			return nil
		}
		return &v
	}
	f.Title, f.Description = str("title"), str("description")
	p.ident(at, name, 1, MaxLabelChars, "field names")
	p.line(at+".title", f.Title, 0, MaxLabelChars, "titles")
	p.text(at+".description", f.Description, 0, MaxDescChars)
	typ := str("type")
	only := func(t string, ks ...string) {
		for _, k := range ks {
			if m[k] != nil {
				p.add(fmt.Sprintf("%s.%s", at, k), "not allowed on a %s field", t)
			}
		}
	}
	switch {
	case typ == "string" && (m["enum"] != nil || m["oneOf"] != nil):
		f.Type = FieldEnum
		f.Options = p.options(at, m)
		only("single-select", "minLength", "maxLength", "format", "pattern", "minimum", "maximum", "items", "minItems", "maxItems")
	case typ == "string":
		f.Type = FieldString
		f.MinLength, f.MaxLength = count("minLength"), count("maxLength")
		if f.MinLength != nil && f.MaxLength != nil && *f.MinLength > *f.MaxLength {
			p.add(at+".minLength", "%d is above maxLength %d", *f.MinLength, *f.MaxLength)
		}
		if f.Format = str("format"); f.Format != "" && !slices.Contains(formats, f.Format) {
			p.add(at+".format", "%q is not one of %s", f.Format, strings.Join(formats, ", "))
		}
		if pat := str("pattern"); len(pat) > maxPatternBytes {
			p.add(at+".pattern", "%d bytes, at most %d", len(pat), maxPatternBytes)
		} else if pat != "" {
			re, err := regexp.Compile(pat)
			if err != nil {
				p.add(at+".pattern", "not a regular expression askd can check (%v)", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			}
			f.Pattern = re
		}
		only("string", "minimum", "maximum", "enumNames", "items", "minItems", "maxItems")
	case typ == "number" || typ == "integer":
		f.Type = FieldType(typ)
		f.Minimum, f.Maximum = number("minimum"), number("maximum")
		if f.Minimum != nil && f.Maximum != nil && *f.Minimum > *f.Maximum {
			p.add(at+".minimum", "%v is above maximum %v", *f.Minimum, *f.Maximum)
		}
		only(typ, "minLength", "maxLength", "format", "pattern", "enum", "enumNames", "oneOf", "items", "minItems", "maxItems")
	case typ == "boolean":
		f.Type = FieldBoolean
		only("boolean", "minLength", "maxLength", "format", "pattern", "minimum", "maximum", "enum", "enumNames", "oneOf", "items", "minItems", "maxItems")
	case typ == "array":
		f.Type = FieldMulti
		items, _, err := strictjson.Members(m["items"])
		if m["items"] == nil || err != nil {
			p.add(at+".items", "required on a multi-select field: an object with enum or anyOf")
		} else {
			f.Options = p.options(at+".items", map[string]json.RawMessage{"enum": items["enum"], "oneOf": items["anyOf"]})
		}
		f.MinItems, f.MaxItems = count("minItems"), count("maxItems")
		if f.MinItems != nil && f.MaxItems != nil && *f.MinItems > *f.MaxItems {
			p.add(at+".minItems", "%d is above maxItems %d", *f.MinItems, *f.MaxItems)
		}
		only("multi-select", "minLength", "maxLength", "format", "pattern", "minimum", "maximum", "enum", "enumNames", "oneOf")
	default:
		p.add(at+".type", "%q is not one of string, number, integer, boolean, array", typ)
	}
	if raw := m["default"]; raw != nil && len(p.list) == 0 {
		var v any
		_ = json.Unmarshal(raw, &v)
		if why := f.check(v); why != "" {
			p.add(at+".default", "%s", why)
		} else {
			f.Default = v
		}
	}
	return f, p
}

// options reads an enum's values: enum (with enumNames as their titles) or
// oneOf of {const, title} (for a multi-select's items, anyOf, passed as
// oneOf).
func (p *problems) options(at string, m map[string]json.RawMessage) []FormOption {
	var out []FormOption
	switch {
	case m["enum"] != nil:
		var vals, names []string
		if json.Unmarshal(m["enum"], &vals) != nil || len(vals) == 0 {
			p.add(at+".enum", "must be a list of strings, at least one")
			return nil
		}
		if m["enumNames"] != nil && (json.Unmarshal(m["enumNames"], &names) != nil || len(names) != len(vals)) {
			p.add(at+".enumNames", "must be a list of %d strings, one per enum value", len(vals))
			names = nil
		}
		for i, v := range vals {
			o := FormOption{Const: v}
			if names != nil {
				o.Title = names[i]
			}
			out = append(out, o)
		}
	case m["oneOf"] != nil:
		var alts []struct {
			Const *string `json:"const"`
			Title string  `json:"title"`
		}
		if json.Unmarshal(m["oneOf"], &alts) != nil || len(alts) == 0 {
			p.add(at, "oneOf / anyOf must be a list of {const, title}, at least one")
			return nil
		}
		for i, a := range alts {
			if a.Const == nil {
				p.add(at, "choice %d has no const string", i+1)
				continue
			}
			out = append(out, FormOption{Const: *a.Const, Title: a.Title})
		}
	default:
		p.add(at, "needs enum or anyOf, the values to choose from")
	}
	if len(out) > MaxFormOptions {
		p.add(at, "%d choices, at most %d", len(out), MaxFormOptions)
		return nil
	}
	seen := map[string]bool{}
	for i, o := range out {
		if seen[o.Const] {
			p.add(at, "the value %q is there twice", o.Const)
		}
		seen[o.Const] = true
		p.ident(fmt.Sprintf("%s choice %d's value", at, i+1), o.Const, 1, MaxLabelChars, "choice values")
		p.ident(fmt.Sprintf("%s choice %d's title", at, i+1), o.Title, 0, MaxLabelChars, "choice titles")
	}
	return out
}

// Check checks a person's answer (the form's content) against the schema:
// every required field given, no field the form lacks, each value of its
// field's type and within its rules. Errors are one EINVALID naming each
// problem by field ("count: 142 is above the maximum 100").
func (s *FormSchema) Check(content map[string]any) error { return s.check(content).err() }

func (s *FormSchema) check(content map[string]any) problems {
	var p problems
	for name := range content {
		if s.Field(name) == nil {
			p.add(name, "not a field of this form%s", s.unknownHint(name))
		}
	}
	for _, f := range s.Fields {
		v, ok := content[f.Name]
		// A required text left empty is not given.
		if !ok || v == nil || f.Required && v == "" && f.Type == FieldString {
			if f.Required {
				p.add(f.Name, "required")
			}
			continue
		}
		if why := f.check(v); why != "" {
			p.add(f.Name, "%s", why)
		}
	}
	slices.Sort(p.list)
	return p
}

// Field is the form's field named name, nil if it has none.
func (s *FormSchema) Field(name string) *FormField {
	for i := range s.Fields {
		if s.Fields[i].Name == name {
			return &s.Fields[i]
		}
	}
	return nil
}

// unknownHint says which field a name the form lacks was likely meant to be
// (" (did you mean \"color\"?)"), else which fields there are.
func (s *FormSchema) unknownHint(name string) string {
	cands := make([]FormOption, len(s.Fields))
	names := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		cands[i], names[i] = FormOption{Const: f.Name, Title: f.Title}, f.Name
	}
	if h := didYouMean(name, cands); h != "" {
		return h
	}
	return " (its fields: " + strings.Join(names, ", ") + ")"
}

// Defaults returns the fields' defaults, to pre-fill a form.
func (s *FormSchema) Defaults() map[string]any {
	out := map[string]any{}
	for _, f := range s.Fields {
		if f.Default != nil {
			out[f.Name] = f.Default
		}
	}
	return out
}

// check says what is wrong with v as f's value, "" if nothing.
func (f *FormField) check(v any) string {
	switch f.Type {
	case FieldString:
		s, ok := v.(string)
		if !ok {
			return "must be text, not " + quoteValue(v)
		}
		return f.checkString(s)
	case FieldNumber, FieldInteger:
		n, ok := v.(float64)
		if !ok {
			return "must be a number, not " + notText(v)
		}
		if f.Type == FieldInteger && n != math.Trunc(n) {
			return fmt.Sprintf("%v is not a whole number", n)
		}
		if f.Minimum != nil && n < *f.Minimum {
			return fmt.Sprintf("%v is below the minimum %v", n, *f.Minimum)
		}
		if f.Maximum != nil && n > *f.Maximum {
			return fmt.Sprintf("%v is above the maximum %v", n, *f.Maximum)
		}
	case FieldBoolean:
		if _, ok := v.(bool); !ok {
			return "must be true or false, not " + notText(v)
		}
	case FieldEnum:
		s, ok := v.(string)
		if !ok || !f.hasOption(s) {
			return f.notAnOption(v)
		}
	case FieldMulti:
		list, ok := v.([]any)
		if !ok {
			return "must be a list of choices, not " + notText(v)
		}
		seen := map[string]bool{}
		for _, e := range list {
			s, ok := e.(string)
			if !ok || !f.hasOption(s) {
				return f.notAnOption(e)
			}
			if seen[s] {
				return fmt.Sprintf("%q is chosen twice", s)
			}
			seen[s] = true
		}
		if f.MinItems != nil && len(list) < *f.MinItems {
			return fmt.Sprintf("%d chosen, at least %d", len(list), *f.MinItems)
		}
		if f.MaxItems != nil && len(list) > *f.MaxItems {
			return fmt.Sprintf("%d chosen, at most %d", len(list), *f.MaxItems)
		}
	}
	return ""
}

// checkString says what is wrong with s as f's text, "" if nothing.
func (f *FormField) checkString(s string) string {
	n := utf8.RuneCountInString(s)
	if f.MinLength != nil && n < *f.MinLength {
		return fmt.Sprintf("%s, at least %d", plural(n, "character"), *f.MinLength)
	}
	if f.MaxLength != nil && n > *f.MaxLength {
		return fmt.Sprintf("%s, at most %d", plural(n, "character"), *f.MaxLength)
	}
	switch f.Format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return fmt.Sprintf("%q is not an e-mail address", s)
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" || strings.ContainsAny(s, " \t\n") {
			return fmt.Sprintf("%q is not a URI (such as https://example.com/x)", s)
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return fmt.Sprintf("%q is not a date such as 2026-12-31", s)
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil || !rfc3339.MatchString(s) {
			return fmt.Sprintf("%q is not a date and time such as 2026-12-31T09:30:00Z", s)
		}
	}
	if f.Pattern != nil && !f.Pattern.MatchString(s) {
		return fmt.Sprintf("%q does not match the pattern %s", s, f.Pattern)
	}
	return ""
}

func (f *FormField) hasOption(s string) bool {
	return slices.ContainsFunc(f.Options, func(o FormOption) bool { return o.Const == s })
}

func (f *FormField) optionList() string {
	var vals []string
	for _, o := range f.Options {
		vals = append(vals, o.Const)
	}
	return strings.Join(vals, ", ")
}

// notAnOption says that v is none of f's options, naming the one it was
// likely meant to be.
func (f *FormField) notAnOption(v any) string {
	why := fmt.Sprintf("%s is not one of %s", quoteValue(v), f.optionList())
	if s, ok := v.(string); ok {
		why += didYouMean(s, f.Options)
	}
	return why
}

// didYouMean names the candidates' Const that s was likely meant to be,
// as " (did you mean \"green\"?)", or "" when none is close: the same
// letters in another case or spacing, a Title typed instead of its Const,
// or a slip of a letter or two (at most one per three letters of what was
// meant, so "m" is no near miss of "s").
func didYouMean(s string, cands []FormOption) string {
	best, near := -1, []string(nil)
	fs := foldName(s)
	for _, c := range cands {
		d := -1
		for _, target := range []string{c.Const, c.Title} {
			ft := foldName(target)
			if target == "" || ft == "" {
				continue
			}
			n := editDistance(fs, ft)
			if n > 2 || 3*n > utf8.RuneCountInString(ft) {
				continue
			}
			if d < 0 || n < d {
				d = n
			}
		}
		if d < 0 || best >= 0 && d > best {
			continue
		}
		if d < best || best < 0 {
			best, near = d, nil
		}
		name := fmt.Sprintf("%q", c.Const)
		if c.Title != "" && !strings.EqualFold(c.Title, c.Const) {
			name += " (" + c.Title + ")"
		}
		near = append(near, name)
	}
	if len(near) == 0 {
		return ""
	}
	return " (did you mean " + strings.Join(near, " or ") + "?)"
}

// foldName is s without case, spaces, hyphens or underscores: what a near
// miss shares with what was meant.
func foldName(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '-' || r == '_' {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// editDistance is the number of letters to insert, delete, change or swap
// with their neighbour to turn a into b (optimal string alignment).
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	// d[i][j] is the distance between x[:i] and y[:j].
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// notText is v as a refusal names it: "the text \"42\"" for a string,
// else its JSON.
func notText(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("the text %q", s)
	}
	return quoteValue(v)
}

func quoteValue(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
