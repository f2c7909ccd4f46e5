package mcpgate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/askd-dev/askd"
)

// # One approval, one call
//
// Each call's approval is asked with a key naming the call, one_call and
// keep_untold (SPEC §14), and askd keeps the books:
//
//   - the key (callKey) is a digest of the session and everything the
//     approval holds: tool_name, title, details and the canonical
//     arguments. The same call is the same key, from any gate process of
//     the session; a gate that renders a call otherwise (another version)
//     asks under another key, so askd never refuses a key for other
//     content;
//   - one_call: askd gives the key's approval back while it is pending, or
//     decided and not yet told; once told, the key makes a new approval. A
//     call cut off before its decision reached its client (the client gave
//     up, the gate stopped or was killed) left its approval pending, or
//     decided and untold: the same call again, through this gate or
//     another, gets it back, and a decision made meanwhile at once;
//   - keep_untold: the gate reads a decision without telling it, and marks
//     it told (POST /api/asks/{id}/told) before the call goes on or its
//     refusal goes back. Of several marks of one approval askd lets one
//     mark it, and the others learn so (409): only the call whose mark was
//     the one uses the decision, and any other (the same call made at once
//     through another gate, or twice in one) asks anew. So one approval
//     answers exactly one call, across gate processes and restarts, with
//     nothing of the gate's own to remember.
//
// The mark comes before the call goes upstream, not after its result: a
// gate stopped between the two then has used an approval whose call never
// ran (the same call later asks anew: a person asked twice, nothing run
// unapproved), where the other order would run the call and leave its
// decision untold, for the same call to run again.
//
// The gate keeps no ledger of approvals: askd's key, one_call and told
// mark are that ledger, shared by every gate of the token. What this
// process keeps is each live call's own: the approval it waits on (for
// its progress and its error result, toolCall.approval), and that it
// stopped waiting (cutOff: askd records a cut-off it sees, but not one
// before it began to wait).
//
// What this cannot know, and how it fails: a client that gives up in the
// moment between the gate's mark and its forwarding has its decision used
// by no call (the call is not forwarded: the client cancelled it); and
// anything else that tells the gate's session its untold outcomes (askd
// check or a channel in that session) uses them up the same way. Both
// fail by asking the person again, never by running a call twice.

// callKey is the key of call approval in's approvals in session:
// "mcp-gate <digest>", well within askd.MaxGateKeyChars. The gate's keys
// of before one_call ("mcp-gate <digest> <generation>") are never this.
func callKey(session string, in *askd.AskInput) string {
	h := sha256.New()
	for _, s := range []string{session, in.ToolName, in.Title, in.Details} {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	h.Write(in.Payload)
	return "mcp-gate " + hex.EncodeToString(h.Sum(nil)[:16])
}
