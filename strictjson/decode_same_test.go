package strictjson_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/strictjson"
)

// Shapes of the inputs internal/mcpserver and internal/httpapi decode into
// types of their own (same fields, same tags), for FuzzDecodeSame.
type (
	mcpOption struct {
		Label       string `json:"label"`
		Description string `json:"description,omitempty"`
		Preview     string `json:"preview,omitempty"`
	}
	mcpQuestion struct {
		Question    string      `json:"question"`
		Header      string      `json:"header"`
		Options     []mcpOption `json:"options"`
		MultiSelect bool        `json:"multiSelect,omitempty"`
	}
	mcpAskUserQuestion struct {
		Questions []mcpQuestion `json:"questions"`
	}
	mcpAsk struct {
		Kind        askd.Kind   `json:"kind"`
		Title       string      `json:"title"`
		Details     string      `json:"details,omitempty"`
		Options     []mcpOption `json:"options,omitempty"`
		Recommended string      `json:"recommended,omitempty"`
	}
	mcpRequestApproval struct {
		Title        string          `json:"title"`
		Details      string          `json:"details,omitempty"`
		Payload      json.RawMessage `json:"payload,omitempty"`
		GraceSeconds *int            `json:"grace_seconds,omitempty"`
	}
	mcpCheckAsk struct {
		ID          *int64 `json:"id,omitempty"`
		WaitSeconds *int   `json:"wait_seconds,omitempty"`
	}
	mcpCancelAsk struct {
		ID *int64 `json:"id"`
	}
	httpHook struct {
		SessionID      string          `json:"session_id"`
		HookEventName  string          `json:"hook_event_name"`
		ToolName       string          `json:"tool_name"`
		ToolInput      json.RawMessage `json:"tool_input"`
		ToolUseID      string          `json:"tool_use_id"`
		StopHookActive bool            `json:"stop_hook_active"`
	}
	httpSnooze struct {
		Until *time.Time `json:"until"`
		For   string     `json:"for"`
	}
)

// shapes has what the request types do not: types that hold themselves,
// arrays, maps of structs, pointers to pointers, ignored and unexported
// fields, an embedded pointer, and a map that decodes itself.
type shapes struct {
	*Embedded
	Tree    *shapeNode            `json:"tree"`
	Pair    [2]otherItem          `json:"pair"`
	ByName  map[string]otherItem  `json:"by_name"`
	Deep    **[]*otherItem        `json:"deep"`
	Grid    [][]otherItem         `json:"grid"`
	Free    map[string]any        `json:"free"`
	Raw     json.RawMessage       `json:"raw"`
	Times   map[string]*time.Time `json:"times"`
	Skipped string                `json:"-"`
	//lint:ignore SA5008 deliberate: encoding/json names this field "-"
	Dash string  `json:"-,"`
	Self selfMap `json:"self"`
	//lint:ignore U1000 an unexported field, which decoding must pass over
	hidden string
}

type shapeNode struct {
	Name string                `json:"name"`
	Kids []shapeNode           `json:"kids"`
	Next *shapeNode            `json:"next"`
	ByID map[string]*shapeNode `json:"by_id"`
}

type selfMap map[string]int

func (m *selfMap) UnmarshalJSON(b []byte) error {
	*m = selfMap{"len": len(b)}
	return nil
}

// decodeTarget is a type request bodies are decoded into, and how.
type decodeTarget struct {
	name string
	open bool // DecodeOpen, not Decode
	new  func() any
}

func target[T any](name string) decodeTarget {
	return decodeTarget{name: name, new: func() any { return new(T) }}
}

// decodeTargets are the types of askd.Decode's and DecodeOpen's callers.
var decodeTargets = []decodeTarget{
	target[askd.AskInput]("AskInput"),
	target[askd.Answer]("Answer"),
	target[askd.PermissionInput]("PermissionInput"),
	target[askd.PermissionRelay]("PermissionRelay"),
	target[askd.Channel]("Channel"),
	target[askd.RuleInput]("RuleInput"),
	target[askd.RuleLife]("RuleLife"),
	target[askd.PushSubscription]("PushSubscription"),
	target[struct {
		Endpoint string `json:"endpoint"`
	}]("unsubscribe"),
	target[struct {
		Key string `json:"key"`
	}]("told"),
	target[struct {
		Reason string `json:"reason"`
	}]("closeRelay"),
	target[struct {
		Response string `json:"response"`
	}]("dismiss"),
	target[httpSnooze]("snooze"),
	{name: "hook", open: true, new: func() any { return new(httpHook) }},
	{name: "openHook", open: true, new: func() any { return new(openHook) }},
	target[mcpAskUserQuestion]("ask_user_question"),
	target[mcpAsk]("ask"),
	target[mcpRequestApproval]("request_approval"),
	target[mcpCheckAsk]("check_ask"),
	target[mcpCancelAsk]("cancel_ask"),
	target[otherBody]("otherBody"),
	target[shapes]("shapes"),
	target[map[string]askd.Choice]("map"),
	target[any]("any"),
}

// requestSeeds are bodies of the shapes real callers send, and some with
// several problems at once, where which one is named matters.
var requestSeeds = []string{
	// hooks
	`{"session_id":"s1","transcript_path":"t.jsonl","cwd":"/project","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Which?","header":"H","options":[{"label":"a"},{"label":"b"}],"multiSelect":false}]},"tool_use_id":"toolu_1"}`,
	`{"session_id":"s1","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls","description":"list"},"permission_suggestions":[{"type":"addRules"}]}`,
	`{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":true}`,
	`{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":{}}`,
	`{"hook_event_name":"PreToolUse","tool_name":"AskUserQuestion","tool_input":[1]}`,
	`{"session_id":7}`, `{"stop_hook_active":"yes","session_id":7}`,
	// MCP tool arguments
	`{"questions":[{"question":"Which?","header":"H","options":[{"label":"a","description":"d"},{"label":"b","preview":"p"}],"multiSelect":true}]}`,
	`{"kind":"decision","title":"t","options":[{"label":"a","description":"d"},{"label":"b"}],"recommended":"a"}`,
	`{"title":"Deploy","details":"make deploy","payload":{"env":"prod","n":1e400},"grace_seconds":30}`,
	`{"id":3,"wait_seconds":30}`, `{"id":3}`, `{"id":"3"}`, `{"id":1.5}`, `{"id":-1,"wait_seconds":99999999999}`,
	// answers
	`{"answers":{"Which?":{"values":["a"]}}}`, `{"answers":{"Which?":["a"]}}`, `{"answers":{"Which?":"a","Other?":["x","y"]},"response":"r"}`,
	`{"decision":"modified","payload":{"command":"ls"},"comment":"ok"}`,
	// the rest of the HTTP API
	`{"ask_id":3,"match":"tool","effect":"allow","for":"8h"}`,
	`{"ask_id":3,"match":"prefix","prefix":"npm test","effect":"allow","expires_at":"2026-01-02T03:04:05Z"}`,
	`{"ask_id":"3","match":"tool","effect":"allow","for":"8h","scope":"all"}`, `{"for":"2h"}`,
	`{"endpoint":"https://push.example/x","keys":{"p256dh":"BNc","auth":"tB"}}`,
	`{"endpoint":"https://push.example/x","keys":{"p256dh":"BNc","auth":"tB","extra":1}}`,
	`{"endpoint":"x","Browser":"b","Human":"h","CreatedAt":"2026-01-02T03:04:05Z"}`,
	`{"request_id":"abcde","tool_name":"Bash","description":"d","input_preview":"ls"}`,
	`{"key":"k"}`, `{"reason":"terminal"}`, `{"response":"later"}`,
	`{"until":"2026-01-02T03:04:05Z"}`, `{"for":"1h"}`, `{"until":"tomorrow"}`, `{"until":5}`, `{"until":null,"for":null}`,
	// the test types' own shapes
	`{"note":"n","tree":{"name":"a","kids":[{"name":"b","kids":[{"x":1}]}],"next":{"by_id":{"1":{"name":"c","y":2}}}}}`,
	`{"pair":[{"N":1},{"N":2},{"N":3}],"by_name":{"a":{"N":1},"b":{"M":2}},"deep":[{"N":1},null,{"Q":1}]}`,
	`{"grid":[[{"N":1}],[{"N":2,"O":3}]],"free":{"a":{"b":[1]}},"raw":{"a":{"z":1}},"times":{"a":"2026-01-02T03:04:05Z","b":null}}`,
	`{"-":"dash","Skipped":"x"}`, `{"hidden":"h"}`, `{"Embedded":{"note":"n"}}`, `{"self":{"a":{"b":1}}}`, `{"self":[1]}`,
	`{"note":1,"tree":{"name":5,"kids":[{"name":6}]}}`, `{"pair":[{"N":300}]}`, `{"grid":[[{"N":"x"}]]}`,
	// several problems: which one is named
	`{"zeta":1,"kind":"ready","alpha":{"a":1,"a":2}}`,
	`{"zeta":{"b":1,"b":2},"kind":5,"alpha":2}`,
	`{"questions":[{"zz":1,"aa":2}],"options":[{"y":1}],"kind":"x"}`,
	`{"questions":[{"question":"q","header":7}],"kind":5}`,
	`{"title":"\ud800","bogus":1}`, `{"bogus":"\xff","title":1}`, `{"bogus":1}}`, `{"bogus":1}]`, `{"a":1,"a":2}]`,
	`{"kind":"ready"}x`, `{"kind":"ready"} {"kind":"ready"}`, `{"kind":"ready"}{`, `{"kind":"ready"} ]`,
	`{"a":"\u00`, `{"a":"\`, `{"a":"`, `{"`, `{"a`, `{"a":[}`, `{"a":[1,}`, `{"a":{,}}`, `{"a" 1}`, `{"a":tru}`,
	`{"kind":"ready","title":"\u0000"}`, "{\"kind\":\"ready\",\"title\":\"\x01\"}",
	`{"questions":[{"question":"q","options":[{"label":"a","label":"b"}],"Header":1}]}`,
	`{"answers":{"b":5,"a":{"x":1},"c":[1]},"extra":1}`, `{"answers":{"q":"a"},"decision":7,"Payload":1}`,
	`{"payload":{"x":1,"x":2},"bogus":1}`, `{"payload":{"x":"\xff"},"grace_seconds":"1"}`,
	`{"ask_id":1.5,"Match":"tool"}`, `{"keys":{"auth":1,"other":2},"endpoint":3}`,
	strings.Repeat(`[`, 10000) + strings.Repeat(`]`, 10000),
	`{"any":` + strings.Repeat(`[`, 9999) + strings.Repeat(`]`, 9999) + `}`,
	`{"any":` + strings.Repeat(`[`, 10000) + strings.Repeat(`]`, 10000) + `}`,
	`{"payload":` + strings.Repeat(`{"a":`, 10000) + `1` + strings.Repeat(`}`, 10000) + `}`,
	`{"tree":` + strings.Repeat(`{"next":`, 5000) + `{"x":1}` + strings.Repeat(`}`, 5000) + `}`,
	manyKeys(40, ""), manyKeys(40, "k7"), manyKeys(40, "end"),
}

// decodeSeed is a body FuzzDecodeSame starts from, and the target it was
// written for ("" for none).
type decodeSeed struct{ body, target string }

// decodeSeeds are the other tests' bodies and requestSeeds.
func decodeSeeds() []decodeSeed {
	var seeds []decodeSeed
	add := func(target string, bodies ...string) {
		for _, b := range bodies {
			seeds = append(seeds, decodeSeed{b, target})
		}
	}
	for _, tt := range decodeTests {
		add(reflect.TypeOf(tt.into.value()).Elem().Name(), tt.body)
	}
	for _, tt := range decodeOpenTests {
		add("openHook", tt.body)
	}
	for _, tt := range decodeOtherTests {
		add("otherBody", tt.body)
	}
	add("AskInput", askSeeds...)
	add("Answer", answerSeeds...)
	add("PermissionInput", permissionSeeds...)
	add("Channel", channelSeeds...)
	add("", requestSeeds...)
	return seeds
}

// FuzzDecodeSame holds Decode and DecodeOpen to the decoder they replaced
// (strictjson.OldDecode): the same error, word for word, or success with the same
// value; and the same value left behind on an error too, since both decode
// into v exactly when the old one did. Each seed body is tried on the target
// it was written for and on two others, in turn.
func FuzzDecodeSame(f *testing.F) {
	n := len(decodeTargets)
	for i, s := range decodeSeeds() {
		for j, dt := range decodeTargets {
			if dt.name == s.target || j == i%n || j == (i+n/2)%n {
				f.Add([]byte(s.body), uint8(j))
			}
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		sameDecode(t, decodeTargets[int(which)%n], body)
	})
}

func sameDecode(t *testing.T, dt decodeTarget, body []byte) {
	t.Helper()
	decode, old := strictjson.Decode, strictjson.OldDecode
	if dt.open {
		decode, old = strictjson.DecodeOpen, strictjson.OldDecodeOpen
	}
	got, want := dt.new(), dt.new()
	gotErr, wantErr := decode(body, got), old(body, want)
	if said(gotErr) != said(wantErr) {
		t.Fatalf("%s: %q\nnew: %s\nold: %s", dt.name, body, said(gotErr), said(wantErr))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: %q (error %v)\nnew: %#v\nold: %#v", dt.name, body, gotErr, got, want)
	}
}

// said is what a refusal of Decode says, with what askd.Decode makes of it:
// the *Error's message, and its cause (Err) with the cause's code, which
// askd.Decode passes on when the cause is askd's own.
func said(err error) string {
	cause := errors.Unwrap(err)
	return fmt.Sprintf("%T %v (cause %T %v, code %q)", err, err, cause, cause, askd.ErrorCode(cause))
}

// BenchmarkDecode is Decode against the decoder it replaced, on an answer
// (the object form is refused: a Choice is a string or a list), a question
// ask, and an approval ask of about 100 KB.
func BenchmarkDecode(b *testing.B) {
	bodies := []struct {
		name    string
		body    string
		new     func() any
		refused bool
	}{
		{"answer", `{"answers":{"Which?":["a"]}}`, func() any { return new(askd.Answer) }, false},
		{"answerObject", `{"answers":{"Which?":{"values":["a"]}}}`, func() any { return new(askd.Answer) }, true},
		{"question", askSeeds[0], func() any { return new(askd.AskInput) }, false},
		{"approval100KB", approvalBody(100 << 10), func() any { return new(askd.AskInput) }, false},
	}
	for _, impl := range []struct {
		name   string
		decode func([]byte, any) error
	}{{"new", strictjson.Decode}, {"old", strictjson.OldDecode}} {
		for _, bb := range bodies {
			body := []byte(bb.body)
			b.Run(impl.name+"/"+bb.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					if err := impl.decode(body, bb.new()); (err != nil) != bb.refused {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// approvalBody is an approval ask of about size bytes: a diff in its details
// and a payload of many files.
func approvalBody(size int) string {
	var b strings.Builder
	b.WriteString(`{"kind":"approval","title":"Allow Edit: many files","tool_name":"Edit","tool_use_id":"toolu_01","details":"`)
	for b.Len() < size/2 {
		b.WriteString(`+line of a diff with some text \u00e9 and \"quotes\" 日本語\n`)
	}
	b.WriteString(`","payload":{"files":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"path":"src/file%d.go","lines":[1,2,3],"mode":"edit","note":null,"ok":true}`, i)
	}
	b.WriteString(`]},"grace_seconds":30}`)
	return b.String()
}

// Decode into nil is refused, or panics, as it always was.
func TestDecodeNilSame(t *testing.T) {
	outcome := func(decode func([]byte, any) error, body string) (s string) {
		defer func() {
			if r := recover(); r != nil {
				s = "panic"
			}
		}()
		return fmt.Sprint(decode([]byte(body), nil))
	}
	for _, body := range []string{`{"a":1}`, `{"a":1,"a":2}`, `[]`, `{`} {
		if got, want := outcome(strictjson.Decode, body), outcome(strictjson.OldDecode, body); got != want {
			t.Errorf("Decode(%s, nil): %s, was %s", body, got, want)
		}
		if got, want := outcome(strictjson.DecodeOpen, body), outcome(strictjson.OldDecodeOpen, body); got != want {
			t.Errorf("DecodeOpen(%s, nil): %s, was %s", body, got, want)
		}
	}
}
