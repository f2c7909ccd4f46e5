package strictjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
)

// checkRefusal fails unless err is what every refusal must be: an EINVALID
// *askd.Error whose message names a path and a rule ("path: rule").
func checkRefusal(t *testing.T, err error) {
	t.Helper()
	var e *askd.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T %q is not an *askd.Error", err, err)
	}
	if e.Code != askd.EINVALID {
		t.Fatalf("code %q, want %q (message %q)", e.Code, askd.EINVALID, e.Message)
	}
	path, rule, ok := strings.Cut(e.Message, ": ")
	if !ok || path == "" || strings.TrimSpace(rule) == "" {
		t.Fatalf("message %q is not of the form \"path: rule\"", e.Message)
	}
}

var askSeeds = []string{
	`{"kind":"question","questions":[{"question":"Which database?","header":"Database","options":[{"label":"SQLite","description":"embedded, zero setup"},{"label":"Postgres","description":"shared, scales out"}],"multiSelect":false}]}`,
	`{"kind":"question","questions":[{"question":"Which checks?","header":"Checks","options":[{"label":"lint","preview":"# lint\n<b>x</b>"},{"label":"tests"},{"label":"vet"}],"multiSelect":true},{"question":"Ship?","header":"データベース設定の選択肢","options":[{"label":"yes"},{"label":"no"}]}]}`,
	`{"kind":"decision","title":"Deploy now?","details":"green","options":[{"label":"Yes"},{"label":"No","description":"wait"}],"recommended":"Yes"}`,
	`{"kind":"action","title":"Rotate the key"}`,
	`{"kind":"ready","title":"Review","details":"branch fix-1"}`,
	`{"kind":"blocked","title":"Need credentials"}`,
	`{"kind":"approval","title":"rm","details":"rm -rf build/","payload":{"command":"rm -rf build/","n":1e400},"grace_seconds":120,"tool_name":"Bash","tool_use_id":"toolu_1"}`,
	`{"kind":"approval","title":"t","payload":{}}`,
	// invalid
	``, `null`, `[]`, `{} {}`, `{}}`, "\u00a0{}", `{"":1}`, `{"a.b":{"c":1}}`,
	`{"kind":"poll"}`, `{"kind":"question"}`, `{"kind":"question","questions":[]}`,
	`{"kind":"question","questions":[{"question":"q","header":"Checks to run!","options":[{"label":"a"}]}]}`,
	`{"kind":"question","questions":[{"question":"q","header":"h","colour":"red"}]}`,
	`{"kind":"question","questions":[{"question":"q","header":7}]}`,
	`{"kind":"question","questions":[{"question":"q","header":"h","options":[{"label":"a"},{"label":"a"}]}],"title":"x"}`,
	`{"kind":"decision","title":"t","options":[{"label":"a","preview":"p"}],"recommended":"b"}`,
	`{"kind":"action","title":" ","options":[],"payload":null,"grace_seconds":3}`,
	`{"kind":"approval","title":"t","payload":[1],"grace_seconds":-1}`,
	`{"kind":"approval","title":"t","grace_seconds":1.5}`,
	`{"kind":"approval","title":"t","grace_seconds":99999999999999999999}`,
	`{"Kind":"question","Questions":null}`,
	"{\"kind\":\"ready\",\"title\":\"\xff\xfe\"}",
	// Raw payloads keep their bytes: invalid UTF-8, U+2028, HTML characters.
	"{\"kind\":\"approval\",\"title\":\"t\",\"payload\":{\"a\":\"\xff\u2028<&>\"}}",
	`{"kind":"approval","title":"a","title":"b","payload":{"x":1},"payload":[1]}`,
	`{"kind":"ready","title":"a","Title":"b"}`,
	// strict JSON and the text rules
	`{"kind":"ready","title":"a","\u0074itle":"b"}`,
	`{"kind":"approval","title":"t","payload":{"a":{"b":1,"b":2}}}`,
	`{"kind":"ready","title":"\ud800"}`, `{"kind":"ready","title":"\ud83d\ude00"}`,
	`{"kind":"ready","title":"hi\u001b]52;c;eA==\u0007"}`, `{"kind":"ready","title":"a\u0085b\u2028"}`,
	`{"kind":"ready","title":"\u05e9\u200f","details":"line\n\tmore\r\n\r"}`,
	`{"kind":"decision","title":"t","options":[{"label":"No"},{"label":"No\u200b"}],"recommended":"No\u200b"}`,
	`{"kind":"question","questions":[{"question":"Which?\nMore.","header":"H\t","options":[{"label":"\u202eoN"},{"label":"\u2714\ufe0f"}]}]}`,
	`{"kind":"approval","title":"t","tool_name":"Bash\u2066","tool_use_id":"toolu_\u00ad1"}`,
}

func FuzzDecodeAskInput(f *testing.F) {
	for _, s := range askSeeds {
		f.Add([]byte(s), false)
	}
	f.Add([]byte(askSeeds[1]), true)
	f.Fuzz(func(t *testing.T, body []byte, previewHTML bool) {
		var in askd.AskInput
		if err := askd.Decode(body, &in); err != nil {
			checkRefusal(t, err)
			return
		}
		if err := in.Validate(previewHTML); err != nil {
			checkRefusal(t, err)
			return
		}
		// What validates once validates again after a trip through JSON, and
		// re-encodes to the same bytes.
		b, err := json.Marshal(&in)
		if err != nil {
			t.Fatalf("Marshal of a valid input: %v", err)
		}
		var again askd.AskInput
		if err := askd.Decode(b, &again); err != nil {
			t.Fatalf("Decode of re-encoded %s: %v", b, err)
		}
		if err := again.Validate(previewHTML); err != nil {
			t.Fatalf("Validate of re-encoded %s: %v", b, err)
		}
		b2, err := json.Marshal(&again)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, b2) {
			t.Fatalf("re-encoding changed the input:\n%s\n%s", b, b2)
		}
	})
}

var answerSeeds = []string{
	`{"answers":{"Which database?":"SQLite","Which checks?":["lint","tests"]}}`,
	`{"answers":{"Which database?":"MySQL","Which checks?":"fuzzing"},"response":"r"}`,
	`{"response":"neither"}`,
	`{"answers":{},"response":"later"}`,
	`{"answer":"Yes"}`,
	`{"answer":"my own words"}`,
	`{"decision":"approved","comment":"ok"}`,
	`{"decision":"modified","payload":{"command":"ls","n":1e400}}`,
	`{"decision":"rejected","comment":"no"}`,
	// invalid
	``, `[]`, `{}`, `{"answers":[]}`, `{"answers":{"Which database?":["SQLite"]}}`,
	`{"answers":{"Which database?":"SQLite","Which checks?":["a","b","a"]}}`,
	`{"answers":{"Which database?":null,"Which checks?":[null]}}`,
	`{"answers":{"Which colour?":"red"}}`,
	`{"answers":{"q":{"x":1}}}`, `{"answers":{"q":5}}`,
	`{"decision":"modified"}`, `{"decision":"approved","payload":{}}`, `{"decision":"maybe"}`,
	`{"decision":"modified","payload":null}`, `{"answer":"a","comment":"c","extra":1}`,
	"{\"decision\":\"modified\",\"payload\":{\"a\":\"\xff\u2028<&>\"}}",
	`{"answers":{"Which database?":"SQLite","Which database?":["x"],"Which checks?":"lint"}}`,
	`{"answer":"a\nb\tc\r\n"}`, `{"answer":"a\rb"}`, `{"answer":"\u001b[2J"}`, `{"response":"\u009b"}`,
	`{"decision":"modified","payload":{"a":1,"a":2}}`, "{\"comment\":\"\xff\",\"decision\":\"rejected\"}",
	`{"answers":{"Which database?":"\udc00","Which checks?":["lint"]}}`,
}

// The asks every fuzzed answer is checked against.
var fuzzAsks = []*askd.Ask{questionAsk, decisionAsk, actionAsk, approvalAsk}

func FuzzDecodeAnswer(f *testing.F) {
	for _, s := range answerSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, a := range fuzzAsks {
			// Decode afresh for each ask: Check normalizes the answer in place.
			var ans askd.Answer
			if err := askd.Decode(body, &ans); err != nil {
				checkRefusal(t, err)
				return
			}
			if err := a.CheckAnswer(&ans); err != nil {
				checkRefusal(t, err)
				continue
			}
			b, err := json.Marshal(&ans)
			if err != nil {
				t.Fatalf("Marshal of a fitting answer: %v", err)
			}
			var again askd.Answer
			if err := askd.Decode(b, &again); err != nil {
				t.Fatalf("%s ask: Decode of re-encoded %s: %v", a.Kind, b, err)
			}
			if err := a.CheckAnswer(&again); err != nil {
				t.Fatalf("%s ask: Check of re-encoded %s: %v", a.Kind, b, err)
			}
			b2, err := json.Marshal(&again)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, b2) {
				t.Fatalf("%s ask: re-encoding changed the answer:\n%s\n%s", a.Kind, b, b2)
			}
		}
	})
}

var permissionSeeds = []string{
	`{"tool_name":"Bash","input":{"command":"ls -la"}}`,
	`{"tool_name":"Edit","input":{"file_path":"a.go","old_string":"x","new_string":"y"},"tool_use_id":"toolu_01"}`,
	`{"tool_name":"AskUserQuestion","input":{"questions":[{"question":"q","header":"h","options":[{"label":"a"},{"label":"b"}],"multiSelect":false}]}}`,
	// invalid
	``, `{}`, `{"tool_name":""}`, `{"tool_name":"Bash","input":null}`, `{"tool_name":"Bash","input":[1]}`,
	`{"tool_name":"Bash","input":{},"extra":1}`, `{"tool_name":7,"input":{}}`, `{"tool_name":"Bash","input":{}}{}`,
	`{"tool_name":"Bash","input":{"command":"ls","command":"rm"}}`, `{"tool_name":"Bash\u200b","input":{}}`,
	`{"tool_name":"Bash","input":{"command":"\u001b]52;c;eA==\u0007"}}`, "{\"tool_name\":\"Bash\",\"input\":{\"c\":\"\xff\"}}",
}

func FuzzDecodePermissionInput(f *testing.F) {
	for _, s := range permissionSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var in askd.PermissionInput
		if err := askd.Decode(body, &in); err != nil {
			checkRefusal(t, err)
			return
		}
		if err := in.Validate(); err != nil {
			checkRefusal(t, err)
			return
		}
		b, err := json.Marshal(&in)
		if err != nil {
			t.Fatalf("Marshal of a valid input: %v", err)
		}
		var again askd.PermissionInput
		if err := askd.Decode(b, &again); err != nil {
			t.Fatalf("Decode of re-encoded %s: %v", b, err)
		}
		if err := again.Validate(); err != nil {
			t.Fatalf("Validate of re-encoded %s: %v", b, err)
		}
		b2, err := json.Marshal(&again)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, b2) {
			t.Fatalf("re-encoding changed the input:\n%s\n%s", b, b2)
		}
	})
}
