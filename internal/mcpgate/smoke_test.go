package mcpgate

import (
	"context"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestSmoke(t *testing.T) {
	f := newFixture(t)
	g := startGate(t, f.env(), append([]string{"--name", "scripted", "--"}, scripted(t, "")...)...)
	cs := g.connect(t, "", nil)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("version %s, %d tools", cs.InitializeResult().ProtocolVersion, len(tools.Tools))
	w := f.watch(t, "scripted")
	out := callAsync(cs, context.Background(), "echo", map[string]any{"text": "hi"})
	a := w.asked(t)
	t.Logf("asked: %+v", a)
	f.answer(t, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
	o := <-out
	if o.err != nil {
		t.Fatal(o.err)
	}
	t.Logf("result: %q %v", text(o.res), o.res.IsError)
	_ = mcp.Content(nil)
}
