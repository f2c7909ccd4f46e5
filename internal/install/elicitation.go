package install

import (
	"fmt"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/jsonedit"
)

// The Elicitation hook (SPEC §9): askd install claude --elicitation makes
// every MCP server's question a form ask in the inbox. claude -p cancels an
// elicitation no hook answers; interactive Claude Code runs the hook too,
// and then asks in the inbox instead of its own dialog.
//
// A command hook running askd hook, like askd's other hooks (see askdHook:
// it follows ASKD_URL, and the token stays in the environment, out of
// settings). No matcher: the matcher of this event is the MCP server's name,
// and every server's questions are meant.

// elicitationEvent is the hook event of an MCP server's question.
const elicitationEvent = "Elicitation"

// elicitationHookTimeout is Claude Code's timeout for the hook, in seconds:
// a minute past askd's own deadline for the form ask (timeout), so that askd
// answers cancel before Claude Code gives up (which would withdraw the ask
// with no answer to the MCP server), and never below the other hooks'.
func elicitationHookTimeout(timeout time.Duration) int {
	return max(claudeHookTimeout, seconds(timeout+time.Minute))
}

// addElicitationHook puts askd's Elicitation hook into settings, in place
// of the one an earlier install wrote, keeping every other hook.
func addElicitationHook(root *jsonedit.Object, base string, timeout time.Duration) error {
	hooks, err := root.Object("hooks")
	if err != nil {
		return err
	}
	groups, err := hooks.Array(elicitationEvent)
	if err != nil {
		return fmt.Errorf("hooks: %v", err)
	}
	group := jsonedit.NewObject().Set("hooks", []any{
		askdHook(base, "", elicitationHookTimeout(timeout), "askd: waiting for the answer in the inbox"),
	})
	hooks.Set(elicitationEvent, withAskdGroup(groups, group))
	return nil
}

// removeElicitationHook takes out the Elicitation hook an earlier install
// --elicitation wrote, keeping the user's own, and reports whether there
// was one. An event left with no hooks goes too.
func removeElicitationHook(root *jsonedit.Object) (bool, error) {
	hooks, err := root.Object("hooks")
	if err != nil {
		return false, err
	}
	groups, err := hooks.Array(elicitationEvent)
	if err != nil {
		return false, fmt.Errorf("hooks: %v", err)
	}
	if !holdsAskdHook(groups) {
		return false, nil
	}
	if kept := withAskdGroup(groups, nil); len(kept) > 0 {
		hooks.Set(elicitationEvent, kept)
	} else {
		hooks.Remove(elicitationEvent)
	}
	return true, nil
}

// holdsAskdHook reports whether any of an event's hook groups holds one of
// askd's hooks.
func holdsAskdHook(groups []any) bool {
	for _, g := range groups {
		gm, ok := g.(*jsonedit.Object)
		if !ok {
			continue
		}
		list, err := gm.Array("hooks")
		if err != nil {
			continue
		}
		for _, h := range list {
			if hm, ok := h.(*jsonedit.Object); ok && isAskdHook(hm) {
				return true
			}
		}
	}
	return false
}

// elicitationNote is what install --elicitation says on stderr: what the
// hook changes for interactive use, and which timeouts it must outlast.
func elicitationNote(timeout time.Duration) string {
	hook := elicitationHookTimeout(timeout)
	return fmt.Sprintf(`askd: the Elicitation hook is in: MCP servers' questions become form asks in the inbox.
  Interactive Claude Code now sends them to askd too, instead of showing its own dialog.
  Claude Code waits %ds for the hook, so askd serve's --elicitation-timeout (default: its
  --question-timeout) must be at most %s, or Claude Code gives up first and the ask is
  withdrawn; give a longer one here as --elicitation-timeout.
  An MCP server may stop waiting sooner on its own (the TypeScript SDK's default is 60s).`,
		hook, askd.ShortDuration(time.Duration(hook)*time.Second-time.Minute))
}
