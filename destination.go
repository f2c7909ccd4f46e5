package askd

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Where an agent's webhook may go (SPEC §5): never to an address of the
// server's own machine or networks — loopback, link-local, private,
// multicast, unspecified and the like, IPv4-mapped IPv6 forms included —
// unless the operator allows it (askd serve --webhook-allow). The real guard
// is made on the address actually dialled (internal/tell); CheckURL refuses
// what is obviously refused when the channel is set, for an early, clear
// error.

// WebhookAllow is what the operator lets agents' webhooks reach although the
// guard would refuse it.
type WebhookAllow struct {
	// Hosts are names (lower case, without a trailing dot), matched against
	// a webhook URL's host: a URL naming one is dialled whatever it
	// resolves to.
	Hosts []string
	// Nets are matched against the address dialled (and an IP-literal
	// host). An IP given alone is a /32 or /128.
	Nets []netip.Prefix
}

// AllowsHost reports whether host (a URL's host, without port or brackets)
// is one of the allowed names.
func (w WebhookAllow) AllowsHost(host string) bool {
	host = canonicalHost(host)
	for _, h := range w.Hosts {
		if h == host {
			return true
		}
	}
	return false
}

// AllowsAddr reports whether ip is in one of the allowed networks.
func (w WebhookAllow) AllowsAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, n := range w.Nets {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// Empty reports whether nothing is allowed beyond the guard.
func (w WebhookAllow) Empty() bool { return len(w.Hosts) == 0 && len(w.Nets) == 0 }

// refusedNets are the networks an agent's webhook never reaches, beyond what
// netip.Addr's predicates cover, with why. IPv4-mapped IPv6 addresses are
// checked as the IPv4 address they map.
var refusedNets = []struct {
	net netip.Prefix
	why string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\" (0.0.0.0/8)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT, 100.64.0.0/10)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved (IETF protocol assignments)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "reserved (documentation)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved (benchmarking)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "reserved (documentation)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "reserved (documentation)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (240.0.0.0/4, broadcast included)"},
	{netip.MustParsePrefix("::/96"), "reserved (IPv4-compatible IPv6)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "reserved (local-use NAT64)"},
	{netip.MustParsePrefix("100::/64"), "reserved (discard-only)"},
	{netip.MustParsePrefix("2001::/32"), "reserved (Teredo)"},
	{netip.MustParsePrefix("2001:db8::/32"), "reserved (documentation)"},
	{netip.MustParsePrefix("fec0::/10"), "reserved (site-local)"},
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// RefusedAddr says what kind of address ip is when an agent's webhook may
// not reach it ("loopback", "private", ...), or "" when it may. IPv6 forms
// that embed an IPv4 address (IPv4-mapped, NAT64 64:ff9b::/96, 6to4
// 2002::/16) are judged by the IPv4 address they carry.
func RefusedAddr(ip netip.Addr) string {
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64.Contains(ip):
			if why := RefusedAddr(netip.AddrFrom4([4]byte(b[12:16]))); why != "" {
				return why + " (through NAT64)"
			}
		case sixToFour.Contains(ip):
			if why := RefusedAddr(netip.AddrFrom4([4]byte(b[2:6]))); why != "" {
				return why + " (through 6to4)"
			}
		}
	}
	switch {
	case !ip.IsValid():
		return "invalid"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsPrivate():
		return "private"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsMulticast():
		return "multicast"
	}
	for _, r := range refusedNets {
		if r.net.Contains(ip) {
			return r.why
		}
	}
	return ""
}

// CheckURL refuses, as EINVALID naming field, a webhook URL whose host is
// obviously one the guard refuses: an IP literal (in any form a resolver
// accepts, such as 127.1 or 0x7f.0.0.1) of a refused kind, or a name of the
// machine itself (localhost, *.localhost), unless w allows it. A name that
// passes may still be refused when dialled, by what it resolves to.
func (w WebhookAllow) CheckURL(field, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return Errorf(EINVALID, "%s: not a URL", field)
	}
	host := canonicalHost(u.Hostname())
	if w.AllowsHost(host) {
		return nil
	}
	const allow = "agents' and people's webhooks never reach it unless the operator allows it (askd serve --webhook-allow HOST|CIDR)"
	if ip, ok := literalIP(host); ok {
		if why := RefusedAddr(ip); why != "" && !w.AllowsAddr(ip) {
			return Errorf(EINVALID, "%s: host %s: %s address; %s", field, u.Hostname(), why, allow)
		}
		return nil
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || host == "localhost.localdomain" ||
		host == "ip6-localhost" || host == "ip6-loopback" {
		return Errorf(EINVALID, "%s: host %s: names this machine (loopback); %s", field, u.Hostname(), allow)
	}
	return nil
}

// canonicalHost is host in lower case without a trailing dot ("LocalHost."
// is localhost).
func canonicalHost(host string) string {
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// literalIP reads host as an IP address: IPv6 or dotted-quad IPv4, or one of
// the older IPv4 forms C's inet_aton, and so many resolvers, accept — 1 to 4
// parts, each decimal, octal (leading 0) or hex (0x), the last filling the
// remaining bytes: 127.1, 2130706433, 0x7f.0.0.1, 0177.0.0.1.
func literalIP(host string) (netip.Addr, bool) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip, true
	}
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var nums []uint64
	for _, p := range parts {
		base, digits := 10, p
		switch {
		case strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X"):
			base, digits = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		n, err := strconv.ParseUint(digits, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		nums = append(nums, n)
	}
	var v uint64
	for i, n := range nums {
		if i < len(nums)-1 {
			if n > 0xff {
				return netip.Addr{}, false
			}
			v = v<<8 | n
			continue
		}
		rest := uint(4 - i) // bytes the last part fills
		if n >= 1<<(8*rest) {
			return netip.Addr{}, false
		}
		v = v<<(8*rest) | n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}
