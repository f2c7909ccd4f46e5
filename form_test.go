package askd_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
)

// everyField is a schema with each field type MCP's restricted schema
// allows, in each spelling (as server-everything's trigger-elicitation-request
// asks).
const everyField = `{"type":"object","properties":{
 "name":{"type":"string","title":"Name","minLength":2,"maxLength":10},
 "email":{"type":"string","format":"email"},
 "site":{"type":"string","format":"uri"},
 "day":{"type":"string","format":"date"},
 "at":{"type":"string","format":"date-time"},
 "code":{"type":"string","pattern":"^[A-Z]{3}$"},
 "count":{"type":"integer","minimum":1,"maximum":100,"default":5},
 "ratio":{"type":"number","minimum":0,"maximum":1},
 "agree":{"type":"boolean","default":false},
 "color":{"type":"string","enum":["red","green"],"enumNames":["Red","Green"]},
 "size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}],"default":"s"},
 "tags":{"type":"array","items":{"enum":["a","b","c"]},"minItems":1,"maxItems":2},
 "pets":{"type":"array","items":{"anyOf":[{"const":"cat","title":"Cat"},{"const":"dog","title":"Dog"}]}}
},"required":["name","count"]}`

func TestParseFormSchema(t *testing.T) {
	s, err := askd.ParseFormSchema(json.RawMessage(everyField))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	types := map[string]askd.FieldType{}
	for _, f := range s.Fields {
		names = append(names, f.Name)
		types[f.Name] = f.Type
	}
	if got := strings.Join(names, ","); got != "name,email,site,day,at,code,count,ratio,agree,color,size,tags,pets" {
		t.Errorf("fields in order %s", got)
	}
	for name, want := range map[string]askd.FieldType{"name": askd.FieldString, "count": askd.FieldInteger, "ratio": askd.FieldNumber,
		"agree": askd.FieldBoolean, "color": askd.FieldEnum, "size": askd.FieldEnum, "tags": askd.FieldMulti, "pets": askd.FieldMulti} {
		if types[name] != want {
			t.Errorf("%s: type %s, want %s", name, types[name], want)
		}
	}
	if d := s.Defaults(); d["count"] != 5.0 || d["agree"] != false || d["size"] != "s" || len(d) != 3 {
		t.Errorf("defaults %v", d)
	}
	if s.Fields[9].Options[1] != (askd.FormOption{Const: "green", Title: "Green"}) || s.Fields[12].Options[0] != (askd.FormOption{Const: "cat", Title: "Cat"}) {
		t.Errorf("options %v %v", s.Fields[9].Options, s.Fields[12].Options)
	}
}

// Each schema askd refuses names the property and the rule.
func TestParseFormSchemaRefuses(t *testing.T) {
	field := func(f string) string { return `{"type":"object","properties":{"f":` + f + `}}` }
	cases := []struct{ name, schema, want string }{
		{"not an object", `[1]`, "schema: must be an object"},
		{"type not object", `{"type":"array","properties":{"f":{"type":"string"}}}`, `schema.type: must be "object"`},
		{"no properties", `{"type":"object"}`, "schema.properties: required"},
		{"no fields", `{"type":"object","properties":{}}`, "at least one field"},
		{"unknown top-level key", `{"type":"object","properties":{"f":{"type":"string"}},"additionalProperties":false}`, "schema.additionalProperties: not allowed"},
		{"nested object", field(`{"type":"object","properties":{}}`), `schema.properties.f.type: "object" is not one of`},
		{"ref", field(`{"$ref":"#/x"}`), "schema.properties.f.$ref: not allowed in a form field"},
		{"unknown format", field(`{"type":"string","format":"ipv4"}`), `schema.properties.f.format: "ipv4" is not one of email, uri, date, date-time`},
		{"bad pattern", field(`{"type":"string","pattern":"(?<=a)b"}`), "schema.properties.f.pattern: not a regular expression"},
		{"min above max length", field(`{"type":"string","minLength":5,"maxLength":2}`), "schema.properties.f.minLength: 5 is above maxLength 2"},
		{"negative length", field(`{"type":"string","maxLength":-1}`), "schema.properties.f.maxLength: must be a whole number"},
		{"minimum above maximum", field(`{"type":"integer","minimum":5,"maximum":1}`), "schema.properties.f.minimum: 5 is above maximum 1"},
		{"bounds on a boolean", field(`{"type":"boolean","maximum":1}`), "schema.properties.f.maximum: not allowed on a boolean field"},
		{"empty enum", field(`{"type":"string","enum":[]}`), "schema.properties.f.enum: must be a list of strings"},
		{"enumNames of another length", field(`{"type":"string","enum":["a","b"],"enumNames":["A"]}`), "schema.properties.f.enumNames: must be a list of 2 strings"},
		{"a value twice", field(`{"type":"string","enum":["a","a"]}`), `the value "a" is there twice`},
		{"oneOf without const", field(`{"type":"string","oneOf":[{"title":"A"}]}`), "choice 1 has no const string"},
		{"array without items", field(`{"type":"array"}`), "schema.properties.f.items: required on a multi-select field"},
		{"array of free text", field(`{"type":"array","items":{"type":"string"}}`), "schema.properties.f.items: needs enum or anyOf"},
		{"default out of bounds", field(`{"type":"integer","maximum":10,"default":11}`), "schema.properties.f.default: 11 is above the maximum 10"},
		{"default not an option", field(`{"type":"string","enum":["a"],"default":"b"}`), `schema.properties.f.default: "b" is not one of a`},
		{"required unknown", `{"type":"object","properties":{"f":{"type":"string"}},"required":["g"]}`, `schema.required: "g" is not one of the form's fields`},
		{"key twice", `{"type":"object","properties":{"f":{"type":"string"},"f":{"type":"number"}}}`, `schema.properties: "f" is given twice`},
		{"too many fields", manyFields(askd.MaxFormFields + 1), "schema.properties: 21 fields, at most 20"},
		{"a field name with a zero-width space", `{"type":"object","properties":{"na\u200bme":{"type":"string"}}}`, "schema.properties.na\u200bme: contains U+200B (zero-width), not allowed in field names"},
		{"a title of two lines", field(`{"type":"string","title":"a\nb"}`), "schema.properties.f.title: contains U+000A"},
		{"a long description", field(`{"type":"string","description":"` + strings.Repeat("d", askd.MaxDescChars+1) + `"}`), "schema.properties.f.description: 501 characters, at most 500"},
		{"a choice value with a control character", field(`{"type":"string","enum":["a\u0007"]}`), "schema.properties.f choice 1's value: contains U+0007"},
		{"a choice title too long", field(`{"type":"string","oneOf":[{"const":"a","title":"` + strings.Repeat("t", askd.MaxLabelChars+1) + `"}]}`), "schema.properties.f choice 1's title: 101 characters, at most 100"},
		{"too many choices", field(`{"type":"string","enum":[` + manyChoices(askd.MaxFormOptions+1) + `]}`), "schema.properties.f: 101 choices, at most 100"},
		{"a long pattern", field(`{"type":"string","pattern":"` + strings.Repeat("a", 1001) + `"}`), "schema.properties.f.pattern: 1001 bytes, at most 1000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := askd.ParseFormSchema(json.RawMessage(c.schema))
			if askd.ErrorCode(err) != askd.EINVALID || !strings.Contains(askd.ErrorMessage(err), c.want) {
				t.Fatalf("ParseFormSchema(%s) = %v, want EINVALID holding %q", c.schema, err, c.want)
			}
		})
	}
	if _, err := askd.ParseFormSchema(json.RawMessage(manyFields(askd.MaxFormFields))); err != nil {
		t.Fatalf("%d fields: %v", askd.MaxFormFields, err)
	}
}

func manyFields(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"f` + strings.Repeat("x", i) + `":{"type":"boolean"}`)
	}
	b.WriteString("}}")
	return b.String()
}

// Each problem of an answer names the field and the rule; a valid answer
// passes.
func TestFormSchemaCheck(t *testing.T) {
	s, err := askd.ParseFormSchema(json.RawMessage(everyField))
	if err != nil {
		t.Fatal(err)
	}
	valid := `{"name":"Ada","email":"ada@example.com","site":"https://example.com/x","day":"2026-12-31","at":"2026-12-31T09:30:00Z",
		"code":"ABC","count":42,"ratio":0.5,"agree":true,"color":"red","size":"l","tags":["a","c"],"pets":["dog"]}`
	cases := []struct{ name, content, want string }{
		{"valid", valid, ""},
		{"only the required", `{"name":"Ada","count":1}`, ""},
		{"required missing", `{"name":"Ada"}`, "count: required"},
		{"not a field", `{"name":"Ada","count":1,"extra":1}`, "extra: not a field of this form (its fields: name, email, site, day, at, code, count, ratio, agree, color, size, tags, pets)"},
		{"a near miss of a field", `{"name":"Ada","count":1,"colour":"red"}`, `colour: not a field of this form (did you mean "color"?)`},
		{"a field's title for its name", `{"Name":"Ada","count":1}`, `Name: not a field of this form (did you mean "name"?); name: required`},
		{"too short", `{"name":"A","count":1}`, "name: 1 character, at least 2"},
		{"too long, counted in characters", `{"name":"ééééééééééé","count":1}`, "name: 11 characters, at most 10"},
		{"text for a number", `{"name":"Ada","count":"42"}`, `count: must be a number, not the text "42"`},
		{"a number for text", `{"name":5,"count":1}`, "name: must be text, not 5"},
		{"above the maximum", `{"name":"Ada","count":142}`, "count: 142 is above the maximum 100"},
		{"below the minimum", `{"name":"Ada","count":0}`, "count: 0 is below the minimum 1"},
		{"not whole", `{"name":"Ada","count":1.5}`, "count: 1.5 is not a whole number"},
		{"not an e-mail", `{"name":"Ada","count":1,"email":"ada at example"}`, `email: "ada at example" is not an e-mail address`},
		{"not a uri", `{"name":"Ada","count":1,"site":"example.com"}`, `site: "example.com" is not a URI`},
		{"not a date", `{"name":"Ada","count":1,"day":"31.12.2026"}`, `day: "31.12.2026" is not a date`},
		{"not a date-time", `{"name":"Ada","count":1,"at":"2026-12-31 09:30"}`, `at: "2026-12-31 09:30" is not a date and time`},
		{"a one-digit hour is not RFC 3339", `{"name":"Ada","count":1,"at":"2026-12-31T9:30:00Z"}`, `at: "2026-12-31T9:30:00Z" is not a date and time`},
		{"a comma before the fraction", `{"name":"Ada","count":1,"at":"2026-12-31T09:30:00,5Z"}`, `at: "2026-12-31T09:30:00,5Z" is not a date and time`},
		{"an offset past 23:59", `{"name":"Ada","count":1,"at":"2026-12-31T09:30:00+24:00"}`, `at: "2026-12-31T09:30:00+24:00" is not a date and time`},
		{"a fraction and an offset", `{"name":"Ada","count":1,"at":"2026-12-31T09:30:00.25-05:30"}`, ""},
		{"a required text left empty", `{"name":"","count":1}`, "name: required"},
		{"pattern", `{"name":"Ada","count":1,"code":"abc"}`, `code: "abc" does not match the pattern ^[A-Z]{3}$`},
		{"not a boolean", `{"name":"Ada","count":1,"agree":"yes"}`, `agree: must be true or false, not the text "yes"`},
		{"not an option, nothing near", `{"name":"Ada","count":1,"color":"blue"}`, `color: "blue" is not one of red, green` + "$"},
		{"a letter left out", `{"name":"Ada","count":1,"color":"gren"}`, `color: "gren" is not one of red, green (did you mean "green"?)$`},
		{"two letters swapped", `{"name":"Ada","count":1,"color":"rde"}`, `color: "rde" is not one of red, green (did you mean "red"?)$`},
		{"another case", `{"name":"Ada","count":1,"color":"GREEN"}`, `color: "GREEN" is not one of red, green (did you mean "green"?)$`},
		{"a title, not the const", `{"name":"Ada","count":1,"size":"Large"}`, `size: "Large" is not one of s, l (did you mean "l" (Large)?)$`},
		{"a slip in a title", `{"name":"Ada","count":1,"size":"smal"}`, `size: "smal" is not one of s, l (did you mean "s" (Small)?)$`},
		{"one letter is no near miss of another", `{"name":"Ada","count":1,"size":"m"}`, `size: "m" is not one of s, l$`},
		{"a near miss in a multi-select", `{"name":"Ada","count":1,"pets":["dgo"]}`, `pets: "dgo" is not one of cat, dog (did you mean "dog"?)$`},
		{"too many chosen", `{"name":"Ada","count":1,"tags":["a","b","c"]}`, "tags: 3 chosen, at most 2"},
		{"too few chosen", `{"name":"Ada","count":1,"tags":[]}`, "tags: 0 chosen, at least 1"},
		{"chosen twice", `{"name":"Ada","count":1,"tags":["a","a"]}`, `tags: "a" is chosen twice`},
		{"not a list", `{"name":"Ada","count":1,"pets":"cat"}`, `pets: must be a list of choices, not the text "cat"`},
		{"two problems, both named", `{"count":500}`, "count: 500 is above the maximum 100; name: required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var content map[string]any
			if err := json.Unmarshal([]byte(c.content), &content); err != nil {
				t.Fatal(err)
			}
			err := s.Check(content)
			if c.want == "" {
				if err != nil {
					t.Fatalf("Check(%s) = %v, want nil", c.content, err)
				}
				return
			}
			// A want ending in $ is the end of the message: no hint after it.
			msg, want := askd.ErrorMessage(err), c.want
			if w, ok := strings.CutSuffix(want, "$"); ok {
				msg, want = msg+"$", w+"$"
			}
			if askd.ErrorCode(err) != askd.EINVALID || !strings.Contains(msg, want) {
				t.Fatalf("Check(%s) = %v, want EINVALID holding %q", c.content, err, c.want)
			}
		})
	}
}

func manyChoices(n int) string {
	var vals []string
	for i := range n {
		vals = append(vals, fmt.Sprintf("%q", fmt.Sprintf("v%d", i)))
	}
	return strings.Join(vals, ",")
}
