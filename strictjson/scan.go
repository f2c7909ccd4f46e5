package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// Check scans data, which must already be valid JSON, for what
// encoding/json lets through and strict JSON refuses (SPEC §7): an object key
// given twice (encoding/json keeps the last, other parsers the first, so the
// person and the agent could read different values), a string that is not
// UTF-8 (encoding/json puts U+FFFD in its place), and a \u escape of half a
// surrogate pair (the same, by escape). It returns the first problem's path
// ("" for the body itself) and rule, or two "". One pass over the bytes; it allocates only for paths,
// escaped keys and objects of many keys.
func Check(data []byte) (path, rule string) {
	s := newScanner(data)
	defer s.free()
	s.value(nil)
	return s.problemPath, s.problem
}

// scanBody is Decode's one scan of a body: Check's rules, one object with
// nothing after it, and, given a guide, no key the type has no field for. It
// only says whether all is well; a problem is named by decodeSlow, so that of
// several the same one is named as always. Syntax is json.Unmarshal's to
// check, which it does before it decodes: the scan takes any bytes without
// harm, but may pass some that are not JSON.
func scanBody(data []byte, g *guide) bool {
	s := newScanner(data)
	defer s.free()
	s.space()
	if s.peek() != '{' {
		return false
	}
	s.object(g)
	s.space()
	return s.problem == "" && s.i == len(s.data)
}

// scanner walks valid JSON, and ends without harm on anything else. Frames
// record where it is, for the path of a problem; keys holds the keys of the
// objects open, each object's above its parent's.
type scanner struct {
	data        []byte
	i           int
	frames      []frame
	keys        [][]byte
	problem     string // the first rule broken
	problemPath string // where

	// The first frames and keys. Stored through a pointer, they cannot stay
	// on the stack, and allocating them took longer than a small body's
	// scan: scanners keeps them for the next one.
	frameBuf [16]frame
	keyBuf   [32][]byte
}

var scanners = sync.Pool{New: func() any { return new(scanner) }}

func newScanner(data []byte) *scanner {
	s := scanners.Get().(*scanner)
	s.data, s.frames, s.keys = data, s.frameBuf[:0], s.keyBuf[:0]
	return s
}

// free puts s back in scanners, holding nothing of its body.
func (s *scanner) free() {
	*s = scanner{}
	scanners.Put(s)
}

type frame struct {
	key   []byte // the key's text, unescaped; nil in a list
	index int
}

// manyKeys is the size past which an object's keys go into a map instead of
// being compared one by one.
const manyKeys = 16

// maxDepth is encoding/json's limit on nesting: the scan stops there rather
// than go deeper on a body json.Unmarshal will refuse.
const maxDepth = 10000

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

// value moves past a value, of the type g guides if not nil.
func (s *scanner) value(g *guide) {
	s.space()
	if s.i >= len(s.data) {
		return
	}
	switch s.data[s.i] {
	case '{':
		s.object(g)
	case '[':
		s.list(g)
	case '"':
		if rule := s.text(); rule != "" {
			s.fail("%s", rule)
		}
	default: // number, true, false, null: up to the next delimiter
		for s.i++; s.i < len(s.data); s.i++ {
			switch s.data[s.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return
			}
		}
	}
}

func (s *scanner) object(g *guide) {
	depth := len(s.frames)
	if depth >= maxDepth {
		s.fail("nested more than %d deep", maxDepth)
		return
	}
	first := len(s.keys) // this object's keys are s.keys[first:]
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
			for _, k := range s.keys[first:] {
				if bytes.Equal(k, key) {
					dup = true
					break
				}
			}
			s.keys = append(s.keys, key)
			if len(s.keys)-first > manyKeys {
				many = make(map[string]struct{}, 2*manyKeys)
				for _, k := range s.keys[first:] {
					many[string(k)] = struct{}{}
				}
			}
		}
		if dup {
			s.fail("duplicate key; each key may appear once in an object")
			break
		}
		m, ok := g.member(key)
		if !ok {
			s.fail("unknown field")
			break
		}
		s.space()
		s.i++ // :
		s.value(m)
		s.space()
		if s.i < len(s.data) && s.data[s.i] == ',' {
			s.i++
		}
	}
	s.keys = s.keys[:first]
	if s.problem == "" {
		s.frames = s.frames[:depth]
		s.i++ // }
	}
}

func (s *scanner) list(g *guide) {
	depth := len(s.frames)
	if depth >= maxDepth {
		s.fail("nested more than %d deep", maxDepth)
		return
	}
	item := g.item()
	s.frames = append(s.frames, frame{})
	s.i++ // [
	for n := 0; s.problem == ""; n++ {
		s.space()
		if c := s.peek(); c == ']' || c == 0 {
			break
		}
		s.frames[depth] = frame{index: n}
		s.value(item)
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
				return unended
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
	return unended
}

// unended is text's rule for a string with no end: never on valid JSON, so
// only scanBody meets it.
const unended = "not valid JSON"

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
