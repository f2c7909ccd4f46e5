package main

import (
	"log/slog"
	"net/http"

	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/mcpserver"
)

// mcpHandler returns the /mcp handler.
func mcpHandler(svc *app.Service, log *slog.Logger) http.Handler {
	return mcpserver.Handler(svc, mcpserver.Options{Version: version, Logger: log})
}
