package app

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// A millisecond-scale backoff: the tests below sleep a few ms in all.
var quick = backoff{first: time.Millisecond, max: 4 * time.Millisecond}

var errDown = askd.Errorf(askd.EUNAVAILABLE, "the database is unavailable; try again shortly")

func TestRetryUnavailable(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	other := askd.Errorf(askd.ENOTFOUND, "ask 7 not found")
	for _, c := range []struct {
		name string
		// fails is what the fn returns on its calls, nil after them.
		fails []error
		// until, from start; zero: none. Each call moves the clock 10 ms on.
		until     time.Duration
		cancelAt  int // cancel ctx during this call (1-based); 0: never
		stopAt    int // close stop during this call; 0: never
		wantErr   error
		wantCalls int
	}{
		{name: "first call succeeds", wantCalls: 1},
		{name: "unavailable three times, then succeeds", fails: []error{errDown, errDown, errDown}, wantCalls: 4},
		{name: "another error ends it at once", fails: []error{other}, wantErr: other, wantCalls: 1},
		{name: "unavailable, then another error", fails: []error{errDown, other}, wantErr: other, wantCalls: 2},
		{name: "until passes while unavailable", fails: repeat(errDown, 100), until: 25 * time.Millisecond, wantErr: errDown, wantCalls: 3},
		{name: "until already passed: one try", fails: repeat(errDown, 100), until: 5 * time.Millisecond, wantErr: errDown, wantCalls: 1},
		{name: "ctx ends while unavailable", fails: repeat(errDown, 100), cancelAt: 2, wantErr: context.Canceled, wantCalls: 2},
		{name: "the service closes while unavailable", fails: repeat(errDown, 100), stopAt: 3, wantErr: errDown, wantCalls: 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			stop := make(chan struct{})
			calls := 0
			now := func() time.Time { return start.Add(time.Duration(calls) * 10 * time.Millisecond) }
			var until time.Time
			if c.until != 0 {
				until = start.Add(c.until)
			}
			err := quick.retry(ctx, now, until, stop, func() error {
				calls++
				if calls == c.cancelAt {
					cancel()
				}
				if calls == c.stopAt {
					close(stop)
				}
				if calls <= len(c.fails) {
					return c.fails[calls-1]
				}
				return nil
			})
			if !errors.Is(err, c.wantErr) || (c.wantErr == nil) != (err == nil) {
				t.Errorf("err = %v, want %v", err, c.wantErr)
			}
			if calls != c.wantCalls {
				t.Errorf("%d calls, want %d", calls, c.wantCalls)
			}
		})
	}
}

// The pause after each failure doubles from first up to max.
func TestRetryBackoffDoubles(t *testing.T) {
	var at []time.Time
	err := quick.retry(t.Context(), time.Now, time.Time{}, nil, func() error {
		at = append(at, time.Now())
		if len(at) <= 5 {
			return errDown
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []time.Duration{1, 2, 4, 4, 4} {
		want *= time.Millisecond
		if gap := at[i+1].Sub(at[i]); gap < want {
			t.Errorf("pause %d: %v, want at least %v", i+1, gap, want)
		}
	}
}

// A wait that ends with the database still unavailable says which ask and
// how to get its answer; other errors pass as they are.
func TestWaitUnavailable(t *testing.T) {
	err := waitUnavailable(12, errDown)
	if askd.ErrorCode(err) != askd.EUNAVAILABLE || !errors.Is(err, errDown) {
		t.Errorf("code %q, keeps the cause %v: %v", askd.ErrorCode(err), errors.Is(err, errDown), err)
	}
	if msg := askd.ErrorMessage(err); !strings.Contains(msg, "check_ask with id 12") {
		t.Errorf("message %q does not point to check_ask with id 12", msg)
	}
	other := askd.Errorf(askd.ENOTFOUND, "ask 12 not found")
	if got := waitUnavailable(12, other); got != other {
		t.Errorf("waitUnavailable(ENOTFOUND) = %v", got)
	}
	if got := waitUnavailable(12, nil); got != nil {
		t.Errorf("waitUnavailable(nil) = %v", got)
	}
}

func repeat(err error, n int) []error {
	out := make([]error, n)
	for i := range out {
		out[i] = err
	}
	return out
}
