package app

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/askd-dev/askd"
)

// health is what the service has seen of its store, for Ready: the last
// write's storage fault, a damaged file, a check of the file under way.
type health struct {
	mu       sync.Mutex
	write    error // the last write's fault (askd.IsFault); nil once a write succeeds
	corrupt  error // the first ECORRUPT seen: a damaged file does not heal
	checking int   // checks of the file (Service.CheckFile) not yet done
	probing  bool  // a readiness probe (Ready) is under way

	faults *prometheus.CounterVec // askd_storage_errors_total{cause}
}

// observed is the store as the service uses it: every Update's, View's and
// ReadAsk's outcome goes through health, so readiness follows what writes do.
type observed struct {
	askd.Store
	h *health
}

func (o observed) Update(ctx context.Context, fn func(askd.Tx) error) error {
	err := o.Store.Update(ctx, fn)
	o.h.wrote(err)
	return err
}

func (o observed) View(ctx context.Context, fn func(askd.Tx) error) error {
	err := o.Store.View(ctx, fn)
	o.h.read(err)
	return err
}

func (o observed) ReadAsk(ctx context.Context, id int64) (*askd.Ask, error) {
	a, err := o.Store.ReadAsk(ctx, id)
	o.h.read(err)
	return a, err
}

// wrote notes a write's outcome. fn's own errors (not found, conflict, bad
// input) say nothing about the store and change nothing.
func (h *health) wrote(err error) {
	code := askd.ErrorCode(err)
	if err != nil && !askd.IsFault(code) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.write = err
	h.noteLocked(err, code)
}

// read notes a read's fault, if any: a read cannot tell that writes work.
func (h *health) read(err error) {
	code := askd.ErrorCode(err)
	if !askd.IsFault(code) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.noteLocked(err, code)
}

func (h *health) noteLocked(err error, code string) {
	if err == nil {
		return
	}
	h.faults.WithLabelValues(code).Inc()
	if code == askd.ECORRUPT && h.corrupt == nil {
		h.corrupt = err
	}
}

// prober is a store with a cheap write of its own (one row), which Ready
// uses to see whether writes work again after one failed.
type prober interface {
	Probe(ctx context.Context) error
}

// Ready reports whether the service can do its work, for /readyz: nil, or
// an error whose code and message name the cause. It fails
//   - while the store does not answer (Ping; on SQLite also while the file
//     at its path is not the one it opened: deleted or replaced);
//   - while a check of the file (CheckFile) is under way;
//   - for good once the file was found damaged (ECORRUPT): it does not heal,
//     and the remedy, a restore, means a restart (docs/operations.md);
//   - while writes fail: after a write failed for a storage fault, each call
//     tries a write of its own (the store's Probe, bounded by ctx), and the
//     first that succeeds, like any successful write, clears it.
func (s *Service) Ready(ctx context.Context) error {
	if err := s.store.Ping(ctx); err != nil {
		return err
	}
	h := s.health
	h.mu.Lock()
	checking, corrupt, write := h.checking, h.corrupt, h.write
	h.mu.Unlock()
	switch {
	case corrupt != nil:
		return corrupt
	case checking > 0:
		return askd.Errorf(askd.EUNAVAILABLE, "checking the database file (PRAGMA quick_check) before serving")
	case write == nil:
		return nil
	}
	p, ok := s.raw.(prober)
	if !ok {
		return fmt.Errorf("the last write failed: %w", write)
	}
	// One probe at a time, and readiness waits for it at most probeWait: a
	// probe behind another process's lock waits out the store's busy
	// timeout, longer than a prober waits for /readyz. A probe still under
	// way answers with the fault it is checking; its outcome, when it
	// comes, counts like any write's.
	h.mu.Lock()
	if h.probing {
		h.mu.Unlock()
		return fmt.Errorf("the last write failed (checking again): %w", write)
	}
	h.probing = true
	h.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeLimit)
		defer cancel()
		err := p.Probe(pctx)
		h.wrote(err) // success clears the fault
		h.mu.Lock()
		h.probing = false
		h.mu.Unlock()
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(probeWait):
		return fmt.Errorf("the last write failed, and a write to check it has not finished within %s: %w", probeWait, write)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// probeWait is how long Ready waits for its probe write, and probeLimit how
// long the probe may go on after that.
const (
	probeWait  = 2 * time.Second
	probeLimit = 30 * time.Second
)

// CheckFile runs check (a check of the database file, such as SQLite's
// quick_check) in the background, Ready failing until it returns. A fault it
// returns is kept as Ready's answer: ECORRUPT for good, as for any damaged
// file seen.
func (s *Service) CheckFile(check func() error) {
	h := s.health
	h.mu.Lock()
	h.checking++
	h.mu.Unlock()
	go func() {
		err := check()
		h.mu.Lock()
		defer h.mu.Unlock()
		h.checking--
		if code := askd.ErrorCode(err); err != nil {
			if !askd.IsFault(code) {
				err = fmt.Errorf("%w: %w", askd.Fault(askd.ECORRUPT), err)
				code = askd.ECORRUPT
			}
			h.noteLocked(err, code)
			if code != askd.ECORRUPT {
				h.write = err
			}
			s.cfg.Logger.Error("database file check failed", "err", err)
		}
	}()
}
