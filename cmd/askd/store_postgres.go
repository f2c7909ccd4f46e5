package main

import (
	"context"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/postgres"
)

func openPostgres(ctx context.Context, url string) (askd.Store, error) {
	return postgres.Open(ctx, url)
}

func migratePostgres(ctx context.Context, url string) ([]string, error) {
	return postgres.Migrate(ctx, url)
}
