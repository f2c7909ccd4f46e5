package httpapi

import (
	"net/http"

	"github.com/askd-dev/askd"
)

// # Which Host headers askd answers
//
// Every request's Host must name askd (SPEC §7; internal/hostcheck says
// which do and why): loopback names and addresses, the --public-url host
// and --allowed-hosts, the address askd listens on. /healthz and /readyz
// answer any Host, for probes that send their own.

// hostProbe reports whether r is a health probe, answered whatever its Host.
func hostProbe(r *http.Request) bool {
	return r.Method == http.MethodGet && (r.URL.Path == "/healthz" || r.URL.Path == "/readyz")
}

func errHost(host string) error {
	return askd.Errorf(askd.EFORBIDDEN, "Host %q is not one this askd serves: it answers loopback names, its --public-url host and --allowed-hosts (DNS rebinding protection)", host)
}
