package tomledit

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const doc = `# top
name = "x"

[servers.askd]
url = "http://127.0.0.1:7777/mcp"
env = { A = "1" }

[[hooks.Stop]]
[[hooks.Stop.hooks]]
command = """
two
lines"""
`

// TestParse: every top-level line in order, with its kind, full key path,
// whole lines (a value over several lines included) and string value.
func TestParse(t *testing.T) {
	items, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, fmt.Sprintf("%d %s %q %q", it.Kind, strings.Join(it.Path, "."), doc[it.Start:it.End], it.Value))
	}
	want := []string{
		fmt.Sprintf("%d  %q \"\"", Comment, "# top\n"),
		fmt.Sprintf("%d name %q \"x\"", KeyValue, "name = \"x\"\n"),
		fmt.Sprintf("%d servers.askd %q \"\"", Table, "[servers.askd]\n"),
		fmt.Sprintf("%d servers.askd.url %q \"http://127.0.0.1:7777/mcp\"", KeyValue, "url = \"http://127.0.0.1:7777/mcp\"\n"),
		fmt.Sprintf("%d servers.askd.env %q \"\"", KeyValue, "env = { A = \"1\" }\n"),
		fmt.Sprintf("%d hooks.Stop %q \"\"", ArrayTable, "[[hooks.Stop]]\n"),
		fmt.Sprintf("%d hooks.Stop.hooks %q \"\"", ArrayTable, "[[hooks.Stop.hooks]]\n"),
		fmt.Sprintf("%d hooks.Stop.hooks.command %q \"two\\nlines\"", KeyValue, "command = \"\"\"\ntwo\nlines\"\"\"\n"),
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if items[0].Raw != "# top" || !items[2].Header() || items[1].Header() {
		t.Errorf("comment %q, headers %v %v", items[0].Raw, items[2].Header(), items[1].Header())
	}
	if n := CountTables(items, []string{"servers", "askd"}); n != 1 {
		t.Errorf("CountTables = %d, want 1", n)
	}
	if _, err := Parse([]byte("[a\n")); err == nil {
		t.Error("a header left open parsed")
	}
}

// TestSections: each header with its key-values; the key-values above the
// first header belong to none.
func TestSections(t *testing.T) {
	items, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := []Section{{Header: 2, Last: 4}, {Header: 5, Last: 5}, {Header: 6, Last: 7}}
	if got := Sections(items); !slices.Equal(got, want) {
		t.Errorf("%+v, want %+v", got, want)
	}
}

// TestSplice: the ranges cut, the block appended after a blank line, in the
// document's line ends; spliced again in place of the block, the same text.
func TestSplice(t *testing.T) {
	const block = "[b]\nx = 1\n"
	for _, c := range []struct {
		name, data string
		cuts       [][2]int
		want       string
	}{
		{"empty", "", nil, block},
		{"no newline at the end", "a = 1", nil, "a = 1\n\n" + block},
		{"a blank line there", "a = 1\n\n", nil, "a = 1\n\n" + block},
		{"a table cut", "a = 1\n\n[b]\nx = 0\n\n[c]\n", [][2]int{{7, 18}}, "a = 1\n\n[c]\n\n" + block},
		{"CRLF", "a = 1\r\n", nil, "a = 1\r\n\r\n[b]\r\nx = 1\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := string(Splice([]byte(c.data), c.cuts, block))
			if got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			start := strings.LastIndex(got, "[b]")
			if again := string(Splice([]byte(got), [][2]int{{start, len(got)}}, block)); again != got {
				t.Errorf("spliced again: %q, want %q", again, got)
			}
		})
	}
}

// TestDecode: a document's values; a mistake names its line.
func TestDecode(t *testing.T) {
	d, err := Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if d["name"] != "x" {
		t.Errorf("name = %v", d["name"])
	}
	if d, err := Decode(nil); err != nil || d == nil || len(d) != 0 {
		t.Errorf("an empty document: %v, %v", d, err)
	}
	if _, err := Decode([]byte("a = 1\nb = \n")); err == nil || !strings.HasPrefix(err.Error(), "line 2: not valid TOML") {
		t.Errorf("err = %v, want one naming line 2", err)
	}
}

// TestLines: line numbers, blank lines skipped, key prefixes.
func TestLines(t *testing.T) {
	data := []byte("a\n\n \nb\n")
	if LineOf(data, 0) != 1 || LineOf(data, 5) != 4 {
		t.Errorf("LineOf: %d %d", LineOf(data, 0), LineOf(data, 5))
	}
	if got := BlankLinesAfter(data, 2); got != 5 {
		t.Errorf("BlankLinesAfter = %d, want 5", got)
	}
	if !HasPrefix([]string{"a", "b"}, []string{"a"}) || HasPrefix([]string{"a"}, []string{"a", "b"}) || HasPrefix([]string{"ab"}, []string{"a"}) {
		t.Error("HasPrefix")
	}
}

// TestQuote: what Quote writes, a TOML parser reads back as it was.
func TestQuote(t *testing.T) {
	list := []string{"", "plain", `"quoted" \ back`, "tab\tnew\nline\r\f\b", "\x00\x1f\x7f", "é ü 😀 \u2028", "$HOME ${X} 'single'"}
	text := "a = " + QuoteList(list) + "\n"
	for _, s := range list {
		text += "k" + strconv.Itoa(len(text)) + " = " + Quote(s) + "\n"
	}
	got, err := Decode([]byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	read, _ := got["a"].([]any)
	if len(read) != len(list) {
		t.Fatalf("read %v", got["a"])
	}
	for i, s := range list {
		if read[i] != s {
			t.Errorf("%q read back as %q", s, read[i])
		}
	}
	if q := Quote("a\xffb"); q != "\"a\uFFFDb\"" {
		t.Errorf("invalid UTF-8 quoted %q", q)
	}
}
