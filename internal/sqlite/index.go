package sqlite

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"

	"github.com/askd-dev/askd"
)

// Indexing settled asks for search (migration 006).
//
// Writing the FTS5 index in the transaction that settles an ask would cost
// that commit about seven more pages, and every few dozen commits a merge of
// the index's segments, on the path from a person's answer to the agent
// waiting for it. So the settling transaction only puts the ask's id in
// asks_search_queue (a trigger), and the queue is indexed in one write: as
// soon as indexBatch asks have queued, indexDelay after the first of them at
// the latest, and when the store opens (askd may have stopped in between).
// Searches match the asks still queued one by one, with askd_match, so a
// search finds every ask settled before it began, indexed or not.
const (
	indexBatch = 256
	indexDelay = 100 * time.Millisecond
)

// indexer says when the queue is indexed.
type indexer struct {
	batch int           // index once this many settled asks were written
	delay time.Duration // and at most this long after the first of them

	mu      sync.Mutex
	settled int         // settled asks written since the queue was last indexed
	timer   *time.Timer // runs indexLater; nil when none is due
	stopped bool
}

// queued records that a commit wrote n settled asks, and reports whether the
// caller, the writer, is to index the queue now. Otherwise it makes sure the
// queue will be indexed within the delay.
func (s *Store) queued(n int) bool {
	ix := &s.index
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if n == 0 || ix.stopped {
		return false
	}
	ix.settled += n
	if ix.settled >= ix.batch {
		ix.settled = 0
		if ix.timer != nil {
			ix.timer.Stop()
			ix.timer = nil
		}
		return true
	}
	if ix.timer == nil {
		ix.timer = time.AfterFunc(ix.delay, s.indexLater)
	}
	return false
}

// indexLater indexes the queue through the writer, as an update of its own.
func (s *Store) indexLater() {
	s.index.mu.Lock()
	s.index.timer, s.index.settled = nil, 0
	s.index.mu.Unlock()
	// errClosed once the store has closed: the next Open indexes the queue.
	ctx := context.Background()
	_ = s.writes.Do(ctx, func(t askd.Tx) error { return txOf(t).indexQueue(ctx) })
}

// stopIndexing cancels the indexing due, for Close.
func (s *Store) stopIndexing() {
	s.index.mu.Lock()
	defer s.index.mu.Unlock()
	s.index.stopped = true
	if s.index.timer != nil {
		s.index.timer.Stop()
		s.index.timer = nil
	}
}

// indexQueued indexes the queue in a transaction of its own on the writer,
// which nothing else may be using.
func (s *Store) indexQueued(ctx context.Context) error {
	w := &s.writer
	if err := w.begin(ctx); err != nil {
		return fmt.Errorf("index settled asks: %w", err)
	}
	defer w.rollback(ctx) // nothing to undo after the commit
	t := &tx{tx: sqlConn{fixed: ctx, stmts: w}, writable: true}
	if err := t.indexQueue(ctx); err != nil {
		return err
	}
	if err := w.commit(ctx); err != nil {
		return fmt.Errorf("index settled asks: %w", err)
	}
	return nil
}

// indexQueue adds the words of the queued asks to the index and empties the
// queue; a queued ask that is pending again, or gone, has no words.
func (t *tx) indexQueue(ctx context.Context) error {
	for _, stmt := range []string{
		// id IN (queue), not a join: SQLite would walk every ask for it.
		`INSERT INTO asks_search (rowid, doc)
			SELECT id, doc FROM asks_search_docs WHERE id IN (SELECT id FROM asks_search_queue) AND status <> 'pending'`,
		"DELETE FROM asks_search_queue",
	} {
		if _, err := t.tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("index settled asks: %w", err)
		}
	}
	return nil
}

func init() {
	// Variadic: 006_search.sql's view passed five columns, 012_forms.sql's
	// passes seven; a migration runs with the view of the one before it.
	sqlite.MustRegisterDeterministicScalarFunction("askd_search_text", -1, askdSearchText)
	sqlite.MustRegisterDeterministicScalarFunction("askd_match", 2, askdMatch)
}

// askdSearchText is the SQL function askd_search_text(title, details,
// questions, options, answer[, source, url]), of the columns of an ask: its
// askd.Ask.SearchText. JSON that does not decode (no store writes such)
// counts as absent, rather than failing the write that indexes the ask.
func askdSearchText(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	text := func(i int) string {
		if i >= len(args) {
			return ""
		}
		s, _ := args[i].(string)
		return s
	}
	a := askd.Ask{Title: text(0), Details: text(1), Source: text(5), URL: text(6)}
	for i, v := range []any{&a.Questions, &a.Options, &a.Answer} {
		if s := text(i + 2); s != "" {
			_ = json.Unmarshal([]byte(s), v)
		}
	}
	return a.SearchText(), nil
}

// askdMatch is the SQL function askd_match(doc, words): 1 when the text doc
// (askd_search_text's) has each of words (separated by spaces) as a word,
// the last also as the beginning of one, case aside; 0 otherwise: what the
// FTS5 query of matchWords finds in the index, whose unicode61 tokenizer
// splits doc at its spaces and folds case as strings.ToLower does.
func askdMatch(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	doc, _ := args[0].(string)
	words, _ := args[1].(string)
	if hasWords(doc, strings.Fields(words)) {
		return int64(1), nil
	}
	return int64(0), nil
}

// hasWords reports whether doc has every one of words, the last perhaps as
// a prefix, case aside.
func hasWords(doc string, words []string) bool {
	tokens := askd.SearchWords(doc)
	have := make(map[string]bool, len(tokens))
	for i, tok := range tokens {
		tokens[i] = strings.ToLower(tok)
		have[tokens[i]] = true
	}
	for i, w := range words {
		w = strings.ToLower(w)
		if have[w] {
			continue
		}
		if i < len(words)-1 || !hasPrefixed(tokens, w) {
			return false
		}
	}
	return true
}

// hasPrefixed reports whether one of tokens begins with prefix.
func hasPrefixed(tokens []string, prefix string) bool {
	for _, tok := range tokens {
		if strings.HasPrefix(tok, prefix) {
			return true
		}
	}
	return false
}
