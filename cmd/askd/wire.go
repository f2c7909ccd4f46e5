package main

import (
	"log/slog"
	"net/http"

	"github.com/askd-dev/askd/internal/app"
)

// mcpHandler returns the /mcp handler.
func mcpHandler(svc *app.Service, log *slog.Logger) http.Handler { return nil }
