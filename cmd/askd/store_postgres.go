package main

import (
	"context"
	"errors"

	"github.com/askd-dev/askd"
)

func openPostgres(ctx context.Context, url string) (askd.Store, error) {
	return nil, errors.New("PostgreSQL support is not built in yet")
}

func migratePostgres(ctx context.Context, url string) ([]string, error) {
	return nil, errors.New("PostgreSQL support is not built in yet")
}
