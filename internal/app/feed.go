package app

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"time"

	"github.com/askd-dev/askd"
)

// feedSize is how many recent events the feed keeps in memory; older ones are
// read from the store when a reconnecting stream asks for them.
const feedSize = 4096

// feed loads each committed event from the store once and fans it out to every
// inbox stream of this process. A stream that falls behind never slows the
// others: it is only signalled, and reads what it missed at its own pace.
type feed struct {
	store askd.Store
	kick  chan struct{}
	// loading serializes load: the feed's own loop and a stream subscribing
	// at "now" may both load, and two loads at once would append the same
	// events twice, leaving the ring out of order for the binary search.
	loading sync.Mutex

	mu     sync.Mutex
	ring   []*FeedEvent // the newest events, ascending ids
	last   int64        // the newest event id loaded
	subs   map[*Stream]struct{}
	loaded bool
}

// FeedEvent is an event with its JSON, encoded once for every stream.
type FeedEvent struct {
	*askd.Event
	JSON []byte
}

func encodeEvents(evs []*askd.Event) []*FeedEvent {
	out := make([]*FeedEvent, len(evs))
	for i, e := range evs {
		data, err := json.Marshal(e)
		if err != nil {
			data = []byte(`{}`)
		}
		out[i] = &FeedEvent{Event: e, JSON: data}
	}
	return out
}

// Stream is one subscriber to the event feed.
type Stream struct {
	f      *feed
	cursor int64
	// Ready is signalled when events after the cursor may be available.
	Ready chan struct{}
}

func newFeed(store askd.Store) *feed {
	return &feed{store: store, kick: make(chan struct{}, 1), subs: map[*Stream]struct{}{}}
}

// run loads new events whenever the store reports a commit, until ctx ends.
func (f *feed) run(ctx context.Context) {
	wait := time.NewTimer(time.Hour)
	wait.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.kick:
		}
		if f.idle() {
			continue
		}
		// The calls a commit woke write their results first (afterReply);
		// commits meanwhile are loaded together.
		wait.Reset(afterReply)
		select {
		case <-ctx.Done():
			return
		case <-wait.C:
		}
		if err := f.load(ctx); err != nil && ctx.Err() == nil {
			// The store is unreachable; try again shortly rather than lose events.
			time.Sleep(100 * time.Millisecond)
			signal(f.kick)
		}
	}
}

func (f *feed) load(ctx context.Context) error {
	f.loading.Lock()
	defer f.loading.Unlock()
	f.mu.Lock()
	after, loaded := f.last, f.loaded
	f.mu.Unlock()
	if !loaded {
		var last int64
		err := f.store.View(ctx, func(tx askd.Tx) (err error) {
			last, err = tx.Events.LastEventID(ctx)
			return err
		})
		if err != nil {
			return err
		}
		f.mu.Lock()
		f.last, f.loaded, after = last, true, last
		for s := range f.subs {
			signal(s.Ready) // a stream behind last reads the gap from the store
		}
		f.mu.Unlock()
	}
	for {
		var evs []*askd.Event
		err := f.store.View(ctx, func(tx askd.Tx) (err error) {
			evs, err = tx.Events.EventsAfter(ctx, after, 500)
			return err
		})
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			return nil
		}
		fevs := encodeEvents(evs)
		f.mu.Lock()
		for len(fevs) > 0 && fevs[0].ID <= f.last { // never twice, never out of order
			fevs = fevs[1:]
		}
		f.ring = append(f.ring, fevs...)
		if over := len(f.ring) - feedSize; over > 0 {
			f.ring = append([]*FeedEvent(nil), f.ring[over:]...)
		}
		f.last = max(f.last, evs[len(evs)-1].ID)
		after = f.last
		for s := range f.subs {
			signal(s.Ready)
		}
		f.mu.Unlock()
		if len(evs) < 500 {
			return nil
		}
	}
}

// idle reports whether no stream listens, and if so forgets the ring: a
// process with no inbox open (an agent process, say) reads no events at all.
// The first stream to subscribe starts loading again; until the ring covers
// its cursor, it reads what it missed from the store.
func (f *feed) idle() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.subs) > 0 {
		return false
	}
	f.ring, f.loaded = nil, false
	return true
}

// subscribe starts a stream at cursor: events with larger ids will be given. A
// cursor of -1 starts after the newest event.
func (f *feed) subscribe(ctx context.Context, cursor int64) (*Stream, error) {
	if cursor < 0 {
		if err := f.load(ctx); err != nil {
			return nil, err
		}
		f.mu.Lock()
		cursor = f.last
		f.mu.Unlock()
	}
	s := &Stream{f: f, cursor: cursor, Ready: make(chan struct{}, 1)}
	f.mu.Lock()
	f.subs[s] = struct{}{}
	loaded := f.loaded
	f.mu.Unlock()
	signal(s.Ready)
	if !loaded {
		signal(f.kick) // the feed was idle: start loading
	}
	return s, nil
}

// Close ends the stream's subscription.
func (s *Stream) Close() {
	s.f.mu.Lock()
	delete(s.f.subs, s)
	s.f.mu.Unlock()
}

// Next returns the events after the stream's cursor (at most 500) and moves the
// cursor past them. It reads from memory when it can, from the store when the
// stream is further behind than the feed remembers.
func (s *Stream) Next(ctx context.Context) ([]*FeedEvent, error) {
	f := s.f
	f.mu.Lock()
	if f.loaded && (len(f.ring) > 0 && s.cursor >= f.ring[0].ID-1 || len(f.ring) == 0 && s.cursor >= f.last) {
		// The ring is sorted by id: find the first event after the cursor.
		i := sort.Search(len(f.ring), func(i int) bool { return f.ring[i].ID > s.cursor })
		end := min(len(f.ring), i+500)
		out := f.ring[i:end:end] // shared, read-only: the ring only appends or is replaced
		more := end < len(f.ring)
		f.mu.Unlock()
		if len(out) > 0 {
			s.cursor = out[len(out)-1].ID
		}
		if more {
			signal(s.Ready)
		}
		return out, nil
	}
	f.mu.Unlock()
	var evs []*askd.Event
	err := f.store.View(ctx, func(tx askd.Tx) (err error) {
		evs, err = tx.Events.EventsAfter(ctx, s.cursor, 500)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(evs) > 0 {
		s.cursor = evs[len(evs)-1].ID
		signal(s.Ready) // there may be more
	}
	return encodeEvents(evs), nil
}

// Cursor is the id of the last event the stream was given.
func (s *Stream) Cursor() int64 { return s.cursor }
