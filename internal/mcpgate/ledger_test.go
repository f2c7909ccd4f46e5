package mcpgate

import "testing"

// TestLedger: which generation of a call's approvals each call takes.
func TestLedger(t *testing.T) {
	l := newLedger()
	want := func(h hold, gen int, known bool) {
		t.Helper()
		if h.gen != gen || h.known != known {
			t.Fatalf("claimed generation %d (known %v), want %d (known %v)", h.gen, h.known, gen, known)
		}
	}
	first := l.claim("d")
	want(first, 1, false)
	// The same call at the same time: an approval of its own.
	second := l.claim("d")
	want(second, 2, false)
	// The first was cut off: the same call again takes its approval.
	l.release(first, false)
	again := l.claim("d")
	want(again, 1, true)
	// The cut-off call's own release, late, changes nothing now.
	l.release(first, false)
	l.release(again, true)
	l.release(second, true)
	// Both used: the next call asks anew.
	want(l.claim("d"), 3, false)
	// Another call is another digest.
	want(l.claim("e"), 1, false)
	// The zero hold is none.
	l.release(hold{}, true)
}
