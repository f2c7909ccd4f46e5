package app_test

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// oneCall is an approval for one call, under key.
func oneCall(key string) *askd.AskInput {
	return &askd.AskInput{Kind: askd.KindApproval, Title: "Call write_file on fs", ToolName: "mcp__fs__write_file",
		Payload: json.RawMessage(`{"path":"notes.txt"}`), Source: "fs", Key: key, OneCall: true}
}

// TestOneCallKey (SPEC §14): a key asked with one_call gets its approval
// back while pending and while decided but untold, from any session of the
// token; once told, a new approval; a key is asked one way. Keys asked
// without one_call keep theirs for good.
func TestOneCallKey(t *testing.T) {
	svc := newService(t, app.Config{})
	ctx := t.Context()
	create := func(c askd.Caller, in *askd.AskInput) *askd.Ask {
		t.Helper()
		a, err := svc.Create(ctx, c, in, app.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	first := create(agentCaller, oneCall("call 1"))
	if !first.OneCall || first.Key != "call 1" || first.Deadline != nil {
		t.Fatalf("first = %+v; want one_call, keyed, no deadline", first)
	}
	other := agentCaller
	other.Session = "s2"
	if again := create(other, oneCall("call 1")); again.ID != first.ID {
		t.Fatalf("pending: the key gave ask %d, want %d", again.ID, first.ID)
	}
	if _, err := svc.Answer(ctx, humanCaller, first.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	if again := create(agentCaller, oneCall("call 1")); again.ID != first.ID || again.Pending() || again.ToldAt != nil {
		t.Fatalf("decided, untold: the key gave %+v, want ask %d decided, untold", again, first.ID)
	}
	if _, err := svc.MarkTold(ctx, other, first.ID); err != nil { // any session of the token
		t.Fatal(err)
	}
	second := create(agentCaller, oneCall("call 1"))
	if second.ID == first.ID || !second.Pending() || second.Key != "call 1" {
		t.Fatalf("told: the key gave %+v, want a new pending approval", second)
	}
	if again := create(agentCaller, oneCall("call 1")); again.ID != second.ID {
		t.Fatalf("the new one pending: the key gave ask %d, want %d", again.ID, second.ID)
	}

	in := oneCall("call 1")
	in.OneCall = false
	if _, err := svc.Create(ctx, agentCaller, in, app.CreateOptions{}); askd.ErrorCode(err) != askd.ECONFLICT {
		t.Fatalf("the key without one_call: %v, want ECONFLICT", err)
	}
	kept := oneCall("deploy")
	kept.OneCall = false
	k := create(agentCaller, kept)
	if _, err := svc.Answer(ctx, humanCaller, k.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Check(ctx, agentCaller, k.ID); err != nil { // told
		t.Fatal(err)
	}
	if again := create(agentCaller, kept); again.ID != k.ID {
		t.Fatalf("a key without one_call, told: gave ask %d, want %d for good", again.ID, k.ID)
	}
	if _, err := svc.Create(ctx, agentCaller, oneCall("deploy"), app.CreateOptions{}); askd.ErrorCode(err) != askd.ECONFLICT {
		t.Fatalf("a key without one_call, asked with it: %v, want ECONFLICT", err)
	}

	for name, in := range map[string]*askd.AskInput{
		"without a key": {Kind: askd.KindApproval, Title: "x", OneCall: true},
		"with replaces": {Kind: askd.KindApproval, Title: "x", Key: "k", Replaces: "k", OneCall: true},
		"on a question": {Kind: askd.KindQuestion, Questions: decision("q?").Questions, OneCall: true},
	} {
		if _, err := svc.Create(ctx, agentCaller, in, app.CreateOptions{}); askd.ErrorCode(err) != askd.EINVALID {
			t.Errorf("one_call %s: %v, want EINVALID", name, err)
		}
	}
}

// TestOneCallAcrossProcesses: on one database through two processes,
// calls made at once of one key whose approval was decided while none
// waited, each reading it untold and using it only if its mark told it
// (the MCP gate's way): exactly one uses the decision; every other asks
// again and all of those get one new approval. Then, that one told, calls
// at once get one new approval between them, never a told one.
func TestOneCallAcrossProcesses(t *testing.T) {
	onOneDatabase(t, func(t *testing.T, one, two *app.Service) {
		ctx := t.Context()
		decided, err := one.Create(ctx, agentCaller, oneCall("call 2"), app.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := two.Answer(ctx, humanCaller, decided.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
			t.Fatal(err)
		}

		// calls runs n calls of the key at once, half through each process:
		// each creates, and marks a decided approval told; it returns the
		// ids each used, and the ids each asked anew got.
		calls := func(n int) (used, anew []int64) {
			var mu sync.Mutex
			var wg sync.WaitGroup
			for i := range n {
				svc := []*app.Service{one, two}[i%2]
				wg.Go(func() {
					a, err := svc.Create(ctx, agentCaller, oneCall("call 2"), app.CreateOptions{})
					for err == nil && !a.Pending() {
						if _, err = svc.MarkTold(ctx, agentCaller, a.ID); err == nil {
							mu.Lock()
							used = append(used, a.ID)
							mu.Unlock()
							return
						}
						if askd.ErrorCode(err) != askd.ECONFLICT {
							break
						}
						// Another call used it: this one asks anew.
						a, err = svc.Create(ctx, agentCaller, oneCall("call 2"), app.CreateOptions{})
					}
					if err != nil {
						t.Errorf("call: %v", err)
						return
					}
					mu.Lock()
					anew = append(anew, a.ID)
					mu.Unlock()
				})
			}
			wg.Wait()
			return used, anew
		}

		const n = 12
		used, anew := calls(n)
		if !slices.Equal(used, []int64{decided.ID}) || len(anew) != n-1 || len(slices.Compact(slices.Sorted(slices.Values(anew)))) != 1 || anew[0] == decided.ID {
			t.Fatalf("after a decision no call waited for: used %v, asked anew %v; want %d used once, and one new approval for the other %d", used, anew, decided.ID, n-1)
		}
		next := anew[0]
		if _, err := one.Answer(ctx, humanCaller, next, &askd.Answer{Decision: askd.DecisionRejected}); err != nil {
			t.Fatal(err)
		}
		if _, err := two.MarkTold(ctx, agentCaller, next); err != nil {
			t.Fatal(err)
		}
		var made []int64
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range n {
			svc := []*app.Service{one, two}[i%2]
			wg.Go(func() {
				a, err := svc.Create(ctx, agentCaller, oneCall("call 2"), app.CreateOptions{})
				if err != nil {
					t.Errorf("create: %v", err)
					return
				}
				mu.Lock()
				made = append(made, a.ID)
				mu.Unlock()
			})
		}
		wg.Wait()
		slices.Sort(made)
		if made = slices.Compact(made); len(made) != 1 || made[0] == decided.ID || made[0] == next {
			t.Fatalf("creates at once after the telling gave %v, want one new approval", made)
		}
	})
}
