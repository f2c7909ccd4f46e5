package strictjson

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Object decodes raw as a JSON object, returning its members and their
// keys in the order written (nil and no error for nil). A key given twice is
// refused, as is anything but one object; errors are the rule broken ("must
// be an object", "\"a\" is given twice"). One pass of the body's scanner
// (scan.go) after json.Valid: askd parses a form's schema with it when the
// form is asked and again when it is answered, and json.Decoder's tokens
// took a tenth of a form's create + answer cycle.
func Object(raw json.RawMessage) (map[string]json.RawMessage, []string, error) {
	if raw == nil {
		return nil, nil, nil
	}
	if !json.Valid(raw) {
		return nil, nil, fmt.Errorf("must be an object")
	}
	return Members(raw)
}

// Members is Object for a part of JSON that Object has checked valid: a
// member of its result, which Object does not check inside.
func Members(raw json.RawMessage) (map[string]json.RawMessage, []string, error) {
	if raw == nil {
		return nil, nil, nil
	}
	s := newScanner(raw)
	defer s.free()
	s.space()
	if s.peek() != '{' {
		return nil, nil, fmt.Errorf("must be an object")
	}
	s.i++ // {
	m := map[string]json.RawMessage{}
	var keys []string
	for {
		s.space()
		if s.peek() != '"' {
			return m, keys, nil // }
		}
		start := s.i
		if rule := s.text(); rule != "" {
			return nil, nil, fmt.Errorf("%s", rule)
		}
		k := string(raw[start+1 : s.i-1])
		if strings.IndexByte(k, '\\') >= 0 {
			_ = json.Unmarshal(raw[start:s.i], &k) // valid JSON: cannot fail
		}
		if _, dup := m[k]; dup {
			return nil, nil, fmt.Errorf("%q is given twice", k)
		}
		s.space()
		s.i++ // :
		s.space()
		from := s.i
		s.i = skipValue(raw, s.i) // its own objects are checked when parsed
		m[k], keys = raw[from:s.i], append(keys, k)
		s.space()
		if s.peek() == ',' {
			s.i++
		}
	}
}

// skipValue is the index just past the JSON value at data[i:], which is
// valid JSON.
func skipValue(data []byte, i int) int {
	depth := 0
	for ; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			for i++; data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
			if depth < 0 { // the end of the enclosing object: a scalar ended
				return i
			}
		case ',', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}
