package testserver

import (
	"context"
	"testing"
	"time"

	"github.com/askd-dev/askd/internal/postgres"
)

// OpenPostgres opens a store on the PostgreSQL database at url (from
// pgtest.URL), giving up after 30 s, and closes it when tb ends; handing it
// to Start as Options.Store is fine (closing twice is).
func OpenPostgres(tb testing.TB, url string) *postgres.Store {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := postgres.Open(ctx, url)
	if err != nil {
		tb.Fatalf("open postgres: %v", err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}
