package askd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Decode parses data into v strictly: a field v does not have is refused by its
// path (`questions[0].colour: unknown field`), a value of the wrong type by its
// path and the type wanted, and anything after the JSON value is refused. Errors
// are EINVALID *Errors.
func Decode(data []byte, v any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return Errorf(EINVALID, "body: empty, want a JSON object")
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return Errorf(EINVALID, "body: not valid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return Errorf(EINVALID, "body: more than one JSON value")
	}
	if _, ok := tree.(map[string]any); !ok {
		return Errorf(EINVALID, "body: %s, want a JSON object", jsonKind(tree))
	}
	if msg := unknownFields(tree, reflect.TypeOf(v), ""); msg != "" {
		return Errorf(EINVALID, "%s", msg)
	}
	if err := json.Unmarshal(data, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return Errorf(EINVALID, "%s: %s, want %s", fieldPath(te.Field), te.Value, typeName(te.Type))
		}
		var ve *Error
		if errors.As(err, &ve) {
			return ve
		}
		return Errorf(EINVALID, "body: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// unknownFields walks the decoded JSON beside the Go type and returns the first
// object key the type has no field for, as "path: unknown field".
func unknownFields(node any, t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType {
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
				if msg := unknownFields(n[k], f, p); msg != "" {
					return msg
				}
			}
		case reflect.Map:
			for _, k := range sortedKeys(n) {
				if msg := unknownFields(n[k], t.Elem(), fmt.Sprintf("%s[%q]", path, k)); msg != "" {
					return msg
				}
			}
		}
	case []any:
		if t.Kind() == reflect.Slice {
			for i, e := range n {
				if msg := unknownFields(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); msg != "" {
					return msg
				}
			}
		}
	}
	return ""
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
	// Stable messages: report the first unknown key in sorted order.
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
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
	case reflect.Int, reflect.Int64, reflect.Int32:
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
