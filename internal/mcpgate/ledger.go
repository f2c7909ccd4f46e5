package mcpgate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
)

// # One approval, one call
//
// A keyed approval (SPEC §12) is the agent token's for good: the same key
// gets the same ask back, decided or not. The gate's calls are keyed so
// that a call cut off before its decision reached the client finds its
// approval again, and a later identical call does not: the key is a digest
// of the session, the tool and the canonical arguments (callDigest) and a
// generation, 1, 2, 3, ... (approvalKey). Each generation answers one call.
//
// The ledger is what this process knows of the generations of each digest:
// one a live call waits on (busy), one it asked and whose decision reached
// no client (idle: the call was cut off), one whose decision was used
// (spent: the call went to the server, or its refusal to the client). A
// call takes the lowest generation that is neither busy nor spent, and
// asks askd with its key (the create re-attaches when askd has it):
//
//   - askd has no ask under the key, or a pending one: the call waits on
//     it (a pending one is an earlier call's, cut off);
//   - a decided one this process holds idle: the call takes the decision
//     at once (it was made while no call waited);
//   - a decided one this process knows nothing of (it started since, or
//     another gate of the same session asked it): askd marks an ask told
//     when its agent first reads its outcome, and the gate reads it only to
//     use it, so a decided approval told before this read was used by an
//     earlier call, and the call moves on to the next generation; one told
//     by this very read was decided while no call waited, and the call
//     takes it. The read's own telling is told apart (toldBefore): one
//     whose call never stopped waiting (askd marks an approval to be told
//     when a wait of its is cut short or runs out) was used by the call
//     that waited, unless a rule answered it as it was made (then this
//     read may have made it); any other, by askd's clock, if its told_at
//     is more than a second before the response's Date.
//
// The gate first asks without a wait (that read judges an approval
// decided before it), then waits with the key: a decision a wait returns
// is the call's own.
//
// What this cannot know, and how it fails: a decision askd told (the gate
// read it) whose call was cut off in the same moment is held idle in this
// process, and used by the same call again; if the gate stops before that,
// the same call later asks anew (the person is asked twice, nothing runs
// unapproved), as it does after a gate killed in the moment between its
// ask and its wait (askd saw no wait cut, so marked nothing). A decision
// used by a call that had stopped waiting before (re-attached after a
// cut-off), within a second before a new gate process makes the same
// call, would be taken as untold and used twice (so would one a rule
// answered: the rule would answer the same): a gate restarts, and a client
// calls again, in more than that. Approvals purged from askd
// (--retain) leave their generations free; the first free one is asked
// anew.

// genState is what this process knows of one generation.
type genState int

const (
	genBusy  genState = iota + 1 // a live call waits on it
	genIdle                      // asked here; its decision has reached no client
	genSpent                     // its decision was used
)

// ledger is this gate's record of its approvals' generations, by call
// digest, shared by every client session the gate serves.
type ledger struct {
	mu    sync.Mutex
	books map[string]*book
	holds uint64 // holds given, each one's id
}

// book is one digest's generations: every one below next is spent.
type book struct {
	next int
	gens map[int]generation
}

// generation is what this process knows of one, and which hold has it
// while busy.
type generation struct {
	state  genState
	holder uint64
}

// hold is a generation a call holds: its digest, number, whether this
// process asked it before (an idle one), and the hold's own id.
type hold struct {
	digest string
	gen    int
	known  bool
	id     uint64
}

// maxBooks bounds the digests the ledger keeps; past it, those with only
// spent generations are forgotten (askd's told_at then tells the gate the
// same, at the cost of a read each).
const maxBooks = 4096

func newLedger() *ledger { return &ledger{books: map[string]*book{}} }

// claim gives a call the lowest generation of digest that is neither busy
// nor spent, busy now.
func (l *ledger) claim(digest string) hold {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.books[digest]
	if b == nil {
		l.prune()
		b = &book{next: 1, gens: map[int]generation{}}
		l.books[digest] = b
	}
	g := b.next
	for s := b.gens[g].state; s == genBusy || s == genSpent; s = b.gens[g].state {
		g++
	}
	l.holds++
	h := hold{digest: digest, gen: g, known: b.gens[g].state == genIdle, id: l.holds}
	b.gens[g] = generation{state: genBusy, holder: h.id}
	return h
}

// release ends a call's hold: spent when the generation's decision was
// used, idle otherwise (its approval, pending or decided, waits for the
// same call again). A hold released already, whose generation another
// call may hold now, changes nothing; nor does the zero hold.
func (l *ledger) release(h hold, spent bool) {
	if h.gen == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.books[h.digest]
	if b == nil || b.gens[h.gen].holder != h.id {
		return
	}
	if !spent {
		b.gens[h.gen] = generation{state: genIdle}
		return
	}
	b.gens[h.gen] = generation{state: genSpent}
	for b.gens[b.next].state == genSpent {
		delete(b.gens, b.next)
		b.next++
	}
}

// prune forgets the books with only spent generations, once there are too
// many.
func (l *ledger) prune() {
	if len(l.books) < maxBooks {
		return
	}
	for d, b := range l.books {
		if len(b.gens) == 0 {
			delete(l.books, d)
		}
	}
}

// callDigest names a call: its session, tool (as askd names it) and
// canonical arguments.
func callDigest(session, tool string, canonicalArgs []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", session, tool)
	h.Write(canonicalArgs)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// approvalKey is the key of generation gen of a call's approvals:
// "mcp-gate <digest> <gen>", well within askd.MaxGateKeyChars.
func approvalKey(digest string, gen int) string {
	return fmt.Sprintf("mcp-gate %s %d", digest, gen)
}
