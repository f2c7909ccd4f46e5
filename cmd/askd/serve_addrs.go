package main

import (
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/askd-dev/askd/internal/openstore"
)

// What askd serve prints of where it listens must be URLs a person can open:
// listening on all interfaces (--addr :7777, 0.0.0.0, [::]) the listen
// address is http://[::]:7777, which no browser or phone opens.

// listenURLs returns the URLs a person can open for a server listening on
// addr. local is the listen address's own URL, or, when addr is unspecified
// (all interfaces), the loopback one, http://127.0.0.1:PORT; then others is
// one URL for each address of ifaddrs that other machines may reach (not
// loopback, not link-local, which needs a zone no URL carries), IPv4 first.
func listenURLs(addr net.Addr, ifaddrs []net.Addr) (local string, others []string) {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return "http://" + addr.String(), nil
	}
	port := strconv.Itoa(tcp.Port)
	local = "http://" + net.JoinHostPort("127.0.0.1", port)
	var v4, v6 []string
	seen := map[string]bool{}
	for _, a := range ifaddrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip := ipn.IP
		if ip.IsLoopback() || ip.IsUnspecified() || ip.IsLinkLocalUnicast() || ip.IsMulticast() || seen[ip.String()] {
			continue
		}
		seen[ip.String()] = true
		u := "http://" + net.JoinHostPort(ip.String(), port)
		if ip.To4() != nil {
			v4 = append(v4, u)
		} else {
			v6 = append(v6, u)
		}
	}
	return local, append(v4, v6...)
}

// interfaceAddrs is the addresses of this machine's interfaces that are up
// and running (a bridge with nothing plugged in is not).
func interfaceAddrs() []net.Addr {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	var out []net.Addr
	for _, i := range ifs {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagRunning == 0 {
			continue
		}
		if as, err := i.Addrs(); err == nil {
			out = append(out, as...)
		}
	}
	return out
}

// onlyHere reports whether a server listening on addr makes links that only
// this machine can open, when no --public-url says otherwise: it listens on
// loopback, or on all interfaces, whose links use loopback.
func onlyHere(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && (tcp.IP.IsLoopback() || tcp.IP.IsUnspecified())
}

// printListening says where askd serve listens: local, and when it listens
// on all interfaces, the others URLs from other machines.
func printListening(w io.Writer, role, db, local string, addr net.Addr, others []string) {
	fmt.Fprintf(w, "askd %s listening on %s (role %s, database %s)\n", version, local, role, describeDB(db))
	if tcp, ok := addr.(*net.TCPAddr); !ok || !tcp.IP.IsUnspecified() {
		return
	}
	if len(others) == 0 {
		fmt.Fprintf(w, "Listening on all interfaces; this machine has no other address now.\n")
		return
	}
	fmt.Fprintf(w, "Listening on all interfaces; from other machines open:\n")
	for _, u := range others {
		fmt.Fprintf(w, "  %s\n", u)
	}
}

// linksOnlyHere reports whether people are sent links (the notifiers') that
// only this machine can open: askd serve warns of it. Only webhook notifiers
// are left to warn of: ntfy and Slack carry answer buttons, and without
// --public-url askd serve refuses to start (linksConfig).
func linksOnlyHere(sc serveConfig, addr net.Addr) bool {
	return sc.publicURL == "" && len(sc.cfg.Notifiers) > 0 && onlyHere(addr)
}

// describeDB names the database askd serve serves, for printListening.
func describeDB(db string) string {
	if openstore.IsPostgres(db) {
		return "PostgreSQL"
	}
	return "SQLite " + db
}
