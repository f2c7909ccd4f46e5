// Package tomledit edits a TOML document's text table by table, so that
// every byte it does not cut (tables, comments, key order) stays as it was:
// Parse lists the document's top-level lines with their byte offsets,
// Sections groups them into tables, and Splice cuts byte ranges out and
// appends a block. Decode parses a document, to check an edit's result
// against the original before anything is written.
//
// The go-toml parser says where each line starts (its unstable package is
// the AST with byte offsets; go.mod pins the version).
package tomledit

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Kind is what a top-level line of a TOML document is.
type Kind int

const (
	KeyValue   Kind = iota + 1 // key = value
	Table                      // a [table] header
	ArrayTable                 // an [[array table]] header
	Comment                    // a # comment line
)

// Item is one top-level line of a TOML document: a [table] or [[array
// table]] header, a key = value (which may run over several lines), or a
// comment line.
type Item struct {
	Kind       Kind
	Path       []string // a header's key, or a key-value's key in full (its table's, then its own)
	Start, End int      // the item's whole lines: the offset of its first and past its last
	Value      string   // a key-value's string value
	Raw        string   // a key-value's or comment's text
}

// Header reports whether the item is a [table] or [[array table]] header.
func (it Item) Header() bool {
	return it.Kind == Table || it.Kind == ArrayTable
}

// Decode parses data as TOML, or returns an error naming the line. An
// empty document is an empty map.
func Decode(data []byte) (map[string]any, error) {
	var doc map[string]any
	err := toml.Unmarshal(data, &doc)
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, _ := de.Position()
		return nil, fmt.Errorf("line %d: not valid TOML: %s", line, strings.TrimPrefix(de.Error(), "toml: "))
	}
	if err != nil {
		return nil, fmt.Errorf("not valid TOML: %v", err)
	}
	if doc == nil {
		doc = map[string]any{}
	}
	return doc, err
}

// Parse lists data's top-level lines in order, or returns an error when
// data is not TOML.
func Parse(data []byte) ([]Item, error) {
	p := unstable.Parser{KeepComments: true}
	p.Reset(data)
	var items []Item
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		var it Item
		var from, to int // the bytes the parser gave the item
		switch e.Kind {
		case unstable.Comment:
			it.Kind = Comment
			from, to = int(e.Raw.Offset), int(e.Raw.Offset+e.Raw.Length)
			it.Raw = string(data[from:to])
		case unstable.Table, unstable.ArrayTable:
			it.Kind = Table
			if e.Kind == unstable.ArrayTable {
				it.Kind = ArrayTable
			}
			keys := e.Key()
			for keys.Next() {
				k := keys.Node()
				if len(it.Path) == 0 {
					from = int(k.Raw.Offset)
				}
				it.Path = append(it.Path, string(k.Data))
				to = int(k.Raw.Offset + k.Raw.Length)
			}
			table = it.Path
		case unstable.KeyValue:
			it.Kind = KeyValue
			from, to = int(e.Raw.Offset), int(e.Raw.Offset+e.Raw.Length)
			it.Path = slices.Clone(table)
			keys := e.Key()
			for keys.Next() {
				it.Path = append(it.Path, string(keys.Node().Data))
			}
			if v := e.Value(); v.Kind == unstable.String {
				it.Value = string(v.Data)
			}
			it.Raw = string(data[from:to])
		default:
			continue
		}
		it.Start = bytes.LastIndexByte(data[:from], '\n') + 1
		it.End = lineEnd(data, to)
		items = append(items, it)
	}
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("not valid TOML: %v", err)
	}
	return items, nil
}

// Section is a header with the items of its table: the key-values up to
// the next header.
type Section struct {
	Header int // index into items
	Last   int // index of its last key-value, or Header
}

// Sections groups items, as Parse lists them, into their tables, in order.
// Key-values above the first header belong to none.
func Sections(items []Item) []Section {
	var sections []Section
	for i, it := range items {
		switch {
		case it.Header():
			sections = append(sections, Section{Header: i, Last: i})
		case it.Kind == KeyValue && len(sections) > 0:
			sections[len(sections)-1].Last = i
		}
	}
	return sections
}

// Splice returns data with the byte ranges cuts taken out (in order, none
// overlapping) and block appended, after a blank line unless what is kept
// of data is only white space; block's lines end as data's do (CRLF if any
// of data's do). Cutting the block with the blank lines after it and
// splicing the same block in again gives the same text: a second run of an
// installer changes nothing.
func Splice(data []byte, cuts [][2]int, block string) []byte {
	var out bytes.Buffer
	last := 0
	for _, c := range cuts {
		out.Write(data[last:c[0]])
		last = c[1]
	}
	out.Write(data[last:])
	newline := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		newline = "\r\n"
		block = strings.ReplaceAll(block, "\n", "\r\n")
	}
	if kept := out.Bytes(); len(bytes.TrimSpace(kept)) > 0 && !bytes.HasSuffix(kept, []byte(newline+newline)) {
		if !bytes.HasSuffix(kept, []byte(newline)) {
			out.WriteString(newline)
		}
		out.WriteString(newline)
	}
	out.WriteString(block)
	return out.Bytes()
}

// CountTables counts the [table] headers of path: more than one is a
// document TOML refuses.
func CountTables(items []Item, path []string) int {
	n := 0
	for _, it := range items {
		if it.Kind == Table && slices.Equal(it.Path, path) {
			n++
		}
	}
	return n
}

// lineEnd is the offset past the newline that ends the line holding off.
func lineEnd(data []byte, off int) int {
	if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(data)
}

// LineOf is the number, from 1, of the line holding offset off.
func LineOf(data []byte, off int) int { return bytes.Count(data[:off], []byte("\n")) + 1 }

// BlankLinesAfter is off, the start of a line, moved past the blank lines
// that follow it.
func BlankLinesAfter(data []byte, off int) int {
	for off < len(data) {
		end := lineEnd(data, off)
		if len(bytes.TrimSpace(data[off:end])) > 0 {
			break
		}
		off = end
	}
	return off
}

// HasPrefix reports whether TOML key path starts with prefix: is prefix's
// table or below it.
func HasPrefix(path, prefix []string) bool {
	return len(path) >= len(prefix) && slices.Equal(path[:len(prefix)], prefix)
}

// Quote writes s as a TOML basic string: in double quotes, with ", \ and
// the control characters TOML refuses raw escaped (\uXXXX where TOML has
// no short escape). Bytes that are not UTF-8, which TOML cannot hold,
// become U+FFFD.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// QuoteList writes list as a TOML array of basic strings, on one line.
func QuoteList(list []string) string {
	quoted := make([]string, len(list))
	for i, s := range list {
		quoted[i] = Quote(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}
