package parked

import (
	"sync"
)

// Lot is one MCP handler's set of parked calls, so that shutting down
// answers them all.
type Lot struct {
	mu      sync.Mutex
	calls   map[Call]struct{}
	closed  bool
	drained chan struct{} // closed when closed and no call is left
}

// NewLot returns an empty lot.
func NewLot() *Lot {
	return &Lot{calls: map[Call]struct{}{}, drained: make(chan struct{})}
}

// add parks c, unless the lot is closed.
func (l *Lot) add(c Call) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.calls[c] = struct{}{}
	return true
}

func (l *Lot) remove(c Call) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.calls, c)
	if l.closed && len(l.calls) == 0 {
		select {
		case <-l.drained:
		default:
			close(l.drained)
		}
	}
}

// Close parks no more calls, and tells every parked call to answer now
// (Call.Shutdown): the server is stopping.
func (l *Lot) Close() {
	l.mu.Lock()
	l.closed = true
	calls := make([]Call, 0, len(l.calls))
	for c := range l.calls {
		calls = append(calls, c)
	}
	if len(calls) == 0 {
		close(l.drained)
	}
	l.mu.Unlock()
	for _, c := range calls {
		c.Shutdown()
	}
}

// Drained is closed once the lot is closed and its last call has ended.
func (l *Lot) Drained() <-chan struct{} { return l.drained }

// Len is the number of parked calls.
func (l *Lot) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.calls)
}
