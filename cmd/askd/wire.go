package main

import (
	"log/slog"

	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/mcpserver"
)

// mcpHandler returns the /mcp handler.
func mcpHandler(svc *app.Service, log *slog.Logger) *mcpserver.HTTPHandler {
	return mcpserver.Handler(svc, mcpserver.Options{Version: version, Logger: log})
}
