package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The decoder as it was before its one-scan fast path, kept as the oracle the
// new one is held to (FuzzDecodeSame): a tree of any from encoding/json, the
// strict scan, the tree walk for unknown fields, then json.Unmarshal. Renamed
// old*, otherwise as it was (its errors now strictjson's *Error, made as
// the new one makes them); the helpers that only format (joinPath, typeName,
// jsonKind, fitsNumber, hex4, ...) are shared.

// OldDecode and OldDecodeOpen are the oracle, for the tests of package
// strictjson_test.
var OldDecode, OldDecodeOpen = oldDecode, oldDecodeOpen

// oldDecode parses data into v strictly: a field v does not have is refused by its
// path (`questions[0].colour: unknown field`), as is a key given twice in one
// object (`questions[0].header: duplicate key; ...`) and text that is not
// UTF-8 (`title: not valid UTF-8 (byte 0xff)`), at any depth, inside free
// objects such as payloads too; a value of the wrong type is refused by its
// path and the type wanted, and anything after the JSON value is refused.
// Errors are *Errors.
func oldDecode(data []byte, v any) error {
	tree, err := oldParseStrict(data)
	if err != nil {
		return err
	}
	if msg := oldCheckTree(tree, reflect.TypeOf(v), "", false); msg != "" {
		return errorf("%s", msg)
	}
	return oldUnmarshal(data, tree, v, true)
}

// oldDecodeOpen is oldDecode for bodies that carry fields askd does not read, such
// as Claude Code's hook inputs, which gain fields from version to version:
// those are ignored. Everything else is as strict as oldDecode: one JSON object,
// no key twice, UTF-8 only, values of the right type.
func oldDecodeOpen(data []byte, v any) error {
	tree, err := oldParseStrict(data)
	if err != nil {
		return err
	}
	return oldUnmarshal(data, tree, v, false)
}

// oldParseStrict checks that data is one JSON object with no key twice in an
// object and only UTF-8 text, and returns it as a tree of any.
func oldParseStrict(data []byte) (any, error) {
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
	if path, rule := oldCheckJSON(data); rule != "" {
		return nil, errorf("%s: %s", orBody(path), rule)
	}
	return tree, nil
}

// oldUnmarshal decodes data, whose tree is already checked, into v; with paths,
// a wrong type is named by its full path.
func oldUnmarshal(data []byte, tree, v any, paths bool) error {
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		// encoding/json's path lacks list indexes; walk the tree for the
		// full one. Only here, so that the walk never refuses what
		// encoding/json accepts (",string" fields, json.Number).
		if paths {
			if msg := oldCheckTree(tree, reflect.TypeOf(v), "", true); msg != "" {
				return errorf("%s", msg)
			}
		}
		return errorf("%s: %s, want %s", fieldPath(te.Field), te.Value, typeName(te.Type))
	}
	return &Error{Message: "body: " + strings.TrimPrefix(err.Error(), "json: "), Err: err}
}

// oldCheckTree walks the decoded JSON beside the Go type and returns the first
// problem as "path: rule": an object key the type has no field for, and, with
// types, a value of the wrong JSON type. null fits anything, as in
// encoding/json; types that decode themselves (Choice, json.RawMessage,
// time.Time) are left to do so.
func oldCheckTree(node any, t reflect.Type, path string, types bool) string {
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
			fields := oldJSONFields(t)
			for _, k := range oldSortedKeys(n) {
				f, ok := fields[k]
				p := joinPath(path, k)
				if !ok {
					return p + ": unknown field"
				}
				if msg := oldCheckTree(n[k], f, p, types); msg != "" {
					return msg
				}
			}
			return ""
		case reflect.Map:
			for _, k := range oldSortedKeys(n) {
				if msg := oldCheckTree(n[k], t.Elem(), fmt.Sprintf("%s[%q]", path, k), types); msg != "" {
					return msg
				}
			}
			return ""
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, e := range n {
				if msg := oldCheckTree(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i), types); msg != "" {
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

// oldJSONFields maps the JSON names of t's exported fields (with embedded structs
// flattened) to their types. Names match exactly: "Header" is not "header".
func oldJSONFields(t reflect.Type) map[string]reflect.Type {
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
			for k, v := range oldJSONFields(f.Type) {
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

func oldSortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Stable messages: report the first unknown key in sorted order. (An
	// insertion sort here took seconds on a 1 MiB body of many keys.)
	slices.Sort(keys)
	return keys
}

// oldCheckJSON scans data, which must already be valid JSON, for what
// encoding/json lets through and strict JSON refuses (SPEC §7): an object key
// given twice (encoding/json keeps the last, other parsers the first, so the
// person and the agent could read different values), a string that is not
// UTF-8 (encoding/json puts U+FFFD in its place), and a \u escape of half a
// surrogate pair (the same, by escape). It returns the first problem's path
// ("" for the body itself) and rule, or two "". One pass over the bytes; it allocates only for paths,
// escaped keys and objects of many keys.
func oldCheckJSON(data []byte) (path, rule string) {
	s := oldScanner{data: data, frames: make([]oldFrame, 0, 16), keys: make([][][]byte, 0, 16)}
	s.value()
	return s.problemPath, s.problem
}

// oldScanner walks valid JSON. Frames record where it is, for the path of a
// problem; keys holds the keys of the objects open, one slice per depth, kept
// for reuse by the next object at that depth.
type oldScanner struct {
	data        []byte
	i           int
	frames      []oldFrame
	keys        [][][]byte
	problem     string // the first rule broken
	problemPath string // where
}

type oldFrame struct {
	key   []byte // the key's text, unescaped; nil in a list
	index int
}

// oldManyKeys is the size past which an object's keys go into a map instead of
// being compared one by one.
const oldManyKeys = 16

func (s *oldScanner) fail(format string, args ...any) {
	if s.problem == "" {
		s.problem, s.problemPath = fmt.Sprintf(format, args...), s.path()
	}
}

// path is where the oldScanner is, in oldDecode's form: questions[0].options[1].label.
func (s *oldScanner) path() string {
	p := ""
	for _, f := range s.frames {
		if f.key != nil {
			p = joinPath(p, string(f.key))
		} else {
			p = fmt.Sprintf("%s[%d]", p, f.index)
		}
	}
	return p
}

// peek is the byte at the oldScanner, 0 at the end.
func (s *oldScanner) peek() byte {
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

func (s *oldScanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *oldScanner) value() {
	s.space()
	if s.i >= len(s.data) {
		return
	}
	switch s.data[s.i] {
	case '{':
		s.object()
	case '[':
		s.list()
	case '"':
		if rule := s.text(); rule != "" {
			s.fail("%s", rule)
		}
	default: // number, true, false, null: up to the next delimiter
		for s.i < len(s.data) {
			switch s.data[s.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return
			}
			s.i++
		}
	}
}

func (s *oldScanner) object() {
	depth := len(s.frames)
	for len(s.keys) <= depth {
		s.keys = append(s.keys, nil)
	}
	seen := s.keys[depth][:0]
	var many map[string]struct{}
	s.frames = append(s.frames, oldFrame{})
	s.i++ // {
	for s.problem == "" {
		s.space()
		if s.peek() != '"' {
			break // }
		}
		start := s.i
		if rule := s.text(); rule != "" {
			// Named as it came, up to its closing quote; the path quotes it
			// (`["a\xff"]`).
			end := s.i
			for end < len(s.data) && s.data[end] != '"' {
				if s.data[end] == '\\' {
					end++
				}
				end++
			}
			s.frames[depth] = oldFrame{key: s.data[start+1 : min(end, len(s.data))]}
			s.fail("%s", rule)
			break
		}
		key := s.data[start+1 : s.i-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var k string
			_ = json.Unmarshal(s.data[start:s.i], &k) // valid JSON: cannot fail
			key = []byte(k)
		}
		s.frames[depth] = oldFrame{key: key}
		dup := false
		if many != nil {
			_, dup = many[string(key)]
			many[string(key)] = struct{}{}
		} else {
			for _, k := range seen {
				if bytes.Equal(k, key) {
					dup = true
					break
				}
			}
			seen = append(seen, key)
			if len(seen) > oldManyKeys {
				many = make(map[string]struct{}, 2*oldManyKeys)
				for _, k := range seen {
					many[string(k)] = struct{}{}
				}
			}
		}
		if dup {
			s.fail("duplicate key; each key may appear once in an object")
			break
		}
		s.space()
		s.i++ // :
		s.value()
		s.space()
		if s.i < len(s.data) && s.data[s.i] == ',' {
			s.i++
		}
	}
	s.keys[depth] = seen[:0]
	if s.problem == "" {
		s.frames = s.frames[:depth]
		s.i++ // }
	}
}

func (s *oldScanner) list() {
	depth := len(s.frames)
	s.frames = append(s.frames, oldFrame{})
	s.i++ // [
	for n := 0; s.problem == ""; n++ {
		s.space()
		if c := s.peek(); c == ']' || c == 0 {
			break
		}
		s.frames[depth] = oldFrame{index: n}
		s.value()
		s.space()
		if s.i < len(s.data) && s.data[s.i] == ',' {
			s.i++
		}
	}
	if s.problem == "" {
		s.frames = s.frames[:depth]
		s.i++ // ]
	}
}

// text moves past a string and returns "" or what is wrong with it: bytes
// that are not UTF-8, or a \u escape that is not a character.
func (s *oldScanner) text() string {
	s.i++ // "
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			s.i++
			return ""
		case c == '\\':
			if s.i+1 < len(s.data) && s.data[s.i+1] != 'u' {
				s.i += 2
				continue
			}
			if s.i+6 > len(s.data) {
				return "" // not valid JSON, which the caller has refused already
			}
			r := hex4(s.data[s.i+2 : s.i+6])
			s.i += 6
			if !utf16.IsSurrogate(r) {
				continue
			}
			if r < 0xdc00 && s.i+6 <= len(s.data) && s.data[s.i] == '\\' && s.data[s.i+1] == 'u' {
				if r2 := hex4(s.data[s.i+2 : s.i+6]); r2 >= 0xdc00 && r2 <= 0xdfff {
					s.i += 6
					continue
				}
			}
			return fmt.Sprintf(`\u%04x is half of a surrogate pair, not a character`, r)
		case c < utf8.RuneSelf:
			s.i++
		default:
			r, n := utf8.DecodeRune(s.data[s.i:])
			if r == utf8.RuneError && n == 1 {
				return fmt.Sprintf("not valid UTF-8 (byte 0x%02x)", c)
			}
			s.i += n
		}
	}
	return ""
}
