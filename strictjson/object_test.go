package strictjson_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/strictjson"
)

// Object keeps an object's keys in their order and each member's bytes as
// written, whatever the spacing, escapes and nesting; anything that is not
// one JSON object is refused.
func TestObject(t *testing.T) {
	raw := json.RawMessage(" {\n \"b\" : [1, {\"x\": \"}]\\\"\"}] ,\"a\\u0041\":\"q\\\"}\",\"n\":-1.5e3 , \"t\":true,\"o\":{},\"z\":null}\t")
	m, keys, err := strictjson.Object(raw)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"b", "aA", "n", "t", "o", "z"}; !reflect.DeepEqual(keys, want) {
		t.Fatalf("keys %q, want %q", keys, want)
	}
	want := map[string]string{"b": `[1, {"x": "}]\""}]`, "aA": `"q\"}"`, "n": `-1.5e3`, "t": `true`, "o": `{}`, "z": `null`}
	for k, v := range want {
		if string(m[k]) != v {
			t.Errorf("member %q = %s, want %s", k, m[k], v)
		}
	}
	for _, bad := range []string{`[1]`, `"x"`, `{"a":1,"a":2}`, `{"a":}`, `{"a":1`, ``, `{} {}`} {
		if _, _, err := strictjson.Object(json.RawMessage(bad)); err == nil {
			t.Errorf("Object(%s): no error", bad)
		}
	}
}

// BenchmarkParseFormSchema: a form's schema is parsed, its objects read by
// Object, when it is asked and again when it is answered.
func BenchmarkParseFormSchema(b *testing.B) {
	raw := json.RawMessage(`{"type":"object","properties":{` +
		`"name":{"type":"string","title":"Name","minLength":2,"maxLength":80},` +
		`"email":{"type":"string","format":"email"},` +
		`"when":{"type":"string","format":"date"},` +
		`"count":{"type":"integer","minimum":1,"maximum":100,"default":3},` +
		`"confirm":{"type":"boolean","default":false},` +
		`"env":{"type":"string","oneOf":[{"const":"dev","title":"Development"},{"const":"prod","title":"Production"}]},` +
		`"tags":{"type":"array","items":{"enum":["a","b","c"]},"minItems":1,"maxItems":2}` +
		`},"required":["name","count"]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := askd.ParseFormSchema(raw); err != nil {
			b.Fatal(err)
		}
	}
}
