package main

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Editing Codex's config.toml: askd's own tables are cut out of the user's
// text and its fresh block appended, so every other byte (tables, comments,
// key order) stays as it was. The go-toml parser (its unstable package is
// the AST with byte offsets; go.mod pins the version) says where each table
// starts; the result is parsed back and compared with the original before
// anything is written.
//
// askd's own tables are [mcp_servers.askd] with any [mcp_servers.askd.*]
// below it, and each [[hooks.Stop.hooks]] handler whose command posts to
// askd's /hooks/claude, with its [[hooks.Stop]] group when the group holds
// nothing else. A cut table takes with it the comment lines right above its
// header (no blank line between: that is where askd writes its notes, up to
// the line its block starts with) and the blank lines after it.

// tomlItem is one top-level line of a TOML document: a [table] or
// [[array table]] header, a key = value, or a comment line.
type tomlItem struct {
	kind       unstable.Kind
	path       []string // a header's key, or a key-value's key in full (its table's, then its own)
	start, end int      // the item's whole lines: the offset of its first and past its last
	value      string   // a key-value's string value
	raw        string   // a key-value's or comment's text
}

func (it tomlItem) header() bool {
	return it.kind == unstable.Table || it.kind == unstable.ArrayTable
}

// editCodexConfig returns data with askd's tables replaced by block, or an
// error (data unchanged) when data is not TOML, holds askd's entries in a
// form askd does not rewrite, or the result would not be the same config
// with askd's tables in it once.
func editCodexConfig(data []byte, block string) ([]byte, error) {
	items, lexErr := tomlItems(data)
	before, err := decodeTOML(data)
	if err != nil {
		if lexErr == nil && countHeaders(items, askdServerPath) > 1 {
			err = fmt.Errorf("%v (askd's block twice, as appending `askd install codex` twice leaves it: delete one, then run again)", err)
		}
		return nil, err
	}
	if lexErr != nil {
		return nil, lexErr
	}
	cuts, err := askdSections(data, items)
	if err != nil {
		return nil, err
	}
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
	// One blank line before askd's block; a second run, having cut the
	// block and the blank lines after it, finds the same and adds nothing.
	if kept := out.Bytes(); len(bytes.TrimSpace(kept)) > 0 && !bytes.HasSuffix(kept, []byte(newline+newline)) {
		if !bytes.HasSuffix(kept, []byte(newline)) {
			out.WriteString(newline)
		}
		out.WriteString(newline)
	}
	out.WriteString(block)
	result := out.Bytes()

	after, err := decodeTOML(result)
	if err != nil {
		return nil, fmt.Errorf("askd's tables cannot go into this file as it is (%v); nothing was changed", err)
	}
	if n := countAskdStopHooks(after); n != 1 {
		return nil, fmt.Errorf("the edited file would hold %d askd Stop hooks, not 1; nothing was changed", n)
	}
	if _, ok := mapAt(after, askdServerPath...); !ok {
		return nil, errors.New("the edited file would hold no [mcp_servers.askd]; nothing was changed")
	}
	// (A NaN in the file never equals itself: such a file is refused.)
	if !reflect.DeepEqual(withoutAskd(before), withoutAskd(after)) {
		return nil, errors.New("editing the file would change more than askd's tables; nothing was changed")
	}
	return result, nil
}

// decodeTOML parses data as TOML, or returns an error naming the line.
func decodeTOML(data []byte) (map[string]any, error) {
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

// tomlItems lists data's top-level lines in order.
func tomlItems(data []byte) ([]tomlItem, error) {
	p := unstable.Parser{KeepComments: true}
	p.Reset(data)
	var items []tomlItem
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		it := tomlItem{kind: e.Kind}
		var from, to int // the bytes the parser gave the item
		switch e.Kind {
		case unstable.Comment:
			from, to = int(e.Raw.Offset), int(e.Raw.Offset+e.Raw.Length)
			it.raw = string(data[from:to])
		case unstable.Table, unstable.ArrayTable:
			keys := e.Key()
			for keys.Next() {
				k := keys.Node()
				if len(it.path) == 0 {
					from = int(k.Raw.Offset)
				}
				it.path = append(it.path, string(k.Data))
				to = int(k.Raw.Offset + k.Raw.Length)
			}
			table = it.path
		case unstable.KeyValue:
			from, to = int(e.Raw.Offset), int(e.Raw.Offset+e.Raw.Length)
			it.path = slices.Clone(table)
			keys := e.Key()
			for keys.Next() {
				it.path = append(it.path, string(keys.Node().Data))
			}
			if v := e.Value(); v.Kind == unstable.String {
				it.value = string(v.Data)
			}
			it.raw = string(data[from:to])
		default:
			continue
		}
		it.start = bytes.LastIndexByte(data[:from], '\n') + 1
		it.end = lineEnd(data, to)
		items = append(items, it)
	}
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("not valid TOML: %v", err)
	}
	return items, nil
}

// tomlSection is a header with the items of its table: the key-values up to
// the next header.
type tomlSection struct {
	header int // index into items
	last   int // index of its last key-value, or header
}

// countHeaders counts the [table] headers of path.
func countHeaders(items []tomlItem, path []string) int {
	n := 0
	for _, it := range items {
		if it.kind == unstable.Table && slices.Equal(it.path, path) {
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

func lineOf(data []byte, off int) int { return bytes.Count(data[:off], []byte("\n")) + 1 }

// blankLinesAfter is off moved past the blank lines that follow it.
func blankLinesAfter(data []byte, off int) int {
	for off < len(data) {
		end := lineEnd(data, off)
		if len(bytes.TrimSpace(data[off:end])) > 0 {
			break
		}
		off = end
	}
	return off
}

func hasPrefix(path, prefix []string) bool {
	return len(path) >= len(prefix) && slices.Equal(path[:len(prefix)], prefix)
}
