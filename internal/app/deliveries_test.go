package app

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	tests := []struct {
		name     string
		attempt  int
		rnd      float64
		min, max time.Duration
	}{
		{"first, no jitter", 1, 0, time.Second, time.Second},
		{"first, most jitter", 1, 0.999999, time.Second, 2 * time.Second},
		{"second", 2, 0, 2 * time.Second, 2 * time.Second},
		{"fifth", 5, 0.5, 24 * time.Second, 24 * time.Second},
		{"capped", 10, 0, 5 * time.Minute, 5 * time.Minute},
		{"capped far out", 1000, 0.999999, 5 * time.Minute, 10 * time.Minute},
		{"zero attempts count as one", 0, 0, time.Second, time.Second},
		{"a bad random number is no jitter", 3, 1.5, 4 * time.Second, 4 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Backoff(tt.attempt, func() float64 { return tt.rnd })
			if got < tt.min || got > tt.max {
				t.Errorf("Backoff(%d, %v) = %s, want %s to %s", tt.attempt, tt.rnd, got, tt.min, tt.max)
			}
		})
	}
	// Without jitter it never shrinks from one attempt to the next.
	prev := time.Duration(0)
	for a := 1; a <= 64; a++ {
		d := Backoff(a, func() float64 { return 0 })
		if d < prev {
			t.Errorf("Backoff(%d) = %s < Backoff(%d) = %s", a, d, a-1, prev)
		}
		prev = d
	}
}
