package apicmd

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/testserver"
)

// From the terminal too, another agent token's `askd check`, `askd cancel`
// and `askd ask` in a session of the same name never reach the first
// agent's asks (SPEC §1), and the store reads back unchanged.
func TestCLIIsolation(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	a, err := srv.Agent("s1").Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "first agent's ask"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Human().Answer(ctx, a.ID, &askd.Answer{Answer: "go ahead"}); err != nil {
		t.Fatal(err)
	}
	b := srv.Token(t, "agent-b", askd.RoleAgent)
	id := fmt.Sprint(a.ID)
	for _, args := range [][]string{{"check", id}, {"cancel", id}} {
		var out, errOut bytes.Buffer
		full := append(append([]string{}, args...), "--url", srv.URL, "--token", b, "--session", "s1")
		err := run(ctx, full, nil, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), "not found") || strings.Contains(out.String(), "go ahead") {
			t.Errorf("askd %v with another token = %v, output %q; want not found and no answer", args, err, out.String())
		}
	}
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"ask", "--kind", "ready", "--title", "second agent's ask", "--url", srv.URL, "--token", b, "--session", "s1", "--json"}, nil, &out, &errOut); err != nil {
		t.Fatalf("askd ask: %v\n%s", err, errOut.String())
	}
	if strings.Contains(out.String(), fmt.Sprintf(`"id":%d,`, a.ID)) {
		t.Errorf("another token's askd ask replaced the first agent's ask: %s", out.String())
	}
	got, err := srv.Human().Show(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != askd.StatusAnswered || got.ToldAt != nil || got.Title != "first agent's ask" || got.Revision != 1 {
		t.Errorf("first agent's ask after the attempts = %s, told %v, %q rev %d; want answered, untold, as it was", got.Status, got.ToldAt, got.Title, got.Revision)
	}
}
