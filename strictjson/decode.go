package strictjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Decode parses data into v strictly: a field v does not have is refused by its
// path (`questions[0].colour: unknown field`), as is a key given twice in one
// object (`questions[0].header: duplicate key; ...`) and text that is not
// UTF-8 (`title: not valid UTF-8 (byte 0xff)`), at any depth, inside free
// objects such as payloads too; a value of the wrong type is refused by its
// path and the type wanted, and anything after the JSON value is refused.
// Errors are *Errors.
func Decode(data []byte, v any) error {
	return decode(data, v, true)
}

// DecodeOpen is Decode for bodies that carry fields askd does not read, such
// as Claude Code's hook inputs, which gain fields from version to version:
// those are ignored. Everything else is as strict as Decode: one JSON object,
// no key twice, UTF-8 only, values of the right type.
func DecodeOpen(data []byte, v any) error {
	return decode(data, v, false)
}

// Error is a refusal of Decode or DecodeOpen. Message names the path and
// the rule broken ("questions[0].colour: unknown field", "body: empty, want
// a JSON object"). Err is set when json.Unmarshal refused the body for a
// reason of its own (a type's UnmarshalJSON, a time that does not parse):
// it is that error, and Message is "body: " and its text.
type Error struct {
	Message string
	Err     error
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

func errorf(format string, args ...any) *Error {
	return &Error{Message: fmt.Sprintf(format, args...)}
}

// decode is Decode, with the unknown-field rule when strict. A good body
// takes one scan, which checks all but the syntax, and json.Unmarshal, which
// checks that before it decodes: the tree of any and its walk are left to a
// body with a problem, to name it as they always have, in the same words and,
// of several problems, the same one.
func decode(data []byte, v any, strict bool) error {
	var g *guide
	if strict {
		if v == nil {
			return decodeSlow(data, v, strict, nil) // as before: its walk panics on a good body
		}
		g = guideOf(reflect.TypeOf(v))
	}
	if !scanBody(data, g) {
		return decodeSlow(data, v, strict, nil)
	}
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if (!strict || !errors.As(err, &te)) && json.Valid(data) {
		// The slow checks would pass what is JSON and passed the scan; the
		// tree would only name a wrong type's path.
		return unmarshalError(err, nil, v, false)
	}
	return decodeSlow(data, v, strict, err)
}

// decodeSlow parses data as a tree of any to name its first problem: syntax,
// not one object, Check's rules, an unknown field (when strict), and last
// what json.Unmarshal into v refuses. err is that refusal when Unmarshal has
// run already, else nil.
func decodeSlow(data []byte, v any, strict bool, err error) error {
	tree, perr := parseStrict(data)
	if perr != nil {
		return perr
	}
	if strict {
		if msg := checkTree(tree, reflect.TypeOf(v), "", false); msg != "" {
			return errorf("%s", msg)
		}
	}
	if err == nil {
		if err = json.Unmarshal(data, v); err == nil {
			return nil
		}
	}
	return unmarshalError(err, tree, v, strict)
}

// parseStrict checks that data is one JSON object with no key twice in an
// object and only UTF-8 text, and returns it as a tree of any.
func parseStrict(data []byte) (any, error) {
	// JSON's whitespace only: bytes.TrimSpace would also drop Unicode spaces
	// (U+00A0, U+0085), which are not JSON.
	data = bytes.Trim(data, " \t\r\n")
	if len(data) == 0 {
		return nil, errorf("body: empty, want a JSON object")
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return nil, errorf("body: not valid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return nil, errorf("body: more than one JSON value")
	}
	if _, ok := tree.(map[string]any); !ok {
		return nil, errorf("body: %s, want a JSON object", jsonKind(tree))
	}
	if path, rule := Check(data); rule != "" {
		return nil, errorf("%s: %s", orBody(path), rule)
	}
	return tree, nil
}

// unmarshalError names json.Unmarshal's refusal of data, whose tree is
// already checked; with paths, a wrong type is named by its full path.
func unmarshalError(err error, tree, v any, paths bool) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		// encoding/json's path lacks list indexes; walk the tree for the
		// full one. Only here, so that the walk never refuses what
		// encoding/json accepts (",string" fields, json.Number).
		if paths {
			if msg := checkTree(tree, reflect.TypeOf(v), "", true); msg != "" {
				return errorf("%s", msg)
			}
		}
		return errorf("%s: %s, want %s", fieldPath(te.Field), te.Value, typeName(te.Type))
	}
	return &Error{Message: "body: " + strings.TrimPrefix(err.Error(), "json: "), Err: err}
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// checkTree walks the decoded JSON beside the Go type and returns the first
// problem as "path: rule": an object key the type has no field for, and, with
// types, a value of the wrong JSON type. null fits anything, as in
// encoding/json; types that decode themselves (askd.Choice, json.RawMessage,
// time.Time) are left to do so.
func checkTree(node any, t reflect.Type, path string, types bool) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pt := reflect.PointerTo(t)
	if node == nil || t.Kind() == reflect.Interface || pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalerType) {
		return ""
	}
	switch n := node.(type) {
	case map[string]any:
		switch t.Kind() {
		case reflect.Struct:
			fields := jsonFields(t)
			for _, k := range sortedKeys(n) {
				f, ok := fields[k]
				p := joinPath(path, k)
				if !ok {
					return p + ": unknown field"
				}
				if msg := checkTree(n[k], f, p, types); msg != "" {
					return msg
				}
			}
			return ""
		case reflect.Map:
			for _, k := range sortedKeys(n) {
				if msg := checkTree(n[k], t.Elem(), fmt.Sprintf("%s[%q]", path, k), types); msg != "" {
					return msg
				}
			}
			return ""
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, e := range n {
				if msg := checkTree(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i), types); msg != "" {
					return msg
				}
			}
			return ""
		}
	}
	if !types {
		return ""
	}
	switch n := node.(type) {
	case string:
		if t.Kind() == reflect.String {
			return ""
		}
	case bool:
		if t.Kind() == reflect.Bool {
			return ""
		}
	case json.Number:
		if fitsNumber(n.String(), t) {
			return ""
		}
		if isNumeric(t) {
			return fmt.Sprintf("%s: %s, want %s", orBody(path), n, typeName(t))
		}
	}
	return fmt.Sprintf("%s: %s, want %s", orBody(path), jsonKind(node), typeName(t))
}

// fitsNumber reports whether the JSON number s decodes into a value of type t.
func fitsNumber(s string, t reflect.Type) bool {
	var err error
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err = strconv.ParseInt(s, 10, t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		_, err = strconv.ParseUint(s, 10, t.Bits())
	case reflect.Float32, reflect.Float64:
		_, err = strconv.ParseFloat(s, t.Bits())
	default:
		return false
	}
	return err == nil
}

func isNumeric(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

func orBody(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

// A guide is what the scan needs of the Go type a JSON value decodes into, as
// checkTree sees the type: a struct's fields by JSON name, or a map's or a
// list's element. nil stands for a type below which anything goes: an
// interface, a type that decodes itself, or any other (a string, a number).
type guide struct {
	kind   reflect.Kind      // Struct, Map, or Slice (for arrays too)
	fields map[string]*guide // a struct's
	elem   *guide            // a map's or a list's
}

var guides sync.Map // reflect.Type → *guide, made once per type

func guideOf(t reflect.Type) *guide {
	if t == nil {
		return nil
	}
	if g, ok := guides.Load(t); ok {
		return g.(*guide)
	}
	g := makeGuide(t, map[reflect.Type]*guide{})
	guides.Store(t, g)
	return g
}

// makeGuide makes t's guide; made holds those under way, for types that hold
// themselves.
func makeGuide(t reflect.Type, made map[reflect.Type]*guide) *guide {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pt := reflect.PointerTo(t)
	if t.Kind() == reflect.Interface || pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalerType) {
		return nil
	}
	if g, ok := made[t]; ok {
		return g
	}
	switch t.Kind() {
	case reflect.Struct:
		g := &guide{kind: reflect.Struct}
		made[t] = g
		fields := jsonFields(t)
		g.fields = make(map[string]*guide, len(fields))
		for name, ft := range fields {
			g.fields[name] = makeGuide(ft, made)
		}
		return g
	case reflect.Map, reflect.Slice, reflect.Array:
		g := &guide{kind: reflect.Map}
		if t.Kind() != reflect.Map {
			g.kind = reflect.Slice
		}
		made[t] = g
		g.elem = makeGuide(t.Elem(), made)
		return g
	}
	return nil
}

// member is the guide of the value at key in an object decoded by g; ok is
// false when g's struct has no field key.
func (g *guide) member(key []byte) (m *guide, ok bool) {
	if g == nil {
		return nil, true
	}
	switch g.kind {
	case reflect.Struct:
		m, ok = g.fields[string(key)]
		return m, ok
	case reflect.Map:
		return g.elem, true
	}
	return nil, true
}

// item is the guide of a value in a list decoded by g.
func (g *guide) item() *guide {
	if g != nil && g.kind == reflect.Slice {
		return g.elem
	}
	return nil
}

// jsonFields maps the JSON names of t's exported fields (with embedded structs
// flattened) to their types. Names match exactly: "Header" is not "header".
func jsonFields(t reflect.Type) map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for k, v := range jsonFields(f.Type) {
				m[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f.Type
	}
	return m
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Stable messages: report the first unknown key in sorted order. (An
	// insertion sort here took seconds on a 1 MiB body of many keys.)
	slices.Sort(keys)
	return keys
}

// joinPath appends an object key to a path: as ".key" when the key is a plain
// name, else quoted (`["a.b"]`, `[""]`) so that the path stays readable and
// never empty.
func joinPath(path, key string) string {
	if !plainName(key) {
		return fmt.Sprintf("%s[%q]", path, key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func plainName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// fieldPath turns encoding/json's "questions.options.label" into a path; the
// indexes are not known there, so it names the field chain.
func fieldPath(f string) string {
	if f == "" {
		return "body"
	}
	return f
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "a list"
	}
	return "an object"
}
