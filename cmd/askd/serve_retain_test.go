package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd/internal/cli"
)

// --retain refuses what is not a positive duration, days that would wrap
// past the longest Duration included: 213504d once wrapped to 25 minutes,
// and askd purged every settled ask older than that.
func TestServeRetainRefusesWhatWraps(t *testing.T) {
	for _, v := range []string{"213504d", "106752d", "100001d", "-1d", "0d", "0s", "9999999999h", "soon"} {
		t.Run(v, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "askd.db")
			args := []string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--retain", v}
			// A server that starts after all is stopped; the test then fails.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err := run(ctx, args, nil, io.Discard, io.Discard)
			if err == nil || cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), "--retain: ") {
				t.Fatalf("askd serve --retain %s: %v (exit %d), want a usage error naming --retain", v, err, cli.ExitCode(err))
			}
		})
	}
}
