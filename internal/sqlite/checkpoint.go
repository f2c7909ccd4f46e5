package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// Checkpoints: moving the WAL's pages into the database file.
//
// Left to SQLite, the commit that takes the WAL past 1,000 pages runs a
// checkpoint itself, on the writer, before it returns: two fsyncs (the WAL,
// then the database file) on the way of whichever answer that commit
// carries, one in a few hundred, 10–20 ms on a virtual disk. A checkpointer
// with a connection of its own runs PASSIVE checkpoints beside the writer,
// which take no lock the writer or the readers wait for: after every
// checkpointEvery commits (a few hundred pages at askd's usual dozen pages a
// commit), and checkpointIdle after the last commit when fewer came. The
// next write after a complete checkpoint starts the WAL over, so the
// writer's own checkpoint is left for bursts of large commits. (Turning it
// off altogether, wal_autocheckpoint(0), was tried: a writer waiting out
// another process's lock then kept /readyz from answering "busy" within its
// bound in the storage fault tests; not kept.) A checkpoint that cannot
// finish (a reader still on old pages, a full disk) leaves the rest for the
// next; SQLite checkpoints at close as well.
//
// A due checkpoint starts checkpointAfter the commit that made it due, not
// at once: the calls that commit woke write their results first, and an
// idle commit only resets a timer, so the checkpointer's goroutine does not
// wake beside every answer.
const (
	checkpointEvery = 32
	checkpointIdle  = 2 * time.Second
	checkpointAfter = 2 * time.Millisecond
)

type checkpointer struct {
	db   *sql.DB
	kick chan struct{} // a checkpoint is due
	idle *time.Timer   // reset by each commit: checkpointIdle after the last
	quit chan struct{}
	stop sync.Once
	done sync.WaitGroup

	ran chan struct{} // signalled after each checkpoint, for tests

	mu      sync.Mutex
	commits int // since the last checkpoint
}

// checkpointDSN is the checkpointer's connection: it waits for the file as
// the others do, and writes nothing but the checkpoint.
func checkpointDSN(path string) string { return path + "?" + pragmaBusyTimeout }

func startCheckpointer(ctx context.Context, path string) (*checkpointer, error) {
	db, err := sql.Open("sqlite", checkpointDSN(path))
	if err != nil {
		return nil, fmt.Errorf("open %s for checkpoints: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s for checkpoints: %w", path, err)
	}
	c := &checkpointer{db: db, kick: make(chan struct{}, 1), idle: time.NewTimer(time.Hour), quit: make(chan struct{}), ran: make(chan struct{}, 1)}
	c.idle.Stop()
	c.done.Add(1)
	go c.run()
	return c, nil
}

// committed records one commit of the writer; it never blocks.
func (c *checkpointer) committed() {
	c.mu.Lock()
	c.commits++
	due := c.commits == checkpointEvery
	c.mu.Unlock()
	c.idle.Reset(checkpointIdle)
	if due {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
}

func (c *checkpointer) run() {
	defer c.done.Done()
	after := time.NewTimer(time.Hour)
	after.Stop()
	for {
		select {
		case <-c.quit:
			c.idle.Stop()
			return
		case <-c.kick:
			after.Reset(checkpointAfter)
			select {
			case <-c.quit:
				c.idle.Stop()
				return
			case <-after.C:
			}
		case <-c.idle.C:
		}
		c.mu.Lock()
		n := c.commits
		c.commits = 0
		c.mu.Unlock()
		if n == 0 {
			continue
		}
		// Its errors (busy with another checkpoint, a full disk) leave the
		// pages for the next one; the writer reports storage faults.
		_, _ = c.db.Exec("PRAGMA wal_checkpoint(PASSIVE)")
		select {
		case c.ran <- struct{}{}:
		default:
		}
	}
}

// close stops the checkpointer and closes its connection; closing again
// (a store closed twice) does nothing more.
func (c *checkpointer) close() error {
	c.stop.Do(func() { close(c.quit) })
	c.done.Wait()
	return c.db.Close()
}
