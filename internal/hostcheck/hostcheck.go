// Package hostcheck decides which Host headers a server of askd's answers:
// askd serve's and askd gate mcp --listen's protection against DNS
// rebinding (SPEC §7, §14).
//
// A page on evil.example whose name an attacker rebinds to 127.0.0.1
// reaches a server on loopback from the victim's browser as a same-origin
// request: its Origin and Host are both evil.example. So every request's
// Host must name the server:
//   - loopback names: localhost and *.localhost (browsers resolve those
//     themselves), 127.0.0.0/8 and ::1;
//   - the names it is given (askd serve's --public-url host and
//     --allowed-hosts, the gate's --allowed-host), where *.example.com
//     allows every subdomain of example.com;
//   - the IP address it listens on; listening on every address (0.0.0.0,
//     ::), any IP address. An IP address cannot be rebound: a rebinding
//     page's Host is always its own name. A name for a LAN or proxy
//     address must be given.
//
// Ports are not compared: a rebinding page may use any port, but never the
// server's name.
package hostcheck

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Policy decides which Host headers are served.
type Policy struct {
	names    map[string]bool // lower case, no trailing dot
	suffixes []string        // from *.example.com: ".example.com"
	ip       netip.Addr      // the listen address, if a specific one
	anyIP    bool            // listening on every address
}

// New is the policy of a server listening on listen (host:port; "" for
// none known) that also answers to hosts (names, *.example.com, with or
// without a port), each checked by Valid before.
func New(hosts []string, listen string) *Policy {
	p := &Policy{names: map[string]bool{}}
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

// Allows reports whether host, a request's Host header, names this server.
func (p *Policy) Allows(host string) bool {
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

// Valid checks a name a server is told to answer to: a host name or IP
// address, optionally with a port (ignored) or a leading "*." for
// subdomains.
func Valid(h string) error {
	name := strings.TrimPrefix(hostname(h), "*.")
	if name == "" || strings.ContainsAny(h, "/?#@ ") || strings.Contains(name, "*") {
		return fmt.Errorf("%q is not a host name (e.g. askd.example.com or *.example.com)", h)
	}
	return nil
}

// hostname is host without port, brackets or trailing dot, in lower case.
func hostname(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), ".")
	return strings.ToLower(host)
}
