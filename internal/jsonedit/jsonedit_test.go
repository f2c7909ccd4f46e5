package jsonedit

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestRoundTrip: a file already laid out as Encode writes it reads and
// writes back byte for byte, keys in their order, numbers as written.
func TestRoundTrip(t *testing.T) {
	cases := []struct{ name, text string }{
		{"two spaces", "{\n  \"z\": 1.0,\n  \"a\": [\n    true,\n    null,\n    \"<b>&\"\n  ],\n  \"m\": {}\n}\n"},
		{"four spaces", "{\n    \"b\": {\n        \"y\": [],\n        \"x\": 12345678901234567890\n    },\n    \"a\": \"\\u001b\"\n}\n"},
		{"tabs and CRLF", "{\r\n\t\"b\": 1,\r\n\t\"a\": 2\r\n}\r\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := Decode([]byte(c.text))
			if err != nil {
				t.Fatal(err)
			}
			indent, newline := Layout([]byte(c.text))
			got, err := Encode(o, indent, newline)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.text {
				t.Errorf("got\n%q\nwant\n%q", got, c.text)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	cases := []struct {
		name, text string
		keys       []string // nil: an error
		a          any      // the value of "a", if any
	}{
		{"empty file", " \n", []string{}, nil},
		{"null", "null", []string{}, nil},
		{"a key twice keeps its first place and its last value", `{"a": 1, "b": 2, "a": 3}`, []string{"a", "b"}, json.Number("3")},
		{"an array", `[1]`, nil, nil},
		{"not JSON", `{"a": }`, nil, nil},
		{"two objects", `{} {}`, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := Decode([]byte(c.text))
			if c.keys == nil {
				if err == nil {
					t.Fatalf("read %q without an error", c.text)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(o.keys) != len(c.keys) || (len(c.keys) > 0 && !slices.Equal(o.keys, c.keys)) {
				t.Errorf("keys %q, want %q", o.keys, c.keys)
			}
			if a, _ := o.Get("a"); a != c.a {
				t.Errorf("a = %v, want %v", a, c.a)
			}
		})
	}
}

// TestEdit: Set replaces a value where its key stands and appends a new
// key; Remove takes a key out; Object and Array return what a key holds,
// Object appending an empty object for a key not there, and name what a key
// holds when it is something else.
func TestEdit(t *testing.T) {
	o, err := Decode([]byte(`{"b": 1, "a": {"x": []}, "s": "text"}`))
	if err != nil {
		t.Fatal(err)
	}
	o.Set("b", 2).Set("c", true)
	o.Remove("a")
	o.Remove("nothing")
	if _, err := o.Object("new"); err != nil {
		t.Fatal(err)
	}
	if list, err := o.Array("missing"); list != nil || err != nil {
		t.Errorf("Array of a missing key: %v, %v; want nil, nil", list, err)
	}
	if _, err := o.Object("s"); err == nil || err.Error() != `"s" is a string, not an object` {
		t.Errorf("Object of a string: %v", err)
	}
	if _, err := o.Array("b"); err == nil || err.Error() != `"b" is a number, not an array` {
		t.Errorf("Array of a number: %v", err)
	}
	got, err := Encode(o, "  ", "\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"b\": 2,\n  \"s\": \"text\",\n  \"c\": true,\n  \"new\": {}\n}\n"; string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
