package jsonedit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Syntax is what a file may hold besides JSON, as the program that reads it
// allows: VS Code's JSONC takes comments and trailing commas, Gemini CLI's
// settings.json comments only (it strips them, then JSON.parse), Claude
// Code's .mcp.json neither.
type Syntax struct {
	Comments       bool // // line and /* block */ comments where white space may go
	TrailingCommas bool // a comma before an object's } or an array's ]
}

// The syntaxes of the files askd edits.
var (
	JSON  = Syntax{}
	JSONC = Syntax{Comments: true, TrailingCommas: true}
)

// Node is one value of a document as its text holds it: Start and End are
// the offsets of its first byte and past its last, so that an edit can put
// a new value in its place and leave every other byte, comments and commas
// included, as it was.
type Node struct {
	Start, End int
	Members    []Member // an object's members in order, a key given twice twice
	Items      []*Node  // an array's elements
	kind       byte     // '{', '[' or 0 for a string, number, boolean or null
	scalar     any      // a string, json.Number, bool or nil
}

// Member is one key of an object, where its key starts, and its value.
type Member struct {
	Key      string
	KeyStart int
	Value    *Node
}

// IsObject reports whether n is an object.
func (n *Node) IsObject() bool { return n.kind == '{' }

// Lookup returns the value of key in object n (its last, as JSON.parse
// reads a key given twice) and how many times the key is there: 0 and nil
// when it is not, or n is no object.
func (n *Node) Lookup(key string) (*Node, int) {
	var found *Node
	count := 0
	for _, m := range n.Members {
		if m.Key == key {
			found, count = m.Value, count+1
		}
	}
	return found, count
}

// Keys returns an object's keys in order, each once.
func (n *Node) Keys() []string {
	var keys []string
	seen := map[string]bool{}
	for _, m := range n.Members {
		if !seen[m.Key] {
			seen[m.Key] = true
			keys = append(keys, m.Key)
		}
	}
	return keys
}

// Value returns n as Decode reads values: an *Object (a key given twice in
// its first place with its last value), []any, string, json.Number, bool or
// nil.
func (n *Node) Value() any {
	switch n.kind {
	case '{':
		o := NewObject()
		for _, m := range n.Members {
			o.Set(m.Key, m.Value.Value())
		}
		return o
	case '[':
		list := make([]any, 0, len(n.Items))
		for _, it := range n.Items {
			list = append(list, it.Value())
		}
		return list
	}
	return n.scalar
}

// Parse reads data, one JSON value with what syn allows besides, into a
// tree of Nodes that say where each value stands. An error names the line
// and column of the first thing the file's reader would refuse.
func Parse(data []byte, syn Syntax) (*Node, error) {
	p := &parser{data: data, syn: syn}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos == len(data) {
		return nil, p.errorf(p.pos, "no JSON value in the file")
	}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos < len(data) {
		return nil, p.errorf(p.pos, "more after the value that ends at line %d", lineOf(data, n.End))
	}
	return n, nil
}

// maxDepth bounds nesting, as encoding/json does, so that a hostile file
// cannot exhaust the stack.
const maxDepth = 10000

type parser struct {
	data []byte
	pos  int
	syn  Syntax
}

func (p *parser) errorf(at int, format string, args ...any) error {
	line := lineOf(p.data, at)
	col := at - (bytes.LastIndexByte(p.data[:at], '\n') + 1) + 1
	return fmt.Errorf("line %d, column %d: %s", line, col, fmt.Sprintf(format, args...))
}

func lineOf(data []byte, at int) int { return bytes.Count(data[:at], []byte("\n")) + 1 }

// space skips white space and, where the syntax allows them, comments.
func (p *parser) space() error {
	for p.pos < len(p.data) {
		switch c := p.data[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '/' && p.pos+1 < len(p.data) && (p.data[p.pos+1] == '/' || p.data[p.pos+1] == '*'):
			if !p.syn.Comments {
				return p.errorf(p.pos, "a comment, which this file's reader does not allow in JSON")
			}
			if p.data[p.pos+1] == '/' {
				end := bytes.IndexByte(p.data[p.pos:], '\n')
				if end < 0 {
					p.pos = len(p.data)
				} else {
					p.pos += end + 1
				}
				continue
			}
			end := bytes.Index(p.data[p.pos+2:], []byte("*/"))
			if end < 0 {
				return p.errorf(p.pos, "a /* comment that never ends")
			}
			p.pos += 2 + end + 2
		default:
			return nil
		}
	}
	return nil
}

func (p *parser) value(depth int) (*Node, error) {
	if depth > maxDepth {
		return nil, p.errorf(p.pos, "nested deeper than %d", maxDepth)
	}
	if p.pos == len(p.data) {
		return nil, p.errorf(p.pos, "the file ends where a value should be")
	}
	start := p.pos
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &Node{Start: start, End: p.pos, scalar: s}, nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	for _, lit := range []struct {
		text string
		v    any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if bytes.HasPrefix(p.data[p.pos:], []byte(lit.text)) {
			p.pos += len(lit.text)
			return &Node{Start: start, End: p.pos, scalar: lit.v}, nil
		}
	}
	return nil, p.errorf(p.pos, "%s where a value should be", p.what())
}

// what names the character at pos for an error.
func (p *parser) what() string {
	r, _ := utf8.DecodeRune(p.data[p.pos:])
	if r == utf8.RuneError {
		return fmt.Sprintf("byte %#x", p.data[p.pos])
	}
	return fmt.Sprintf("%q", r)
}

func (p *parser) object(depth int) (*Node, error) {
	n := &Node{Start: p.pos, kind: '{'}
	p.pos++ // {
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		n.End = p.pos
		return n, nil
	}
	for {
		switch {
		case p.pos == len(p.data):
			return nil, p.errorf(p.pos, "the file ends inside an object")
		case p.data[p.pos] != '"':
			return nil, p.errorf(p.pos, "%s where a key in double quotes should be", p.what())
		}
		keyStart := p.pos
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos == len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf(p.pos, "no : after the key %q", key)
		}
		p.pos++
		if err := p.space(); err != nil {
			return nil, err
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Members = append(n.Members, Member{Key: key, KeyStart: keyStart, Value: v})
		more, err := p.next('}', "a member")
		if err != nil || !more {
			n.End = p.pos
			return n, err
		}
	}
}

func (p *parser) array(depth int) (*Node, error) {
	n := &Node{Start: p.pos, kind: '['}
	p.pos++ // [
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		n.End = p.pos
		return n, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Items = append(n.Items, v)
		more, err := p.next(']', "an element")
		if err != nil || !more {
			n.End = p.pos
			return n, err
		}
	}
}

// next reads what follows an object's member or an array's element: a
// comma and more (true), or the closing bracket, after a comma where the
// syntax allows a trailing one (false, past the bracket).
func (p *parser) next(closing byte, after string) (bool, error) {
	if err := p.space(); err != nil {
		return false, err
	}
	switch {
	case p.pos == len(p.data):
		return false, p.errorf(p.pos, "the file ends before its %c", closing)
	case p.data[p.pos] == closing:
		p.pos++
		return false, nil
	case p.data[p.pos] != ',':
		return false, p.errorf(p.pos, "%s after %s, where , or %c should be", p.what(), after, closing)
	}
	comma := p.pos
	p.pos++
	if err := p.space(); err != nil {
		return false, err
	}
	if p.pos < len(p.data) && p.data[p.pos] == closing {
		if !p.syn.TrailingCommas {
			return false, p.errorf(comma, "a comma before %c, which this file's reader does not allow", closing)
		}
		p.pos++
		return false, nil
	}
	return true, nil
}

// str reads the string at pos; encoding/json decodes it once its end is
// found (escapes checked here first, for an error with a position).
func (p *parser) str() (string, error) {
	start := p.pos
	p.pos++ // "
	for p.pos < len(p.data) {
		switch c := p.data[p.pos]; {
		case c == '"':
			p.pos++
			var s string
			if err := json.Unmarshal(p.data[start:p.pos], &s); err != nil {
				return "", p.errorf(start, "a string JSON does not allow (%v)", err)
			}
			return s, nil
		case c == '\\':
			if p.pos+1 == len(p.data) {
				return "", p.errorf(p.pos, "the file ends inside a string")
			}
			switch e := p.data[p.pos+1]; e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos += 2
			case 'u':
				if p.pos+6 > len(p.data) || !isHex4(p.data[p.pos+2:p.pos+6]) {
					return "", p.errorf(p.pos, `a \u escape without four hex digits`)
				}
				p.pos += 6
			default:
				return "", p.errorf(p.pos, `the escape \%c, which JSON does not have`, e)
			}
		case c < 0x20:
			return "", p.errorf(p.pos, "a control character (%#x) inside a string; JSON writes it as an escape", c)
		default:
			p.pos++
		}
	}
	return "", p.errorf(start, "a string that never ends")
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// number reads a number as JSON writes it:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *parser) number() (*Node, error) {
	start := p.pos
	d := p.data
	digits := func() int {
		n := 0
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if d[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(d) && d[p.pos] == '0':
		p.pos++
	case digits() == 0:
		return nil, p.errorf(start, "a number without digits")
	}
	if p.pos < len(d) && d[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.errorf(start, "a number with no digits after its point")
		}
	}
	if p.pos < len(d) && (d[p.pos] == 'e' || d[p.pos] == 'E') {
		p.pos++
		if p.pos < len(d) && (d[p.pos] == '+' || d[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.errorf(start, "a number with no digits in its exponent")
		}
	}
	if p.pos < len(d) && (d[p.pos] >= '0' && d[p.pos] <= '9' || d[p.pos] == '.') {
		return nil, p.errorf(start, "a number JSON does not allow (a leading zero?)")
	}
	return &Node{Start: start, End: p.pos, scalar: json.Number(d[start:p.pos])}, nil
}
