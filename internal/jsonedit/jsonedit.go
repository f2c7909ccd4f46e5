// Package jsonedit edits JSON the way a person would: an Object keeps its
// keys in the order they came, numbers stay as they were written, and Encode
// writes it back with the file's own indentation and line ends (Layout), so
// that a config file rewritten by askd install differs only where askd
// changed it.
//
// Where even that is too much (a file with comments, VS Code's JSONC, or one
// laid out by hand), Parse says where each value stands in the text, so that
// one value can be replaced (EncodeValue) and every other byte kept.
package jsonedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// Object is a JSON object that keeps its keys in the order they came, so
// that a user's settings are rewritten with only askd's own entries
// changed. Values are *Object, []any, string, json.Number, int, bool or
// nil.
type Object struct {
	keys []string
	vals map[string]any
}

// NewObject returns an empty object.
func NewObject() *Object { return &Object{vals: map[string]any{}} }

// Keys returns the object's keys in order.
func (o *Object) Keys() []string { return slices.Clone(o.keys) }

// Get returns key's value and whether the key is there.
func (o *Object) Get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// Set replaces key's value where the key stands, or appends the key. It
// returns o, so that an object can be built in one expression.
func (o *Object) Set(key string, v any) *Object {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
	return o
}

// Remove takes key out, if it is there.
func (o *Object) Remove(key string) {
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	o.keys = slices.DeleteFunc(o.keys, func(k string) bool { return k == key })
}

// Object returns the object at key, appending an empty one if key is
// absent. A key holding something else is an error: askd does not replace
// what it cannot read.
func (o *Object) Object(key string) (*Object, error) {
	v, ok := o.vals[key]
	if !ok {
		child := NewObject()
		o.Set(key, child)
		return child, nil
	}
	child, ok := v.(*Object)
	if !ok {
		return nil, fmt.Errorf("%q is %s, not an object", key, kind(v))
	}
	return child, nil
}

// Array returns the array at key (nil if key is absent); a key holding
// something else is an error.
func (o *Object) Array(key string) ([]any, error) {
	v, ok := o.vals[key]
	if !ok {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%q is %s, not an array", key, kind(v))
	}
	return list, nil
}

// kind is how an error names v's JSON type.
func kind(v any) string {
	switch v.(type) {
	case *Object:
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

// Decode reads a JSON object keeping its key order, and its numbers as
// written (json.Number). Empty input and null read as an empty object. A
// key given twice keeps its first place and takes its last value, as
// JSON.parse (and so Claude Code) reads it. Anything else than one object is
// an error.
func Decode(data []byte) (*Object, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return NewObject(), nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more after the object")
	}
	switch v := v.(type) {
	case *Object:
		return v, nil
	case nil:
		return NewObject(), nil
	}
	return nil, fmt.Errorf("the file holds %s, not an object", kind(v))
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := NewObject()
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			o.Set(key.(string), v)
		}
		_, err := dec.Token() // '}'
		return o, err
	case json.Delim('['):
		list := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
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

// Encode writes v (an *Object or any value an Object holds) indented by
// indent per level, lines ending in newline and a newline after the last,
// as encoding/json's MarshalIndent would but in v's own key order and
// without HTML escapes. A value of another type is an error.
func Encode(v any, indent, newline string) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeValue(&buf, v, indent, newline); err != nil {
		return nil, err
	}
	buf.WriteString(newline)
	return buf.Bytes(), nil
}

// EncodeValue writes v as Encode does, with no newline after it: newline
// carries the indentation of the line v starts on, so that v can take the
// place of a value inside a document. With indent and newline both empty,
// v is written on one line, `{"a": 1, "b": [true, null]}`.
func EncodeValue(v any, indent, newline string) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeValue(&buf, v, indent, newline); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeValue(buf *bytes.Buffer, v any, indent, newline string) error {
	inner := newline + indent // newline carries the current level's indentation
	sep := ","
	if inner == "" { // one line
		sep = ", "
	}
	switch v := v.(type) {
	case *Object:
		if len(v.keys) == 0 {
			buf.WriteString("{}")
			return nil
		}
		buf.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				buf.WriteString(sep)
			}
			buf.WriteString(inner)
			writeString(buf, k)
			buf.WriteString(": ")
			if err := writeValue(buf, v.vals[k], indent, inner); err != nil {
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
				buf.WriteString(sep)
			}
			buf.WriteString(inner)
			if err := writeValue(buf, e, indent, inner); err != nil {
				return err
			}
		}
		buf.WriteString(newline)
		buf.WriteByte(']')
	case string:
		writeString(buf, v)
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

func writeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	buf.Truncate(buf.Len() - 1)
}

// Layout is the indentation and line end a JSON file uses, for Encode: the
// white space that starts its first indented line (else two spaces), and
// CRLF if its lines end so (else LF).
func Layout(data []byte) (indent, newline string) {
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
