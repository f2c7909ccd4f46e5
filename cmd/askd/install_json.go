package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
)

// orderedObject is a JSON object that keeps its keys in the order they
// came, so that `askd install claude` rewrites a user's settings with only
// askd's own entries changed. Values are *orderedObject, []any, string,
// json.Number, int, bool or nil.
type orderedObject struct {
	keys []string
	vals map[string]any
}

func newOrderedObject() *orderedObject { return &orderedObject{vals: map[string]any{}} }

func (o *orderedObject) get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// set replaces key's value where the key stands, or appends the key.
func (o *orderedObject) set(key string, v any) *orderedObject {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
	return o
}

// remove takes key out, if it is there.
func (o *orderedObject) remove(key string) {
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	o.keys = slices.DeleteFunc(o.keys, func(k string) bool { return k == key })
}

// object returns the object at key, appending an empty one if key is absent.
// A key holding something else is an error: askd does not replace what it
// cannot read.
func (o *orderedObject) object(key string) (*orderedObject, error) {
	v, ok := o.vals[key]
	if !ok {
		child := newOrderedObject()
		o.set(key, child)
		return child, nil
	}
	child, ok := v.(*orderedObject)
	if !ok {
		return nil, fmt.Errorf("%q is %s, not an object", key, jsonKind(v))
	}
	return child, nil
}

// array returns the array at key (nil if key is absent); a key holding
// something else is an error.
func (o *orderedObject) array(key string) ([]any, error) {
	v, ok := o.vals[key]
	if !ok {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%q is %s, not an array", key, jsonKind(v))
	}
	return list, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case *orderedObject:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number, int:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// decodeJSONObject reads a JSON object keeping its key order. Empty input
// and null read as an empty object. A key given twice keeps its first place
// and takes its last value, as JSON.parse (and so Claude Code) reads it.
func decodeJSONObject(data []byte) (*orderedObject, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return newOrderedObject(), nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeJSONValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more after the object")
	}
	switch v := v.(type) {
	case *orderedObject:
		return v, nil
	case nil:
		return newOrderedObject(), nil
	}
	return nil, fmt.Errorf("the file holds %s, not an object", jsonKind(v))
}

func decodeJSONValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := newOrderedObject()
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeJSONValue(dec)
			if err != nil {
				return nil, err
			}
			o.set(key.(string), v)
		}
		_, err := dec.Token() // '}'
		return o, err
	case json.Delim('['):
		list := []any{}
		for dec.More() {
			v, err := decodeJSONValue(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token() // ']'
		return list, err
	}
	return tok, nil
}

// encodeJSON writes v indented by indent per level, lines ending in
// newline, as encoding/json's MarshalIndent would but in v's own key order
// and without HTML escapes.
func encodeJSON(v any, indent, newline string) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeJSONValue(&buf, v, indent, newline); err != nil {
		return nil, err
	}
	buf.WriteString(newline)
	return buf.Bytes(), nil
}

func writeJSONValue(buf *bytes.Buffer, v any, indent, newline string) error {
	inner := newline + indent // newline carries the current level's indentation
	switch v := v.(type) {
	case *orderedObject:
		if len(v.keys) == 0 {
			buf.WriteString("{}")
			return nil
		}
		buf.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString(inner)
			writeJSONString(buf, k)
			buf.WriteString(": ")
			if err := writeJSONValue(buf, v.vals[k], indent, inner); err != nil {
				return err
			}
		}
		buf.WriteString(newline)
		buf.WriteByte('}')
	case []any:
		if len(v) == 0 {
			buf.WriteString("[]")
			return nil
		}
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString(inner)
			if err := writeJSONValue(buf, e, indent, inner); err != nil {
				return err
			}
		}
		buf.WriteString(newline)
		buf.WriteByte(']')
	case string:
		writeJSONString(buf, v)
	case json.Number:
		buf.WriteString(v.String()) // as the user wrote it: 1.0 stays 1.0
	case int:
		buf.WriteString(strconv.Itoa(v))
	case bool:
		buf.WriteString(strconv.FormatBool(v))
	case nil:
		buf.WriteString("null")
	default:
		return fmt.Errorf("encode JSON: unexpected %T", v)
	}
	return nil
}

func writeJSONString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	buf.Truncate(buf.Len() - 1)
}

// jsonLayout is the indentation and line end a JSON file uses: the white
// space that starts its first indented line (else two spaces), and CRLF if
// its lines end so (else LF).
func jsonLayout(data []byte) (indent, newline string) {
	indent, newline = "  ", "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		newline = "\r\n"
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		rest := bytes.TrimLeft(line, " \t")
		if len(bytes.TrimSpace(rest)) > 0 && len(rest) < len(line) {
			return string(line[:len(line)-len(rest)]), newline
		}
	}
	return indent, newline
}

// mergeJSONFile reads a JSON object file (absent: {}), lets edit change it
// and writes it back if anything changed. The user's keys keep their order
// and the file its indentation; an edit error changes nothing.
func mergeJSONFile(path string, edit func(root *orderedObject) error) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	root, err := decodeJSONObject(data)
	if err != nil {
		return false, fmt.Errorf("%s: not a JSON object (%v); fix or move it, then run again", path, err)
	}
	if err := edit(root); err != nil {
		return false, fmt.Errorf("%s: %v; fix or move it, then run again", path, err)
	}
	indent, newline := jsonLayout(data)
	out, err := encodeJSON(root, indent, newline)
	if err != nil {
		return false, err
	}
	return writeIfChanged(path, out)
}
