package testserver

import (
	"sync/atomic"
	"time"
)

// Clock is a server clock (app.Config.Now) that a test moves on: the wall
// clock plus whatever the test skipped. Time passes as usual for everything
// else, and a deadline or a lease can be passed at once instead of waited
// for. The zero Clock is the wall clock.
type Clock struct{ ahead atomic.Int64 }

// Now is the wall clock's time plus what was skipped.
func (c *Clock) Now() time.Time { return time.Now().Add(time.Duration(c.ahead.Load())) }

// Skip moves the clock on by d.
func (c *Clock) Skip(d time.Duration) { c.ahead.Add(int64(d)) }
