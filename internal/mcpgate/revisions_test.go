package mcpgate

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRevisions: a go-sdk client that declares no elicitation, at each
// protocol revision, through each of the gate's shapes (stdio around a
// command, stdio in front of a remote streamable HTTP server, streamable
// HTTP around a command), to the scripted go-sdk server: the revision the
// client asked for is the one spoken; a call waits for its approval; the
// server's question — a legacy elicitation/create on the 2025 revisions,
// an input_required result on 2026-07-28, which the gate answers and calls
// again with its requestState — reaches the person, and their answer the
// server, every field as entered.
func TestRevisions(t *testing.T) {
	f := newFixture(t)
	for _, shape := range []string{"stdio", "upstream", "listen"} {
		for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
			if shape != "stdio" && version == "2025-06-18" {
				continue
			}
			t.Run(shape+"/"+version, func(t *testing.T) {
				session := "rev-" + shape + "-" + version
				w := f.watch(t, session)
				cs := connectShape(t, f, shape, version, "--name", "scripted", "--session", session)
				if got := cs.InitializeResult().ProtocolVersion; got != version {
					t.Fatalf("negotiated %s, want %s", got, version)
				}

				out := callAsync(cs, context.Background(), "echo", map[string]any{"text": "through " + shape})
				a := w.asked(t)
				if a.ToolName != "mcp__scripted__echo" {
					t.Fatalf("asked for %q", a.ToolName)
				}
				f.answer(t, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
				if res := (<-out).must(t); res.IsError || text(res) != "through "+shape {
					t.Fatalf("echo: isError %v, %q", res.IsError, text(res))
				}

				out = callAsync(cs, context.Background(), "survey", map[string]any{})
				f.answer(t, w.asked(t).ID, &askd.Answer{Decision: askd.DecisionApproved})
				form := w.asked(t)
				if form.Kind != askd.KindForm || form.Title != "Which code?" || form.Source != "scripted" {
					t.Fatalf("the form ask: kind %s, title %q, source %q", form.Kind, form.Title, form.Source)
				}
				entered := map[string]any{"when": "2026-12-04T10:00:00Z", "code": "ABC-12", "sure": true}
				f.answer(t, form.ID, &askd.Answer{Content: entered})
				res := (<-out).must(t)
				var got map[string]any
				if err := json.Unmarshal([]byte(text(res)), &got); err != nil || res.IsError {
					t.Fatalf("survey: isError %v, %q", res.IsError, text(res))
				}
				if want := map[string]any{"action": "accept", "content": entered}; !reflect.DeepEqual(got, want) {
					t.Fatalf("the server got %v, want %v", got, want)
				}
			})
		}
	}
}

// connectShape starts a gate of the shape in front of the scripted server
// and connects a go-sdk client at version to it.
func connectShape(t *testing.T, f *fixture, shape, version string, args ...string) *mcp.ClientSession {
	t.Helper()
	switch shape {
	case "stdio":
		g := startGate(t, f.env(), append(args, append([]string{"--"}, scripted(t, "")...)...)...)
		return g.connect(t, version, nil)
	case "upstream":
		// The go-sdk serves 2026-07-28 over HTTP only statelessly, and
		// a stateless server cannot elicit the 2025 way.
		up := startRecordingServer(t, version >= "2026-07-28")
		g := startGate(t, f.env(), append(args, "--upstream", up.URL)...)
		return g.connect(t, version, nil)
	}
	addr := make(chan string, 1)
	tun := testTunables
	tun.listening = func(a string) { addr <- a }
	startGateWith(t, f.env(), tun, append(append(args, "--listen", "127.0.0.1:0", "--"), scripted(t, "")...)...)
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpgate-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + <-addr + frontPath}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect to the listener: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestElicitationToClient: with --elicitation client, a client that
// declares elicitation answers the server's questions itself (none goes to
// askd), at each revision; on 2026-07-28 its retry of the input_required
// call, with its answer, goes on without a second approval.
func TestElicitationToClient(t *testing.T) {
	f := newFixture(t)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			session := "to-client-" + version
			w := f.watch(t, session)
			g := startGate(t, f.env(), append([]string{"--name", "scripted", "--session", session, "--elicitation", "client", "--"}, scripted(t, "")...)...)
			asked := make(chan string, 1)
			cs := g.connect(t, version, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked <- r.Params.Message
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"code": "XYZ-99", "sure": false}}, nil
			}})
			out := callAsync(cs, context.Background(), "survey", map[string]any{})
			f.answer(t, w.asked(t).ID, &askd.Answer{Decision: askd.DecisionApproved})
			if msg := <-asked; msg != "Which code?" {
				t.Fatalf("the client was asked %q", msg)
			}
			res := (<-out).must(t)
			if res.IsError || !strings.Contains(text(res), `"XYZ-99"`) {
				t.Fatalf("survey answered by the client: %q", text(res))
			}
			if asks := f.asks(t, session); len(asks) != 1 || asks[0].Kind != askd.KindApproval {
				t.Fatalf("%d asks, want the one approval (no form, no second approval)", len(asks))
			}
		})
	}
}
