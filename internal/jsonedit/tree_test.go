package jsonedit

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Gemini CLI's settings.json: comments, no trailing commas.
var commentsOnly = Syntax{Comments: true}

// TestParseSpans: each value's Start and End enclose exactly its text,
// comments and commas around it left out, in JSON and in JSONC.
func TestParseSpans(t *testing.T) {
	text := `// servers
{
  "servers": {
    /* the first */ "a": {"command": "npx", "args": ["-y", "x",],}, // after a
    "b": [1, 2.50, -0e+1, true, null, "s\u00e9\"\\"],
  },
  "inputs": [],
}
`
	root, err := Parse([]byte(text), JSONC)
	if err != nil {
		t.Fatal(err)
	}
	servers, n := root.Lookup("servers")
	if n != 1 || !servers.IsObject() {
		t.Fatalf("servers: %d, %v", n, servers)
	}
	for key, want := range map[string]string{
		"a": `{"command": "npx", "args": ["-y", "x",],}`,
		"b": `[1, 2.50, -0e+1, true, null, "s\u00e9\"\\"]`,
	} {
		v, _ := servers.Lookup(key)
		if got := text[v.Start:v.End]; got != want {
			t.Errorf("%s: %q, want %q", key, got, want)
		}
	}
	if got := strings.Join(servers.Keys(), ","); got != "a,b" {
		t.Errorf("keys %s", got)
	}
	b, _ := servers.Lookup("b")
	want := []any{json.Number("1"), json.Number("2.50"), json.Number("-0e+1"), true, nil, "sé\"\\"}
	if got := b.Value(); !reflect.DeepEqual(got, want) {
		t.Errorf("b's value %#v, want %#v", got, want)
	}
	if m := servers.Members[0]; text[m.KeyStart:m.KeyStart+3] != `"a"` {
		t.Errorf("a's key starts at %q", text[m.KeyStart:])
	}
}

// TestParseRefuses: what each syntax's reader refuses, Parse refuses,
// naming the line and column.
func TestParseRefuses(t *testing.T) {
	cases := []struct {
		name, text string
		syn        Syntax
		want       string
	}{
		{"a comment in JSON", "{\n  // no\n  \"a\": 1\n}", JSON, "line 2, column 3: a comment"},
		{"a trailing comma in JSON", `{"a": 1,}`, JSON, "column 8: a comma before }"},
		{"a trailing comma where only comments go", `{"a": [1,]}`, commentsOnly, "a comma before ]"},
		{"a comment that never ends", "{} /* no end", JSONC, "never ends"},
		{"a comma alone", `{,}`, JSONC, "where a key in double quotes should be"},
		{"an empty element", `[1,,2]`, JSONC, "where a value should be"},
		{"an array of a comma", `[,]`, JSONC, "where a value should be"},
		{"an unquoted key", `{a: 1}`, JSONC, "where a key in double quotes should be"},
		{"a single-quoted string", `{"a": 'x'}`, JSONC, "where a value should be"},
		{"a bad escape", `{"a": "\x41"}`, JSONC, `the escape \x`},
		{"a short unicode escape", `{"a": "\u41"}`, JSONC, `\u escape`},
		{"a raw tab in a string", "{\"a\": \"x\ty\"}", JSONC, "a control character"},
		{"a leading zero", `{"a": 01}`, JSONC, "leading zero"},
		{"a bare minus", `[-]`, JSONC, "without digits"},
		{"a point with no digits", `[1.]`, JSONC, "after its point"},
		{"an exponent with no digits", `[1e]`, JSONC, "exponent"},
		{"two values", `{} {}`, JSONC, "more after the value"},
		{"nothing", " \n // only a comment\n", JSONC, "no JSON value"},
		{"cut short", `{"a": [1, 2`, JSONC, "ends before its ]"},
		{"no colon", `{"a" 1}`, JSONC, `no : after the key "a"`},
		{"a string that never ends", `{"a": "x`, JSONC, "never ends"},
		{"NaN", `[NaN]`, JSONC, "where a value should be"},
		{"a byte order mark", "\ufeff{}", JSONC, "where a value should be"},
		{"too deep", strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2), JSON, "nested deeper"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.text), c.syn)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "line ") {
				t.Errorf("error %v, want one naming a line and saying %q", err, c.want)
			}
		})
	}
}

// TestEncodeValueOneLine: with no indentation and no newline, a value is
// written on one line, as a person writes a short entry.
func TestEncodeValueOneLine(t *testing.T) {
	v := NewObject().Set("command", "askd").Set("args", []any{"gate", "mcp"}).Set("env", NewObject())
	got, err := EncodeValue(v, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"command": "askd", "args": ["gate", "mcp"], "env": {}}`; string(got) != want {
		t.Errorf("%s, want %s", got, want)
	}
	got, _ = EncodeValue(v, "  ", "\n    ")
	if want := "{\n      \"command\": \"askd\",\n      \"args\": [\n        \"gate\",\n        \"mcp\"\n      ],\n      \"env\": {}\n    }"; string(got) != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// FuzzParse: on plain JSON, Parse agrees with encoding/json: it accepts
// exactly what json.Valid does, and reads the same values Decode reads;
// every node's span is inside the text and re-parses to the same value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `{"a": [1, {"b": null}], "a": "x"}`, `[1e5, -0.5, "\ud83d\ude00"]`, `"x"`, `{"a":1,}`, `01`, `[1 2]`, "{\"\x01\": 1}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		n, err := Parse([]byte(text), JSON)
		if (err == nil) != json.Valid([]byte(text)) {
			t.Fatalf("Parse %q: %v; json.Valid says %v", text, err, json.Valid([]byte(text)))
		}
		if err != nil {
			return
		}
		if o, ok := n.Value().(*Object); ok {
			d, err := Decode([]byte(text))
			if err != nil || !reflect.DeepEqual(o, d) {
				t.Fatalf("Parse read %#v, Decode %#v (%v)", o, d, err)
			}
		}
		var walk func(n *Node)
		walk = func(n *Node) {
			again, err := Parse([]byte(text[n.Start:n.End]), JSON)
			if err != nil || !reflect.DeepEqual(again.Value(), n.Value()) {
				t.Fatalf("the span %q of %q reads %v (%v)", text[n.Start:n.End], text, again, err)
			}
			for _, m := range n.Members {
				walk(m.Value)
			}
			for _, it := range n.Items {
				walk(it)
			}
		}
		walk(n)
	})
}
