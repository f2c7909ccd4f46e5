package main

import (
	"net/http"

	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/web"
)

// inboxHandler returns the inbox page's handler.
func inboxHandler(svc *app.Service) http.Handler { return web.New(svc) }
