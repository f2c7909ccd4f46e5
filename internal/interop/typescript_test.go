package interop_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/testserver"
)

// TestGeneratedTypeScriptClient: openapi-typescript generates types from
// the document the real askd serves; tsc compiles a small client against
// them (testdata/client.ts, strict, with calls the types must refuse); and
// node runs it against that askd: an agent creates an ask, a person answers
// it, a second answer is refused with the ask as it is, and the agent reads
// the outcome.
func TestGeneratedTypeScriptClient(t *testing.T) {
	t.Parallel()
	node := testserver.Node(t)
	mods := filepath.Join(testserver.NPM(t, openAPITypeScript, typeScript, openAPIFetch), "node_modules")
	s := testserver.ServeBinary(t)

	dir := t.TempDir()
	resp, err := http.Get(s.URL + "/api/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/openapi.json: %s, %v", resp.Status, err)
	}
	files := map[string][]byte{"openapi.json": doc, "package.json": []byte(`{"private": true, "type": "module"}` + "\n")}
	for _, name := range []string{"client.ts", "tsconfig.json"} {
		if files[name], err = os.ReadFile(filepath.Join("testdata", name)); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(mods, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	run(t, dir, nil, node, filepath.Join(mods, "openapi-typescript", "bin", "cli.js"), "openapi.json", "--output", "askd.d.ts")
	run(t, dir, nil, node, filepath.Join(mods, "typescript", "bin", "tsc"), "-p", "tsconfig.json")
	out := run(t, dir, []string{"ASKD_URL=" + s.URL, "ASKD_AGENT_TOKEN=" + s.Agent, "ASKD_HUMAN_TOKEN=" + s.Human},
		node, filepath.Join("out", "client.js"))

	var got struct {
		ID         int64   `json:"id"`
		Created    string  `json:"created"`
		Listed     []int64 `json:"listed"`
		AnsweredBy string  `json:"answered_by"`
		Conflict   *struct {
			Status    int    `json:"status"`
			Code      string `json:"code"`
			SettledBy string `json:"settled_by"`
		} `json:"conflict"`
		Read struct {
			Status string `json:"status"`
			Answer string `json:"answer"`
			Told   bool   `json:"told"`
		} `json:"read"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("the client printed %q: %v", out, err)
	}
	me, err := client.New(s.URL, s.Human).Me(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	person := me["name"]
	switch {
	case got.ID == 0 || got.Created != "pending" || !slices.Contains(got.Listed, got.ID):
		t.Errorf("created %d %q, listed %v: want a pending ask the person's list holds", got.ID, got.Created, got.Listed)
	case got.AnsweredBy != person:
		t.Errorf("answered by %q, want %q", got.AnsweredBy, person)
	case got.Conflict == nil || got.Conflict.Status != http.StatusConflict || got.Conflict.Code != "conflict" || got.Conflict.SettledBy != person:
		t.Errorf("the second answer: %+v, want 409 conflict with the ask settled by %s", got.Conflict, person)
	case got.Read.Status != "answered" || got.Read.Answer != "yes" || !got.Read.Told:
		t.Errorf("the agent read %+v, want answered yes, told", got.Read)
	}
	// What the client did is what askd recorded.
	shown, err := client.New(s.URL, s.Human).Show(t.Context(), got.ID)
	if err != nil {
		t.Fatal(err)
	}
	if shown.Status != "answered" || shown.Answer == nil || shown.Answer.Answer != "yes" || shown.ToldAt == nil {
		t.Errorf("askd has %+v", shown.Ask)
	}
}
