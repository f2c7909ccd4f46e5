package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/testserver"
)

// delivery reads the tell delivery key back from the store.
func delivery(t *testing.T, srv *testserver.Server, key string) *askd.Delivery {
	t.Helper()
	var d *askd.Delivery
	if err := srv.Store.View(t.Context(), func(tx askd.Tx) (err error) {
		d, err = tx.Deliveries.Delivery(t.Context(), key)
		return err
	}); err != nil {
		t.Fatalf("read delivery %s back: %v", key, err)
	}
	return d
}

// TestBridgeIsolation: agent B attaches a channel bridge to "s1", reports
// A's told text told, closes A's relayed prompt, waits on it and answers it.
// None of it touches A's session: B's stream is handed nothing of A's, and
// A's asks and delivery read back as they were.
func TestBridgeIsolation(t *testing.T) {
	srv, a, b, _ := twoAgents(t)
	ctx := t.Context()

	// B's bridge on "s1" is attached first, so that A's answer happens while
	// it listens.
	tells, err := b.Attach(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "B's bridge attached", func() bool {
		var until time.Time
		_ = srv.Store.View(ctx, func(tx askd.Tx) (err error) {
			until, err = tx.Channels.BridgeUntil(ctx, "agent-b", "s1")
			return err
		})
		return !until.IsZero()
	})
	ask, err := a.Create(ctx, &askd.AskInput{Kind: askd.KindDecision, Title: "Deploy?"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	answered, err := srv.Human().Answer(ctx, ask.ID, &askd.Answer{Answer: "yes"})
	if err != nil {
		t.Fatal(err)
	}
	key := askd.TellKey(answered)
	relayed, err := a.RelayPermission(ctx, "s1", &askd.PermissionRelay{RequestID: "abcde", ToolName: "Bash", InputPreview: `{"command":"rm -rf build"}`})
	if err != nil {
		t.Fatal(err)
	}
	beforeTold, beforeRelay := stored(t, srv, ask.ID), stored(t, srv, relayed.ID)
	beforeDelivery := delivery(t, srv, key)
	if beforeDelivery.Channel.Type != askd.ChannelHook || beforeDelivery.Attempts != 0 {
		t.Fatalf("A's delivery %+v: want a hook one (A has no bridge), never claimed", beforeDelivery)
	}

	_, err = b.ChannelTold(ctx, "s1", key)
	wantStatus(t, err, http.StatusNotFound, "no told text")
	_, err = b.CloseRelay(ctx, "s1", "abcde", "terminal")
	wantStatus(t, err, http.StatusNotFound, "no relayed prompt")
	_, err = b.Check(ctx, relayed.ID, time.Second)
	wantStatus(t, err, http.StatusNotFound, "not found")
	_, err = b.Answer(ctx, relayed.ID, &askd.Answer{Decision: askd.DecisionApproved})
	wantStatus(t, err, http.StatusForbidden, "")
	// B relaying the same request id in its "s1" makes a card of its own.
	mine, err := b.RelayPermission(ctx, "s1", &askd.PermissionRelay{RequestID: "abcde", ToolName: "Bash", InputPreview: `{"command":"rm -rf build"}`})
	if err != nil {
		t.Fatal(err)
	}
	if mine.ID == relayed.ID || mine.Agent != "agent-b" {
		t.Fatalf("B's relay %+v attached to A's card %d", mine, relayed.ID)
	}

	unchanged(t, srv, beforeTold)
	unchanged(t, srv, beforeRelay)
	if d := delivery(t, srv, key); d.Status != askd.DeliveryPending || d.Attempts != 0 || d.ClaimedUntil != nil {
		t.Fatalf("A's delivery after B's attacks: %+v", d)
	}
	// A's own Stop hook still tells it: B's bridge never had it.
	text, err := srv.App.StopHook(ctx, []askd.Caller{{Name: srv.AgentName, Role: askd.RoleAgent, Session: "s1"}}, 0)
	if err != nil || !strings.Contains(text, "Deploy?") {
		t.Fatalf("A's Stop hook = %q, %v", text, err)
	}
	select {
	case tell := <-tells:
		t.Fatalf("B's bridge was handed %+v", tell)
	default:
	}
}

// TestBridgeBadInput: refusals name the field and the rule.
func TestBridgeBadInput(t *testing.T) {
	srv, a, _, _ := twoAgents(t)
	ctx := t.Context()
	tests := []struct {
		name string
		in   askd.PermissionRelay
		says string
	}{
		{"request id too short", askd.PermissionRelay{RequestID: "abc", ToolName: "Bash"}, `request_id: "abc" is not 5 lowercase letters`},
		{"request id upper case", askd.PermissionRelay{RequestID: "ABCDE", ToolName: "Bash"}, `request_id: "ABCDE" is not 5 lowercase letters`},
		{"no tool", askd.PermissionRelay{RequestID: "abcde"}, "tool_name: required"},
		{"preview too long", askd.PermissionRelay{RequestID: "abcde", ToolName: "Bash", InputPreview: strings.Repeat("x", askd.MaxInputPreviewChars+1)}, "input_preview: 2001 characters, at most 2000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := a.RelayPermission(ctx, "s1", &tt.in)
			wantStatus(t, err, http.StatusBadRequest, tt.says)
		})
	}
	if _, err := a.RelayPermission(ctx, "s1", &askd.PermissionRelay{RequestID: "abcde", ToolName: "Bash"}); err != nil {
		t.Fatal(err)
	}
	_, err := a.CloseRelay(ctx, "s1", "abcde", "later")
	wantStatus(t, err, http.StatusBadRequest, `reason: "later" is not terminal or ended`)
	_, err = a.ChannelTold(ctx, "s1", "")
	wantStatus(t, err, http.StatusBadRequest, "key: required")
	_, err = a.Attach(ctx, "-s1")
	wantStatus(t, err, http.StatusBadRequest, "session")
	// Nothing was stored by the refused relays: one card only.
	if got := srv.Pending(t, "s1", 1); len(got) != 1 {
		t.Fatalf("%d pending cards, want 1", len(got))
	}
	// A human token cannot attach.
	_, err = srv.Human().Attach(ctx, "s1")
	wantStatus(t, err, http.StatusForbidden, "")
}
