package askd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// checkJSON scans data, which must already be valid JSON, for what
// encoding/json lets through and strict JSON refuses (SPEC §7): an object key
// given twice (encoding/json keeps the last, other parsers the first, so the
// person and the agent could read different values), a string that is not
// UTF-8 (encoding/json puts U+FFFD in its place), and a \u escape of half a
// surrogate pair (the same, by escape). It returns the first problem's path
// ("" for the body itself) and rule, or two "". One pass over the bytes; it allocates only for paths,
// escaped keys and objects of many keys.
func checkJSON(data []byte) (path, rule string) {
	s := scanner{data: data, frames: make([]frame, 0, 16), keys: make([][][]byte, 0, 16)}
	s.value()
	return s.problemPath, s.problem
}

// scanner walks valid JSON. Frames record where it is, for the path of a
// problem; keys holds the keys of the objects open, one slice per depth, kept
// for reuse by the next object at that depth.
type scanner struct {
	data        []byte
	i           int
	frames      []frame
	keys        [][][]byte
	problem     string // the first rule broken
	problemPath string // where
}

type frame struct {
	key   []byte // the key's text, unescaped; nil in a list
	index int
}

// manyKeys is the size past which an object's keys go into a map instead of
// being compared one by one.
const manyKeys = 16

func (s *scanner) fail(format string, args ...any) {
	if s.problem == "" {
		s.problem, s.problemPath = fmt.Sprintf(format, args...), s.path()
	}
}

// path is where the scanner is, in Decode's form: questions[0].options[1].label.
func (s *scanner) path() string {
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

// peek is the byte at the scanner, 0 at the end.
func (s *scanner) peek() byte {
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

func (s *scanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) value() {
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

func (s *scanner) object() {
	depth := len(s.frames)
	for len(s.keys) <= depth {
		s.keys = append(s.keys, nil)
	}
	seen := s.keys[depth][:0]
	var many map[string]struct{}
	s.frames = append(s.frames, frame{})
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
			s.frames[depth] = frame{key: s.data[start+1 : min(end, len(s.data))]}
			s.fail("%s", rule)
			break
		}
		key := s.data[start+1 : s.i-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var k string
			_ = json.Unmarshal(s.data[start:s.i], &k) // valid JSON: cannot fail
			key = []byte(k)
		}
		s.frames[depth] = frame{key: key}
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
			if len(seen) > manyKeys {
				many = make(map[string]struct{}, 2*manyKeys)
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

func (s *scanner) list() {
	depth := len(s.frames)
	s.frames = append(s.frames, frame{})
	s.i++ // [
	for n := 0; s.problem == ""; n++ {
		s.space()
		if c := s.peek(); c == ']' || c == 0 {
			break
		}
		s.frames[depth] = frame{index: n}
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
func (s *scanner) text() string {
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

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}
