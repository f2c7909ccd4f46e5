package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/storetest"
)

// TestMigrateSearch: a database from before the history was searched
// (migrations 001–005 applied), holding the asks that
// storetest.CheckSearchMigrated describes, has them indexed once opened.
func TestMigrateSearch(t *testing.T) {
	path := oldDatabase(t, "006", `INSERT INTO asks (kind, session, agent, status, title, questions, answer, created_at, updated_at, settled_at, settled_by) VALUES
		('question', 's', 'a', 'answered', '',
			'[{"question":"Which region?","header":"Region","options":[{"label":"eu-west"},{"label":"us-east"}],"multiSelect":false}]',
			'{"answers":{"Which region?":"Frankfurt please"}}', 10, 100, 100, 'alice'),
		('approval', 's', 'a', 'answered', 'Drop the table', NULL, '{"decision":"rejected","comment":"never on Fridays"}', 20, 200, 200, 'alice'),
		('decision', 's', 'a', 'answered', 'Ship it?', NULL, '{"answer":"tomorrow morning"}', 30, 300, 300, 'alice'),
		('approval', 's', 'a', 'answered', 'Rotate keys', NULL, '{"decision":"modified","payload":{"k":"\u0000"},"comment":"lunchtime please"}', 35, 350, 350, 'alice'),
		('ready', 's', 'a', 'pending', 'Pending frankfurt', NULL, NULL, 40, 40, NULL, '')`)

	s := openAt(t, path)
	storetest.CheckSearchMigrated(t, s)
}

// settledAsk is an answered ask with the title, settled at micros µs.
func settledAsk(title string, micros int64) *askd.Ask {
	a := &askd.Ask{Kind: askd.KindReady, Session: "s", Agent: "a", Status: askd.StatusPending, Title: title,
		CreatedAt: time.UnixMicro(1), UpdatedAt: time.UnixMicro(1)}
	a.Settle(askd.StatusAnswered, "", &askd.Answer{Answer: "done"}, "alice", time.UnixMicro(micros))
	return a
}

// indexRows counts the rows of the index that hold word, and the asks
// queued.
func indexRows(t *testing.T, s *Store, word string) (indexed, queued int) {
	t.Helper()
	ctx := t.Context()
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM asks_search WHERE asks_search MATCH ?`, `"`+word+`"`).Scan(&indexed); err != nil {
		t.Fatal(err)
	}
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM asks_search_queue`).Scan(&queued); err != nil {
		t.Fatal(err)
	}
	return indexed, queued
}

// TestPurgeLeavesNoWords: the index itself, not only the asks it is joined
// with, loses a purged ask's words; so does the queue.
func TestPurgeLeavesNoWords(t *testing.T) {
	ctx := t.Context()
	for _, c := range []struct {
		name                string
		batch               int
		indexed, queued     int
		indexedAfter, after int
	}{
		{"indexed", 1, 2, 0, 1, 0},
		{"queued", 1 << 30, 0, 2, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := indexing(openTest(t), c.batch, time.Hour)
			if err := s.Update(ctx, func(tx askd.Tx) error {
				for _, a := range []*askd.Ask{settledAsk("Kestrel", 1), settledAsk("Kestrel too", 1000)} {
					if err := tx.Asks.CreateAsk(ctx, a); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			// The writer indexes after answering the batch that filled the
			// queue, before it takes the next: an empty update waits for it.
			if err := s.Update(ctx, func(askd.Tx) error { return nil }); err != nil {
				t.Fatal(err)
			}
			if indexed, queued := indexRows(t, s, "kestrel"); indexed != c.indexed || queued != c.queued {
				t.Fatalf("%d rows of the index hold the word and %d asks are queued, want %d and %d", indexed, queued, c.indexed, c.queued)
			}
			if err := s.Update(ctx, func(tx askd.Tx) error {
				_, err := tx.Asks.DeleteAsks(ctx, askd.Purge{SettledBefore: time.UnixMicro(500), At: time.UnixMicro(500).Add(time.Hour), Retain: time.Hour}, 1000)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if indexed, queued := indexRows(t, s, "kestrel"); indexed != c.indexedAfter || queued != c.after {
				t.Errorf("after purging one: %d rows of the index hold the word and %d asks are queued, want %d and %d", indexed, queued, c.indexedAfter, c.after)
			}
		})
	}
}

// Asks settled and queued when a store closes are indexed when the file is
// opened again; and a store indexes its queue by itself after its delay.
func TestQueueIndexed(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "askd.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	indexing(s, 1<<30, time.Hour)
	if err := s.Update(ctx, func(tx askd.Tx) error { return tx.Asks.CreateAsk(ctx, settledAsk("Osprey", 5)) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = indexing(openAt(t, path), 1<<30, time.Hour)
	if indexed, queued := indexRows(t, s, "osprey"); indexed != 1 || queued != 0 {
		t.Errorf("reopened: %d rows of the index hold the word and %d asks are queued, want 1 and 0", indexed, queued)
	}

	// The first settled ask arms the delay, whose end indexes the queue
	// (called here rather than waited for).
	if err := s.Update(ctx, func(tx askd.Tx) error { return tx.Asks.CreateAsk(ctx, settledAsk("Heron", 6)) }); err != nil {
		t.Fatal(err)
	}
	s.index.mu.Lock()
	armed := s.index.timer != nil && s.index.timer.Stop()
	s.index.mu.Unlock()
	if !armed {
		t.Fatal("a settled ask armed no indexing")
	}
	s.indexLater()
	if indexed, queued := indexRows(t, s, "heron"); indexed != 1 || queued != 0 {
		t.Errorf("after the delay: %d rows of the index hold the word and %d asks are queued, want 1 and 0", indexed, queued)
	}
}

// askd_match finds what the index finds.
func TestHasWords(t *testing.T) {
	doc := "Deploy staging.example.com on Friday? Welche Datenbank? 数据库 café"
	for _, c := range []struct {
		words []string
		want  bool
	}{
		{[]string{"deploy"}, true},
		{[]string{"DEPLOY", "friday"}, true},
		{[]string{"dep"}, true},
		{[]string{"dep", "friday"}, false}, // only the last is a prefix
		{[]string{"example"}, true},
		{[]string{"datenbank", "数据库"}, true},
		{[]string{"café"}, true},
		{[]string{"cafe"}, false},
		{[]string{"zeppelin"}, false},
		{nil, true},
	} {
		if got := hasWords(doc, c.words); got != c.want {
			t.Errorf("hasWords(%q) = %v, want %v", c.words, got, c.want)
		}
	}
}
