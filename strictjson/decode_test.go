package strictjson_test

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// into is the type a decodeTests body is decoded into.
type into int

const (
	intoAsk into = iota
	intoAnswer
	intoPermission
)

func (i into) value() any {
	switch i {
	case intoAnswer:
		return new(askd.Answer)
	case intoPermission:
		return new(askd.PermissionInput)
	}
	return new(askd.AskInput)
}

// decodeTests are Decode's cases, at package level so that FuzzDecodeSame
// starts from their bodies too.
var decodeTests = []struct {
	name string
	into into
	body string
	want string // exact message; "" for success
	// prefix, when set, is checked instead of want for messages that quote
	// encoding/json's own syntax errors.
	prefix string
}{
	// success
	{name: "question ask", body: `{"kind":"question","questions":[{"question":"Which database?","header":"Database",
			"options":[{"label":"SQLite","description":"embedded"},{"label":"Postgres","preview":"# pg"}],"multiSelect":false}]}`},
	{name: "approval with any payload inside", body: `{"kind":"approval","title":"t","payload":{"Anything":{"deep":[1,{"x":null}]}}}`},
	{name: "JSON whitespace around", body: " \n\t{\"kind\":\"ready\"}\r\n "},
	{name: "null fits any field", body: `{"kind":null,"questions":null,"grace_seconds":null,"options":[null]}`},
	{name: "answer", into: intoAnswer, body: `{"answers":{"Which database?":"SQLite","Which checks?":["lint"]},"response":"r"}`},
	{name: "answer keys with dots and brackets", into: intoAnswer, body: `{"answers":{"a.b [c]?":"x"}}`},
	{name: "permission input", into: intoPermission, body: `{"tool_name":"Bash","input":{"command":"ls","Extra":1},"tool_use_id":"t1"}`},

	// unknown fields, by path
	{name: "unknown top-level field", body: `{"kind":"question","bogus":1}`, want: "bogus: unknown field"},
	{name: "unknown field in a question", body: `{"questions":[{"question":"q","header":"h","colour":"red"}]}`,
		want: "questions[0].colour: unknown field"},
	{name: "unknown field in a later question", body: `{"questions":[{"question":"q"},{"question":"r","hint":"x"}]}`,
		want: "questions[1].hint: unknown field"},
	{name: "unknown field in a question's option", body: `{"questions":[{"options":[{"label":"a"},{"label":"b","icon":"x"}]}]}`,
		want: "questions[0].options[1].icon: unknown field"},
	{name: "unknown field in a decision option", body: `{"kind":"decision","options":[{"label":"a","url":"https://x"}]}`,
		want: "options[0].url: unknown field"},
	{name: "field names match exactly", body: `{"questions":[{"Header":"h"}]}`, want: "questions[0].Header: unknown field"},
	{name: "Kind is not kind", body: `{"Kind":"question"}`, want: "Kind: unknown field"},
	{name: "multiselect is not multiSelect", body: `{"questions":[{"multiselect":true}]}`, want: "questions[0].multiselect: unknown field"},
	{name: "first unknown field in sorted order", body: `{"zeta":1,"kind":"ready","alpha":2}`, want: "alpha: unknown field"},
	{name: "empty key quoted", body: `{"":1}`, want: `[""]: unknown field`},
	{name: "key with a dot quoted", body: `{"title.x":1}`, want: `["title.x"]: unknown field`},
	{name: "nested odd key quoted", body: `{"questions":[{"my header":"h"}]}`, want: `questions[0]["my header"]: unknown field`},
	{name: "unknown answer field", into: intoAnswer, body: `{"answers":{"q":"a"},"extra":true}`, want: "extra: unknown field"},
	{name: "unknown permission field", into: intoPermission, body: `{"tool_name":"Bash","input":{},"toolUseId":"x"}`,
		want: "toolUseId: unknown field"},

	// strict JSON: no key twice in an object, at any depth; UTF-8 only
	{name: "duplicate top-level key", body: `{"kind":"ready","title":"a","kind":"action"}`,
		want: "kind: " + dupKey},
	{name: "duplicate header", body: `{"questions":[{"question":"q","header":"a","header":"b"}]}`,
		want: "questions[0].header: " + dupKey},
	{name: "duplicate label in a later option", body: `{"questions":[{"options":[{"label":"a"},{"label":"b","label":"c"}]}]}`,
		want: "questions[0].options[1].label: " + dupKey},
	{name: "duplicate spelled with an escape", body: `{"title":"a","\u0074itle":"b"}`, want: "title: " + dupKey},
	{name: "duplicate after a string with quotes", body: `{"title":"say \"hi\", \\","title":"x"}`, want: "title: " + dupKey},
	{name: "duplicate in the payload", body: `{"kind":"approval","title":"t","payload":{"cmd":"ls","env":{"A":"1","A":"2"}}}`,
		want: "payload.env.A: " + dupKey},
	{name: "duplicate in a list in the payload", body: `{"kind":"approval","payload":{"steps":[{},{"run":"a","run":"b"}]}}`,
		want: "payload.steps[1].run: " + dupKey},
	{name: "duplicate odd key quoted", body: `{"kind":"approval","payload":{"a b":1,"a b":2}}`,
		want: `payload["a b"]: ` + dupKey},
	{name: "duplicate among many keys", body: manyKeys(40, "k7"), want: "payload.k7: " + dupKey},
	{name: "duplicate question in answers", into: intoAnswer, body: `{"answers":{"Which?":"a","Which?":"b"}}`,
		want: `answers["Which?"]: ` + dupKey},
	{name: "duplicate decision", into: intoAnswer, body: `{"decision":"rejected","decision":"approved"}`,
		want: "decision: " + dupKey},
	{name: "duplicate in a permission input", into: intoPermission, body: `{"tool_name":"Bash","input":{"command":"ls","command":"rm -rf ~"}}`,
		want: "input.command: " + dupKey},
	{name: "duplicate before an unknown field", body: `{"bogus":1,"bogus":2}`, want: "bogus: " + dupKey},
	{name: "same key in sibling objects", body: `{"questions":[{"question":"a","header":"h"},{"question":"b","header":"h"}]}`},
	{name: "same key at another depth", body: `{"kind":"approval","payload":{"kind":{"kind":1}}}`},
	{name: "keys differing in case", body: `{"kind":"approval","payload":{"a":1,"A":2}}`},
	{name: "many distinct keys", body: manyKeys(40, "")},
	{name: "title invalid UTF-8", body: "{\"kind\":\"ready\",\"title\":\"bad \xff byte\"}",
		want: "title: not valid UTF-8 (byte 0xff)"},
	{name: "label truncated UTF-8", body: "{\"options\":[{\"label\":\"a\"},{\"label\":\"\xe2\x80\"}]}",
		want: "options[1].label: not valid UTF-8 (byte 0xe2)"},
	{name: "overlong UTF-8", body: "{\"title\":\"\xc0\xaf\"}", want: "title: not valid UTF-8 (byte 0xc0)"},
	{name: "UTF-8 of a surrogate", body: "{\"title\":\"\xed\xa0\x80\"}", want: "title: not valid UTF-8 (byte 0xed)"},
	{name: "invalid UTF-8 in a key", body: "{\"ti\xfftle\":\"x\"}", want: `["ti\xfftle"]: not valid UTF-8 (byte 0xff)`},
	{name: "invalid UTF-8 in the payload", body: "{\"kind\":\"approval\",\"payload\":{\"a\":[\"\xff\"]}}",
		want: "payload.a[0]: not valid UTF-8 (byte 0xff)"},
	{name: "invalid UTF-8 in own words", into: intoAnswer, body: "{\"answers\":{\"q\":[\"a\",\"\x80\"]}}",
		want: `answers.q[1]: not valid UTF-8 (byte 0x80)`},
	{name: "lone high surrogate", body: `{"title":"a\ud800"}`, want: `title: \ud800 is half of a surrogate pair, not a character`},
	{name: "high surrogate then a letter", body: `{"title":"\ud800\u0041"}`, want: `title: \ud800 is half of a surrogate pair, not a character`},
	{name: "lone low surrogate", body: `{"details":"\uDC00"}`, want: `details: \udc00 is half of a surrogate pair, not a character`},
	{name: "surrogate pair", body: `{"kind":"ready","title":"\ud83d\ude00 \u00e9"}`},
	{name: "UTF-8 of every length", body: `{"kind":"ready","title":"é € 😀"}`},

	// wrong types, by path
	{name: "kind a number", body: `{"kind":5}`, want: "kind: a number, want a string"},
	{name: "header a number on the second question", body: `{"questions":[{"header":"h"},{"header":7}]}`,
		want: "questions[1].header: a number, want a string"},
	{name: "label a boolean", body: `{"options":[{"label":"a"},{"label":true}]}`, want: "options[1].label: a boolean, want a string"},
	{name: "questions an object", body: `{"questions":{"question":"q"}}`, want: "questions: an object, want a list"},
	{name: "question a string", body: `{"questions":["Which?"]}`, want: "questions[0]: a string, want an object"},
	{name: "multiSelect a string", body: `{"questions":[{"multiSelect":"yes"}]}`, want: "questions[0].multiSelect: a string, want true or false"},
	{name: "grace_seconds a string", body: `{"grace_seconds":"30"}`, want: "grace_seconds: a string, want an integer"},
	{name: "grace_seconds a fraction", body: `{"grace_seconds":1.5}`, want: "grace_seconds: 1.5, want an integer"},
	{name: "grace_seconds in exponent form", body: `{"grace_seconds":3e1}`, want: "grace_seconds: 3e1, want an integer"},
	{name: "grace_seconds beyond int64", body: `{"grace_seconds":99999999999999999999}`,
		want: "grace_seconds: 99999999999999999999, want an integer"},
	{name: "title a list", body: `{"title":["a"]}`, want: "title: a list, want a string"},
	{name: "answers a list", into: intoAnswer, body: `{"answers":["SQLite"]}`, want: "answers: a list, want an object"},
	{name: "choice a number", into: intoAnswer, body: `{"answers":{"q":5}}`, want: "answers: each value must be a string or a list of strings"},
	{name: "choice an object", into: intoAnswer, body: `{"answers":{"q":{"x":1}}}`, want: "answers: each value must be a string or a list of strings"},
	{name: "choice a list of numbers", into: intoAnswer, body: `{"answers":{"q":[1,2]}}`, want: "answers: each value must be a string or a list of strings"},
	{name: "decision a number", into: intoAnswer, body: `{"decision":1}`, want: "decision: a number, want a string"},
	{name: "tool_name an object", into: intoPermission, body: `{"tool_name":{}}`, want: "tool_name: an object, want a string"},

	// bodies that are not one JSON object
	{name: "empty body", body: ``, want: "body: empty, want a JSON object"},
	{name: "whitespace body", body: " \r\n\t", want: "body: empty, want a JSON object"},
	{name: "list body", body: `[{"kind":"ready"}]`, want: "body: a list, want a JSON object"},
	{name: "string body", body: `"ready"`, want: "body: a string, want a JSON object"},
	{name: "number body", body: `42`, want: "body: a number, want a JSON object"},
	{name: "boolean body", body: `true`, want: "body: a boolean, want a JSON object"},
	{name: "null body", body: `null`, want: "body: null, want a JSON object"},
	{name: "two objects", body: `{"kind":"ready"} {"kind":"action"}`, want: "body: more than one JSON value"},
	{name: "object then a word", body: `{}x`, want: "body: more than one JSON value"},
	{name: "stray closing brace", body: `{"kind":"ready"}}`, prefix: "body: "},
	{name: "truncated", body: `{"kind":"ready"`, prefix: "body: not valid JSON: "},
	{name: "single quotes", body: `{'kind':'ready'}`, prefix: "body: not valid JSON: "},
	{name: "non-JSON space before", body: "\u00a0{}", prefix: "body: not valid JSON: "},
	{name: "byte order mark before", body: "\ufeff{}", prefix: "body: not valid JSON: "},
}

// Decode's words are tested through askd.Decode, the door every adapter
// decodes a body through, so that each case also checks the code (EINVALID)
// callers get; FuzzDecodeSame holds strictjson.Decode itself to the old
// decoder.
func TestDecode(t *testing.T) {
	for _, tt := range decodeTests {
		t.Run(tt.name, func(t *testing.T) {
			err := askd.Decode([]byte(tt.body), tt.into.value())
			if tt.prefix == "" {
				wantInvalid(t, err, tt.want)
				return
			}
			if askd.ErrorCode(err) != askd.EINVALID || !strings.HasPrefix(askd.ErrorMessage(err), tt.prefix) {
				t.Errorf("got %v (code %q), want an EINVALID error starting %q", err, askd.ErrorCode(err), tt.prefix)
			}
		})
	}
}

func TestDecodeValues(t *testing.T) {
	var in askd.AskInput
	body := `{"kind":"approval","title":"Deploy","details":"make deploy","payload":{"env":"prod"},
		"grace_seconds":0,"tool_name":"Bash","tool_use_id":"toolu_9"}`
	if err := askd.Decode([]byte(body), &in); err != nil {
		t.Fatal(err)
	}
	want := askd.AskInput{Kind: askd.KindApproval, Title: "Deploy", Details: "make deploy",
		Payload: json.RawMessage(`{"env":"prod"}`), GraceSeconds: intPtr(0), ToolName: "Bash", ToolUseID: "toolu_9"}
	if !reflect.DeepEqual(in, want) {
		t.Errorf("got  %#v\nwant %#v", in, want)
	}
}

const dupKey = "duplicate key; each key may appear once in an object"

// manyKeys is an approval body whose payload has n keys k0, k1, ..., and then
// dup once more when dup is not "".
func manyKeys(n int, dup string) string {
	var b strings.Builder
	b.WriteString(`{"kind":"approval","payload":{`)
	for i := range n {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	if dup != "" {
		fmt.Fprintf(&b, `%q:0,`, dup)
	}
	b.WriteString(`"end":true}}`)
	return b.String()
}

// The values Decode gives are the ones in the body: nothing replaced.
func TestDecodeKeepsText(t *testing.T) {
	var in askd.AskInput
	body := `{"kind":"ready","title":"\ud83d\ude00 caf\u00e9 \u2028","details":"a\u0000b"}`
	if err := askd.Decode([]byte(body), &in); err != nil {
		t.Fatal(err)
	}
	if in.Title != "😀 café \u2028" || in.Details != "a\x00b" {
		t.Errorf("title %q, details %q", in.Title, in.Details)
	}
}

// openHook is a hook input as askd reads it, for DecodeOpen.
type openHook struct {
	SessionID string          `json:"session_id"`
	ToolInput json.RawMessage `json:"tool_input"`
	Active    bool            `json:"stop_hook_active"`
}

var decodeOpenTests = []struct {
	name   string
	body   string
	want   string
	prefix string
}{
	{name: "unknown fields ignored", body: `{"session_id":"s","cwd":"/x","transcript_path":"t","tool_input":{"a":1}}`},
	{name: "duplicate key", body: `{"session_id":"a","session_id":"b"}`, want: "session_id: " + dupKey},
	{name: "duplicate in an unknown field", body: `{"cwd":{"x":1,"x":2}}`, want: "cwd.x: " + dupKey},
	{name: "duplicate in the tool input", body: `{"tool_input":{"command":"ls","command":"rm"}}`,
		want: "tool_input.command: " + dupKey},
	{name: "invalid UTF-8", body: "{\"tool_input\":{\"command\":\"\xff\"}}", want: "tool_input.command: not valid UTF-8 (byte 0xff)"},
	{name: "lone surrogate in an unknown field", body: `{"prompt":"\ud800"}`, want: `prompt: \ud800 is half of a surrogate pair, not a character`},
	{name: "wrong type", body: `{"stop_hook_active":"yes"}`, want: "stop_hook_active: string, want true or false"},
	{name: "not an object", body: `[]`, want: "body: a list, want a JSON object"},
	{name: "not JSON", body: `{"a":`, prefix: "body: not valid JSON: "},
}

// DecodeOpen reads bodies with fields askd does not know, such as Claude
// Code's hook inputs: those are ignored, and the rest is as strict as Decode.
func TestDecodeOpen(t *testing.T) {
	for _, tt := range decodeOpenTests {
		t.Run(tt.name, func(t *testing.T) {
			var h openHook
			err := askd.DecodeOpen([]byte(tt.body), &h)
			if tt.prefix != "" {
				if askd.ErrorCode(err) != askd.EINVALID || !strings.HasPrefix(askd.ErrorMessage(err), tt.prefix) {
					t.Errorf("got %v, want an EINVALID error starting %q", err, tt.prefix)
				}
				return
			}
			wantInvalid(t, err, tt.want)
		})
	}
}

// A body of very many keys is refused or accepted in linear-ish time: the key
// sort once was quadratic (seconds at well under 1 MiB).
func TestDecodeManyKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"answers":{`)
	const n = 40000
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%d":"x"`, (i*7919)%n)
	}
	b.WriteString(`}}`)
	var ans askd.Answer
	if err := askd.Decode([]byte(b.String()), &ans); err != nil {
		t.Fatal(err)
	}
	if len(ans.Answers) != n {
		t.Errorf("%d answers, want %d", len(ans.Answers), n)
	}
}

type Embedded struct {
	Note string `json:"note"`
}

type otherItem struct{ N uint8 }

// otherBody has a field of each kind encoding/json decodes its own way.
type otherBody struct {
	Embedded
	Count  int         `json:"count,string"`
	Number json.Number `json:"number"`
	Until  time.Time   `json:"until"`
	Addr   netip.Addr  `json:"addr"`
	Items  []otherItem `json:"items"`
	Any    any         `json:"any"`
}

var decodeOtherTests = []struct {
	name   string
	body   string
	want   string
	prefix string
}{
	{name: "every kind accepted", body: `{"note":"n","count":"12","number":1e400,"until":"2026-01-02T03:04:05Z",
			"addr":"127.0.0.1","items":[{"N":255}],"any":{"x":[1]}}`},
	{name: "embedded field known", body: `{"note":"n"}`},
	{name: "embedded struct not a field itself", body: `{"Embedded":{}}`, want: "Embedded: unknown field"},
	{name: "untagged field by its Go name only", body: `{"items":[{"n":1}]}`, want: "items[0].n: unknown field"},
	{name: "uint8 out of range", body: `{"items":[{"N":1},{"N":256}]}`, want: "items[1].N: 256, want an integer"},
	{name: "negative into uint8", body: `{"items":[{"N":-1}]}`, want: "items[0].N: -1, want an integer"},
	{name: "number where a string is wanted", body: `{"note":1}`, want: "note: a number, want a string"},
	{name: "bad time refused", body: `{"until":"tomorrow"}`, prefix: "body: "},
	{name: "bad address refused", body: `{"addr":"not-an-ip"}`, prefix: "body: "},
}

// Decode serves other packages' bodies too: whatever encoding/json accepts
// (",string" numbers, json.Number, text and JSON unmarshalers, embedded
// structs) it accepts, and it still names the indexed path of a wrong type.
func TestDecodeOtherTypes(t *testing.T) {
	for _, tt := range decodeOtherTests {
		t.Run(tt.name, func(t *testing.T) {
			var b otherBody
			err := askd.Decode([]byte(tt.body), &b)
			if tt.prefix == "" {
				wantInvalid(t, err, tt.want)
				return
			}
			if askd.ErrorCode(err) != askd.EINVALID || !strings.HasPrefix(askd.ErrorMessage(err), tt.prefix) {
				t.Errorf("got %v (code %q), want an EINVALID error starting %q", err, askd.ErrorCode(err), tt.prefix)
			}
		})
	}
	var b otherBody
	if err := askd.Decode([]byte(decodeOtherTests[0].body), &b); err != nil {
		t.Fatal(err)
	}
	if b.Note != "n" || b.Count != 12 || b.Number != "1e400" || b.Addr != netip.MustParseAddr("127.0.0.1") ||
		b.Until.Year() != 2026 || len(b.Items) != 1 || b.Items[0].N != 255 {
		t.Errorf("decoded %+v", b)
	}
}
