package strictjson_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/strictjson"
)

// benchBody is an approval body with n lines of details and n payload items.
func benchBody(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"kind":"approval","title":"Allow Bash: make test","details":"`)
	b.WriteString(strings.Repeat(`line of a diff with some text \u00e9 and \"quotes\"\n`, n))
	b.WriteString(`","payload":{"command":"make test","env":{"A":"1","B":"2"},"files":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"path":"src/file%d.go","lines":[1,2,3],"note":"日本語"}`, i)
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}

// BenchmarkStrict compares the strict scan with the whole of Decode on bodies
// of a few hundred bytes to half a MiB: the scan was 5–10% of Decode's time.
func BenchmarkStrict(b *testing.B) {
	for _, n := range []int{1, 100, 5000} {
		body := benchBody(n)
		b.Run(fmt.Sprintf("Check/%dB", len(body)), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, r := strictjson.Check(body); r != "" {
					b.Fatal(r)
				}
			}
		})
		b.Run(fmt.Sprintf("Decode/%dB", len(body)), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var in askd.AskInput
				if err := askd.Decode(body, &in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzCheckJSON holds Check to a reference built on encoding/json's
// tokenizer: on valid JSON it never panics, it passes nothing with a key twice
// in one object or bytes that are not UTF-8, and every problem it names is one
// (a key twice, or text that is not UTF-8 or not characters).
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `"x"`, `1`, `{"a":1,"b":{"a":2}}`, `{"a":1,"a":2}`, `{"a":{"b":[{"c":1,"c":2}]}}`,
		`{"\u0061":1,"a":2}`, `{"a\"b":1,"a\"b":2}`, "{\"a\":\"\xff\"}", "{\"\xff\":1}", `{"a":"\ud800"}`,
		`{"a":"\ud83d\ude00"}`, `{"a":"\udc00\ud800"}`, `[{"k":1},{"k":1}]`, manyKeysBody(40, true), manyKeysBody(40, false),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		path, rule := strictjson.Check(data)
		dup := refDuplicate(data)
		if rule == "" && (dup || !utf8.Valid(data)) {
			t.Fatalf("passed %q (duplicate %v, UTF-8 %v)", data, dup, utf8.Valid(data))
		}
		if strings.HasPrefix(rule, "duplicate key") && !dup {
			t.Fatalf("%s: %s, but no key is given twice in %q", path, rule, data)
		}
		if rule != "" && !strings.HasPrefix(rule, "duplicate key") && utf8.Valid(data) && !strings.Contains(string(data), `\u`) {
			t.Fatalf("%s: %s, but %q is UTF-8 without escapes", path, rule, data)
		}
	})
}

// refDuplicate reports whether some object in data, valid JSON, has a key
// twice, by encoding/json's tokens (which unescape keys).
func refDuplicate(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type level struct {
		object bool
		keys   map[string]bool
		key    bool // the next token in this object is a key
	}
	var stack []*level
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			if k, ok := tok.(string); ok {
				if top.keys[k] {
					return true
				}
				top.keys[k] = true
				top.key = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &level{object: true, keys: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &level{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true // a value ended: a key comes next
		}
	}
}

func manyKeysBody(n int, dup bool) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	if dup {
		b.WriteString(`"k3":0,`)
	}
	b.WriteString(`"end":1}`)
	return b.String()
}
