package tell

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/askd-dev/askd"
)

// newGuardedClient returns the client of webhooks agents set (SPEC §5): it
// never connects to an address askd.RefusedAddr refuses unless allow
// allows it. The check is made in the dialer's Control function, on the
// address actually being connected to, after name resolution — so a name
// that resolves (or re-resolves, DNS rebinding) to 127.0.0.1, and forms
// such as 127.1 or 0.0.0.0, are judged by the address they reach. A URL
// naming an allowed host is dialled without the check. No proxy is used
// (through one, the dialled address would be the proxy's), and redirects
// are not followed. resolver nil is the system's.
func newGuardedClient(allow askd.WebhookAllow, resolver *net.Resolver, timeout time.Duration) *http.Client {
	open := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Resolver: resolver}
	guarded := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Resolver: resolver,
		Control: func(_, address string, _ syscall.RawConn) error { return checkDialled(allow, address) },
	}
	transport := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if host, _, err := net.SplitHostPort(addr); err == nil && allow.AllowsHost(host) {
				return open.DialContext(ctx, network, addr)
			}
			return guarded.DialContext(ctx, network, addr)
		},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	c := newHTTPClient(timeout)
	c.Transport = transport
	return c
}

// checkDialled returns a *refusedError when address ("ip:port", as the
// dialer is about to connect) is one agents' webhooks may not reach.
func checkDialled(allow askd.WebhookAllow, address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &refusedError{addr: address, why: "unreadable"}
	}
	ip := ap.Addr().Unmap()
	if allow.AllowsAddr(ip) {
		return nil
	}
	if why := askd.RefusedAddr(ip); why != "" {
		return &refusedError{addr: ip.String(), why: why}
	}
	return nil
}

// refusedError is a connection the webhook guard refused.
type refusedError struct{ addr, why string }

func (e *refusedError) Error() string {
	return fmt.Sprintf("refused to connect to %s: %s address; agents' and people's webhooks never reach it unless the operator allows it (askd serve --webhook-allow HOST|CIDR)", e.addr, e.why)
}
