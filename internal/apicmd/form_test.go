package apicmd

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/testserver"
)

// formSchema has a field of each type an MCP server may ask for (SPEC §9),
// with bounds, a format, a description, titles and defaults.
const formSchema = `{"type":"object","properties":{` +
	`"name":{"type":"string","title":"Full name","description":"As on the account.","minLength":2,"maxLength":40},` +
	`"email":{"type":"string","format":"email","default":"a@example.com"},` +
	`"count":{"type":"integer","title":"How many","minimum":1,"maximum":100,"default":5},` +
	`"ratio":{"type":"number","minimum":0,"maximum":1},` +
	`"agree":{"type":"boolean","default":false},` +
	`"color":{"type":"string","enum":["red","green"],"enumNames":["Red","Green"]},` +
	`"size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}],"default":"s"},` +
	`"pets":{"type":"array","items":{"anyOf":[{"const":"cat","title":"Cat"},{"const":"dog","title":"Dog"}]},"maxItems":2}` +
	`},"required":["name","color"]}`

func (f askFixtures) form(t *testing.T) string {
	return f.create(t, askd.AskInput{Kind: askd.KindForm, Title: f.unique("Set up the account") + "\nThe CRM needs these to create it.",
		Source: "crm", Schema: json.RawMessage(formSchema)})
}

func (f askFixtures) urlForm(t *testing.T) string {
	return f.create(t, askd.AskInput{Kind: askd.KindForm, Title: f.unique("Sign in to continue"), Source: "github",
		URL: "https://github.com/login/device?code=AB-12"})
}

// TestFormShowGolden: askd show prints a form ask's whole message, who asks
// through which session, each field with what it takes and, once answered,
// its answer; a url-mode form's address on a line of its own with its host
// set apart; a pending one, how to answer. askd list shows the message's
// first line.
func TestFormShowGolden(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	f := newFixtures(srv)
	human := []string{"--url", srv.URL, "--token", srv.HumanToken}
	for _, tt := range []struct {
		name   string
		ask    func(*testing.T) string
		answer []string // none: shown pending
	}{
		{"form-pending", f.form, nil},
		{"form-accepted", f.form, []string{"name=Test User", "count=7", "ratio=0.25", "agree=yes", "color=green", "pets=cat", "pets=dog"}},
		{"form-declined", f.form, []string{"--decline"}},
		{"url-pending", f.urlForm, nil},
		{"url-done", f.urlForm, []string{"--done"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := tt.ask(t)
			if tt.answer != nil {
				if _, errOut, err := runCLI(t, append(append([]string{"answer", id}, tt.answer...), human...)...); err != nil {
					t.Fatalf("answer: %v\n%s", err, errOut)
				}
			}
			show, _, err := runCLI(t, append([]string{"show", id}, human...)...)
			if err != nil {
				t.Fatal(err)
			}
			checkTerminalSafe(t, show)
			norm := strings.ReplaceAll(strings.ReplaceAll(show, "#"+id+" ", "#N "), "answer "+id+" ", "answer N ")
			testserver.Golden(t, filepath.Join("testdata", "describe", tt.name+".show"), []byte(timestamps.ReplaceAllString(norm, "TIME")))
		})
	}
	list, _, err := runCLI(t, append([]string{"list", "--status", "pending"}, human...)...)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^\d+ +pending +form +agent-1 +s1 +Set up the account$`).MatchString(list) || strings.Contains(list, "The CRM needs") {
		t.Errorf("askd list:\n%s\nwant a form's message by its first line", list)
	}
}

// TestFormAnswerTyped: askd answer FIELD=VALUE stores each value as its
// field's type (numbers as numbers, yes as true, a multi-select as a list),
// fills in the defaults of the fields not given, and --decline and --done
// settle as the person's answer (read back through the API).
func TestFormAnswerTyped(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	f := newFixtures(srv)
	conn := []string{"--url", srv.URL, "--token", srv.HumanToken}
	for _, tt := range []struct {
		name string
		ask  func(*testing.T) string
		args []string // after the id
		want askd.Answer
	}{
		{"every type", f.form, []string{"name=Test User", "count=7", "ratio=.25", "agree=yes", "color=green", "pets=dog", "pets=cat", "size=l"},
			askd.Answer{Action: askd.FormAccept, Content: map[string]any{"name": "Test User", "email": "a@example.com", "count": 7.0,
				"ratio": 0.25, "agree": true, "color": "green", "size": "l", "pets": []any{"dog", "cat"}}}},
		{"flags first, booleans in any case, no pets", f.form, []string{"--json", "agree=NO", "color=red", "name=Tester", "pets=", "count=1e2"},
			askd.Answer{Action: askd.FormAccept, Content: map[string]any{"name": "Tester", "email": "a@example.com", "count": 100.0,
				"agree": false, "color": "red", "size": "s", "pets": []any{}}}},
		{"a value holding =", f.form, []string{"name=a=b", "color=red", "--done"},
			askd.Answer{Action: askd.FormAccept, Content: map[string]any{"name": "a=b", "email": "a@example.com", "count": 5.0,
				"agree": false, "color": "red", "size": "s"}}},
		{"decline", f.form, []string{"--decline"}, askd.Answer{Action: askd.FormDecline}},
		{"url mode: done", f.urlForm, []string{"--done"}, askd.Answer{Action: askd.FormAccept}},
		{"url mode: decline", f.urlForm, []string{"--decline"}, askd.Answer{Action: askd.FormDecline}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := tt.ask(t)
			if _, errOut, err := runCLI(t, append(append([]string{"answer", id}, tt.args...), conn...)...); err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			d, err := srv.Human().Show(t.Context(), mustID(t, id))
			if err != nil {
				t.Fatal(err)
			}
			if d.Status != askd.StatusAnswered || d.SettledBy == "" || d.Answer == nil {
				t.Fatalf("stored %s by %q, answer %+v; want answered by the person", d.Status, d.SettledBy, d.Answer)
			}
			if !reflect.DeepEqual(*d.Answer, tt.want) {
				t.Errorf("stored %#v\nwant   %#v", *d.Answer, tt.want)
			}
		})
	}
}

// TestFormAnswerRefused: a form answer askd answer cannot take as meant is
// refused before anything is sent, naming the field (in the server's own
// words where the server checks it too, near misses named), exit 2, and the
// ask stays pending with no answer.
func TestFormAnswerRefused(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	f := newFixtures(srv)
	conn := []string{"--url", srv.URL, "--token", srv.HumanToken}
	valid := []string{"name=Tester", "color=red"}
	for _, tt := range []struct {
		name string
		ask  func(*testing.T) string
		args []string // after the id
		want string   // the whole error
	}{
		{"a field the form lacks", f.form, append([]string{"colour=red"}, valid...),
			`answer: colour: not a field of this form (did you mean "color"?)`},
		{"a field far from any", f.form, append([]string{"zip=1"}, valid...),
			"answer: zip: not a field of this form (its fields: name, email, count, ratio, agree, color, size, pets)"},
		{"not an integer", f.form, append([]string{"count=twelve"}, valid...),
			`answer: count: must be a number, not the text "twelve"`},
		{"not a whole number", f.form, append([]string{"count=2.5"}, valid...),
			"answer: count: 2.5 is not a whole number"},
		{"above the maximum", f.form, append([]string{"count=142"}, valid...),
			"answer: count: 142 is above the maximum 100"},
		{"not a boolean", f.form, append([]string{"agree=maybe"}, valid...),
			`answer: agree: must be true or false, not the text "maybe"`},
		{"a near miss of a choice", f.form, []string{"name=Tester", "color=gren"},
			`answer: color: "gren" is not one of red, green (did you mean "green"?)`},
		{"a title for its value", f.form, append([]string{"size=Large"}, valid...),
			`answer: size: "Large" is not one of s, l (did you mean "l" (Large)?)`},
		{"a multi-select choice that is none", f.form, append([]string{"pets=cat", "pets=cow"}, valid...),
			`answer: pets: "cow" is not one of cat, dog`}, // nothing near: no hint
		{"required missing", f.form, []string{"name=Tester"}, "answer: color: required"},
		{"several problems, each named", f.form, []string{"count=0", "email=ada"},
			`answer: color: required; count: 0 is below the minimum 1; email: "ada" is not an e-mail address; name: required`},
		{"words, not FIELD=VALUE", f.form, []string{"Tester"},
			`answer: "Tester" is not FIELD=VALUE; the form's fields are name, email, count, ratio, agree, color, size, pets`},
		{"no field name", f.form, []string{"=red"},
			`answer: "=red" is not FIELD=VALUE; the form's fields are name, email, count, ratio, agree, color, size, pets`},
		{"one value given twice", f.form, append([]string{"count=1", "count=2"}, valid...),
			`answer: count takes one value, given 2 times ("1", "2")`},
		{"choices joined by a comma", f.form, append([]string{"pets=cat,dog"}, valid...),
			"answer: pets=cat,dog: give each choice as its own pets=VALUE (pets=cat pets=dog)"},
		{"nothing", f.form, nil,
			"answer: give ask #ID's fields as FIELD=VALUE (name, email, count, ratio, agree, color, size, pets), --done to send the form as it is pre-filled, or --decline"},
		{"--done with a required field empty", f.form, []string{"--done"}, "answer: color: required; name: required"},
		{"--decline with fields", f.form, append([]string{"--decline"}, valid...),
			"answer: --decline refuses the form; give no FIELD=VALUE or --done with it"},
		{"--comment on a form", f.form, append([]string{"--comment", "x"}, valid...), "answer: --comment is not for form asks"},
		{"fields for a url-mode form", f.urlForm, []string{"code=1"},
			"answer: ask #ID sends you to an address, it has no fields: --done once you have finished there, or --decline (askd show ID)"},
		{"a url-mode form without --done", f.urlForm, nil,
			"answer: ask #ID sends you to an address, it has no fields: --done once you have finished there, or --decline (askd show ID)"},
		{"--done on a decision", f.decision, []string{"eu-west", "--done"}, "answer: --done is not for decision asks"},
		{"--decline on an approval", f.approval, []string{"--decline"}, "answer: --decline is not for approval asks"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := tt.ask(t)
			t.Cleanup(func() { srv.Human().Dismiss(context.Background(), mustID(t, id), "") }) // a session holds at most 20 pending
			before, err := srv.Human().Show(t.Context(), mustID(t, id))
			if err != nil {
				t.Fatal(err)
			}
			_, errOut, err := runCLI(t, append(append([]string{"answer", id}, tt.args...), conn...)...)
			want := strings.ReplaceAll(tt.want, "#ID", "#"+id)
			want = strings.ReplaceAll(want, "show ID", "show "+id)
			if err == nil || err.Error() != want || cli.ExitCode(err) != 2 {
				t.Fatalf("err %v (exit %d)\nwant exit 2 saying %s", err, cli.ExitCode(err), want)
			}
			if errOut != "" {
				t.Errorf("stderr %q: a mistake is one line, printed once by main", errOut)
			}
			after, err := srv.Human().Show(t.Context(), mustID(t, id))
			if err != nil {
				t.Fatal(err)
			}
			if !after.Pending() || after.Answer != nil || after.UpdatedAt != before.UpdatedAt || len(after.History) != len(before.History) {
				t.Errorf("after the refusal: %s, answer %+v, updated %v (was %v); want pending and untouched", after.Status, after.Answer, after.UpdatedAt, before.UpdatedAt)
			}
		})
	}
}

// TestFormAnswerServerRefusal: what the server refuses is shown as it
// comes, and the server names the same near miss as askd answer would.
func TestFormAnswerServerRefusal(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	f := newFixtures(srv)
	id := f.form(t)
	_, _, err := runCLI(t, "answer", id, "--body", `{"content": {"name": "Tester", "color": "gren", "count": 500}}`, "--url", srv.URL, "--token", srv.HumanToken)
	want := `color: "gren" is not one of red, green (did you mean "green"?); count: 500 is above the maximum 100`
	if err == nil || err.Error() != want || askd.ErrorCode(err) != askd.EMISMATCH {
		t.Fatalf("err %v (%s)\nwant the server's %s", err, askd.ErrorCode(err), want)
	}
	if d, _ := srv.Human().Show(t.Context(), mustID(t, id)); !d.Pending() {
		t.Errorf("ask %s after the server's refusal, want pending", d.Status)
	}
	// Settled meanwhile: the conflict, as the server says it.
	if _, _, err := runCLI(t, "answer", id, "--decline", "--url", srv.URL, "--token", srv.HumanToken); err != nil {
		t.Fatal(err)
	}
	_, _, err = runCLI(t, "answer", id, "name=Tester", "color=red", "--url", srv.URL, "--token", srv.HumanToken)
	if askd.ErrorCode(err) != askd.ECONFLICT || cli.ExitCode(err) != 1 {
		t.Errorf("answering a declined form: %v (%s, exit %d), want the server's conflict", err, askd.ErrorCode(err), cli.ExitCode(err))
	}
}

// TestFormHelp: askd answer -h and askd show -h say how form asks are
// shown and answered.
func TestFormHelp(t *testing.T) {
	for cmd, wants := range map[string][]string{
		"answer": {"askd answer ID FIELD=VALUE... | ID --done | ID --decline", "tags=a tags=b", "yes or no", "--done", "--decline", "defaults"},
		"show":   {"asked by SERVER through SESSION", "VALUE (TITLE)", "host set apart"},
	} {
		out, _, _ := runCLI(t, cmd, "-h")
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("askd %s -h lacks %q:\n%s", cmd, w, out)
			}
		}
	}
}

// TestAskForm: an agent asks a form from the command line (askd ask --kind
// form), as an MCP server's question would come; a schema askd refuses is
// an error naming the property, and nothing is stored.
func TestAskForm(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	agent := []string{"--url", srv.URL, "--token", srv.AgentToken, "--session", "cli-form", "--json"}
	var out, errOut strings.Builder
	err := run(context.Background(), append([]string{"ask", "--kind", "form", "--title", "Which region?\nPick the nearest.", "--source", "deployer",
		"--schema", `{"type":"object","properties":{"region":{"type":"string","enum":["eu","us"]}},"required":["region"]}`}, agent...), nil, &out, &errOut)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	var a askd.Ask
	if err := json.Unmarshal([]byte(out.String()), &a); err != nil || a.Kind != askd.KindForm || a.Source != "deployer" || a.Title != "Which region?\nPick the nearest." {
		t.Fatalf("created %+v, %v\n%s", a, err, out.String())
	}
	out.Reset()
	err = run(context.Background(), append([]string{"ask", "--kind", "form", "--title", "x", "--schema", `{"type":"object","properties":{"region":{"type":"object"}}}`}, agent...), nil, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), `schema.properties.region.type: "object" is not one of`) {
		t.Fatalf("refused schema: %v", err)
	}
	if asks := srv.Pending(t, "cli-form", 1); len(asks) != 1 {
		t.Fatalf("pending after a refusal: %d asks", len(asks))
	}
}
