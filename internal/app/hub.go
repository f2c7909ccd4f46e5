package app

import (
	"sync"
	"sync/atomic"

	"github.com/askd-dev/askd"
)

// hub wakes the waiters of one process when their ask changes. Waiters register
// before they read the ask, so a change committed between the read and the wait
// still wakes them: no answer is lost to that race.
type hub struct {
	mu      sync.Mutex
	waiters map[int64]map[*waiter]struct{}
}

type waiter struct {
	id int64
	ch chan struct{} // capacity 1: a pending wake-up is never lost, never blocks
	fn func()        // instead of ch: called under the hub's lock, must not block
	// last is the ask as the latest event that woke the waiter left it,
	// when the store said (askd.Change.Ask); nil when unknown, as after a
	// reset or an event whose ask the store did not give. A bare notice
	// (nudge) leaves it. Set before the wake-up.
	last atomic.Pointer[askd.Ask]
}

func newHub() *hub { return &hub{waiters: map[int64]map[*waiter]struct{}{}} }

// add registers a waiter for ask id, woken through its channel or, when fn is
// not nil, by calling fn.
func (h *hub) add(id int64, fn func()) *waiter {
	w := &waiter{id: id, fn: fn}
	if fn == nil {
		w.ch = make(chan struct{}, 1)
	}
	h.mu.Lock()
	set := h.waiters[id]
	if set == nil {
		set = map[*waiter]struct{}{}
		h.waiters[id] = set
	}
	set[w] = struct{}{}
	h.mu.Unlock()
	return w
}

func (h *hub) remove(w *waiter) {
	h.mu.Lock()
	if set := h.waiters[w.id]; set != nil {
		delete(set, w)
		if len(set) == 0 {
			delete(h.waiters, w.id)
		}
	}
	h.mu.Unlock()
}

// wake signals every waiter of ask id, telling them the ask as the change
// left it (nil: unknown).
func (h *hub) wake(id int64, a *askd.Ask) {
	h.mu.Lock()
	for w := range h.waiters[id] {
		w.last.Store(a)
		w.signal()
	}
	h.mu.Unlock()
}

// nudge signals every waiter of ask id and leaves what they were last told
// of it (waiter.last) as it is: for a change that says the ask changed but
// not how, and comes after the changes of the same commit that did say.
func (h *hub) nudge(id int64) {
	h.mu.Lock()
	for w := range h.waiters[id] {
		w.signal()
	}
	h.mu.Unlock()
}

// wakeAll signals every waiter, after changes may have been missed.
func (h *hub) wakeAll() {
	h.mu.Lock()
	for _, set := range h.waiters {
		for w := range set {
			w.last.Store(nil)
			w.signal()
		}
	}
	h.mu.Unlock()
}

// count is the number of waiters, for metrics.
func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, set := range h.waiters {
		n += len(set)
	}
	return n
}

func (w *waiter) signal() {
	if w.fn != nil {
		w.fn()
		return
	}
	signal(w.ch)
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
