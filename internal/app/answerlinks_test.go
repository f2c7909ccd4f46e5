package app_test

import (
	"reflect"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
)

// deployForm is a form of one single-select field, env, of three choices.
var deployForm = &askd.AskInput{Kind: askd.KindForm, Title: "Where should I deploy?", Source: "deployer",
	Schema: []byte(`{"type":"object","properties":{"env":{"type":"string","title":"Environment","oneOf":[` +
		`{"const":"dev","title":"Dev"},{"const":"staging","title":"Staging"},{"const":"prod","title":"Production"}]}},"required":["env"]}`)}

// A form's links: a notifier with room for every tap gets the choices and
// Decline; one with room for the choices alone gets them without Decline;
// one with less room gets none. Each link answers its own ask only, with
// exactly its answer ({"env": const}), once; afterwards every link of the
// ask (Decline too) only says how it was answered, and the other form's
// links still answer the other form.
func TestFormAnswerLinks(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{Config: app.Config{NotifyAs: "alice"}})
	agent := srv.Agent("s1")
	a, err := agent.Create(t.Context(), deployForm, 0)
	if err != nil {
		t.Fatal(err)
	}
	other, err := agent.Create(t.Context(), deployForm, 0)
	if err != nil || other.ID == a.ID {
		t.Fatalf("the second form: %+v, %v", other, err)
	}
	labels := func(links []app.MintedLink) []string {
		var out []string
		for _, l := range links {
			out = append(out, l.Label)
		}
		return out
	}
	tests := []struct {
		max  int
		want []string
	}{
		{0, []string{"Dev", "Staging", "Production", "Decline"}},
		{4, []string{"Dev", "Staging", "Production", "Decline"}},
		{3, []string{"Dev", "Staging", "Production"}},
		{2, nil},
	}
	byLabel := map[string]string{}
	for _, tt := range tests {
		links, err := srv.App.MintAnswerLinks(t.Context(), a.ID, a.Revision, tt.max)
		if err != nil || !reflect.DeepEqual(labels(links), tt.want) {
			t.Fatalf("max %d: links %q, %v; want %q", tt.max, labels(links), err, tt.want)
		}
		for _, l := range links {
			byLabel[l.Label] = l.Code
		}
	}
	otherLinks, err := srv.App.MintAnswerLinks(t.Context(), other.ID, other.Revision, 0)
	if err != nil || len(otherLinks) != 4 {
		t.Fatalf("the other form's links: %d, %v", len(otherLinks), err)
	}

	v, err := srv.App.AnswerByLink(t.Context(), byLabel["Staging"], "via link")
	if err != nil || !v.Answered {
		t.Fatalf("Staging's link: %+v, %v", v, err)
	}
	got, err := srv.Human().Show(t.Context(), a.ID)
	want := &askd.Answer{Action: askd.FormAccept, Content: map[string]any{"env": "staging"}}
	if err != nil || got.Status != askd.StatusAnswered || got.SettledBy != "alice" || !reflect.DeepEqual(got.Answer, want) {
		t.Fatalf("after Staging's link: %s by %q, answer %+v (%v); want %+v by alice", got.Status, got.SettledBy, got.Answer, err, want)
	}
	for _, label := range []string{"Staging", "Production", "Decline"} {
		v, err := srv.App.AnswerByLink(t.Context(), byLabel[label], "via link")
		if err != nil || v.Answered || v.State != app.LinkSettled || v.Says() != "Answered by alice via link: Staging." {
			t.Errorf("%s's link, after: %+v (%q), %v; want settled, saying Staging", label, v, v.Says(), err)
		}
	}
	if got, _ := srv.Human().Show(t.Context(), a.ID); !reflect.DeepEqual(got.Answer, want) {
		t.Errorf("the answer changed to %+v", got.Answer)
	}
	if got, _ := srv.Human().Show(t.Context(), other.ID); !got.Pending() {
		t.Fatalf("the other form is %s: a link of one ask answered another", got.Status)
	}

	// The other form's Decline declines it, and only it.
	v, err = srv.App.AnswerByLink(t.Context(), otherLinks[3].Code, "via link")
	if err != nil || !v.Answered {
		t.Fatalf("Decline: %+v, %v", v, err)
	}
	if got, _ := srv.Human().Show(t.Context(), other.ID); !reflect.DeepEqual(got.Answer, &askd.Answer{Action: askd.FormDecline}) ||
		got.AnswerWords() != "declined" {
		t.Errorf("after Decline: %+v (%q)", got.Answer, got.AnswerWords())
	}
}
