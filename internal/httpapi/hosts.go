package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/askd-dev/askd"
)

// # Which Host headers askd answers
//
// A page on evil.example whose name an attacker rebinds to 127.0.0.1 reaches
// askd from the victim's browser as a same-origin request: its Origin and
// Host are both evil.example. So every request's Host must name askd
// (SPEC §7):
//   - loopback names: localhost and *.localhost (browsers resolve those
//     themselves), 127.0.0.0/8 and ::1;
//   - the names in Options.Hosts: the --public-url host and --allowed-hosts,
//     where *.example.com allows every subdomain of example.com;
//   - the IP address askd listens on; listening on every address (0.0.0.0,
//     ::), any IP address. An IP address cannot be rebound: a rebinding
//     page's Host is always its own name. A name for a LAN or proxy address
//     needs --allowed-hosts.
//
// /healthz and /readyz answer any Host, for probes that send their own.
// Ports are not compared: a rebinding page may use any port, but never
// askd's name.

// hostPolicy decides which Host headers are served.
type hostPolicy struct {
	names    map[string]bool // lower case, no trailing dot
	suffixes []string        // from *.example.com: ".example.com"
	ip       netip.Addr      // the listen address, if a specific one
	anyIP    bool            // listening on every address
}

func newHostPolicy(hosts []string, listen string) *hostPolicy {
	p := &hostPolicy{names: map[string]bool{}}
	for _, h := range hosts {
		h = hostname(h)
		if rest, ok := strings.CutPrefix(h, "*."); ok {
			p.suffixes = append(p.suffixes, "."+rest)
		} else if h != "" {
			p.names[h] = true
		}
	}
	if listen != "" {
		if ip, err := netip.ParseAddr(hostname(listen)); err == nil {
			p.ip, p.anyIP = ip.Unmap(), ip.IsUnspecified()
		}
	}
	return p
}

// allows reports whether host, a request's Host header, names this server.
func (p *hostPolicy) allows(host string) bool {
	h := hostname(host)
	switch {
	case host == "":
		return true // HTTP/1.0 without Host: not a browser's request
	case h == "localhost" || strings.HasSuffix(h, ".localhost"):
		return true
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		ip = ip.Unmap()
		return ip.IsLoopback() || p.anyIP || ip == p.ip
	}
	if p.names[h] {
		return true
	}
	for _, s := range p.suffixes {
		if strings.HasSuffix(h, s) {
			return true
		}
	}
	return false
}

// hostname is host without port, brackets or trailing dot, in lower case.
func hostname(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), ".")
	return strings.ToLower(host)
}

// ValidHost checks an --allowed-hosts entry: a host name or IP address,
// optionally with a port (ignored) or a leading "*." for subdomains.
func ValidHost(h string) error {
	name := strings.TrimPrefix(hostname(h), "*.")
	if name == "" || strings.ContainsAny(h, "/?#@ ") || strings.Contains(name, "*") {
		return fmt.Errorf("%q is not a host name (e.g. askd.example.com or *.example.com)", h)
	}
	return nil
}

// hostProbe reports whether r is a health probe, answered whatever its Host.
func hostProbe(r *http.Request) bool {
	return r.Method == http.MethodGet && (r.URL.Path == "/healthz" || r.URL.Path == "/readyz")
}

func errHost(host string) error {
	return askd.Errorf(askd.EFORBIDDEN, "Host %q is not one this askd serves: it answers loopback names, its --public-url host and --allowed-hosts (DNS rebinding protection)", host)
}
