package mcpserver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/mcpserver"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A blocking tool call whose agent token is revoked (in the store, as `askd
// token revoke` does, maybe from another process) ends within the token
// cache's lifetime with a tool error saying so; the ask stays pending.
func TestRevokedTokenEndsBlockingCall(t *testing.T) {
	forEach(t, func(t *testing.T, tr transport) {
		var h *mcpserver.HTTPHandler
		srv := testserver.Start(t, testserver.Options{
			Config: app.Config{TokenCheckInterval: 20 * time.Millisecond},
			MCP: func(svc *app.Service) http.Handler {
				h = mcpserver.Handler(svc, mcpserver.Options{ProgressInterval: progressEvery})
				return h
			},
		})
		cs := connect(t, srv, tr, "revoked", nil)
		args := map[string]any{"questions": []map[string]any{{
			"question": "Ship it?", "header": "Ship",
			"options": []map[string]any{{"label": "yes"}, {"label": "no"}},
		}}}
		ch := callAsync(context.Background(), cs, &mcp.CallToolParams{Name: "ask_user_question", Arguments: args})
		asks := pending(t, srv, "revoked", 1)
		waitParked(t, h, 1)

		ctx := context.Background()
		err := srv.Store.Update(ctx, func(tx askd.Tx) error {
			ts, err := tx.Tokens.Tokens(ctx)
			if err != nil {
				return err
			}
			for _, tok := range ts {
				if tok.Role == askd.RoleAgent {
					return tx.Tokens.RevokeToken(ctx, tok.Name)
				}
			}
			t.Fatal("no agent token")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		select {
		case o := <-ch:
			if o.err != nil {
				t.Fatalf("call: %v", o.err)
			}
			if !o.res.IsError || !strings.Contains(text(t, o.res), "token revoked") {
				t.Fatalf("result %+v, want a tool error saying the token was revoked", o.res)
			}
		case <-time.After(5 * time.Second): // the token cache's lifetime
			t.Fatal("the blocking call is still open 5 s after the revocation")
		}
		t.Logf("call ended %v after the revocation", time.Since(start).Round(time.Millisecond))
		waitParked(t, h, 0)
		got, err := srv.App.Get(ctx, askd.Caller{Role: askd.RoleHuman, Name: "alice"}, asks[0].ID)
		if err != nil || got.Status != askd.StatusPending {
			t.Fatalf("the ask is %v (%v), want still pending for the person", got.Status, err)
		}
	})
}
