package mcpserver

import (
	"sync"
)

// parking is the set of parked calls, so that shutting down answers them all.
type parking struct {
	mu      sync.Mutex
	calls   map[*parked]struct{}
	closed  bool
	drained chan struct{} // closed when closed and no call is left
}

func newParking() *parking {
	return &parking{calls: map[*parked]struct{}{}, drained: make(chan struct{})}
}

// add parks p, unless the server is shutting down.
func (pk *parking) add(p *parked) bool {
	pk.mu.Lock()
	defer pk.mu.Unlock()
	if pk.closed {
		return false
	}
	pk.calls[p] = struct{}{}
	return true
}

func (pk *parking) remove(p *parked) {
	pk.mu.Lock()
	defer pk.mu.Unlock()
	delete(pk.calls, p)
	if pk.closed && len(pk.calls) == 0 {
		select {
		case <-pk.drained:
		default:
			close(pk.drained)
		}
	}
}

// close answers every parked call with the shutting-down error.
func (pk *parking) close() {
	pk.mu.Lock()
	pk.closed = true
	calls := make([]*parked, 0, len(pk.calls))
	for p := range pk.calls {
		calls = append(calls, p)
	}
	if len(calls) == 0 {
		close(pk.drained)
	}
	pk.mu.Unlock()
	for _, p := range calls {
		p.shutdown()
	}
}

// count is the number of parked calls.
func (pk *parking) count() int {
	pk.mu.Lock()
	defer pk.mu.Unlock()
	return len(pk.calls)
}
