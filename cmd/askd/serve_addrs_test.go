package main

import (
	"net"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestListenURLs(t *testing.T) {
	ifaddrs := []net.Addr{
		ipNet("127.0.0.1/8"), ipNet("::1/128"),
		ipNet("2001:db8::20/64"), ipNet("fe80::1/64"), // link-local: no URL carries its zone
		ipNet("192.168.1.20/24"), ipNet("169.254.3.4/16"), ipNet("10.0.0.5/8"),
		ipNet("192.168.1.20/24"), // on two interfaces
	}
	tests := []struct {
		name   string
		listen string
		local  string
		others []string
	}{
		{"loopback", "127.0.0.1:7777", "http://127.0.0.1:7777", nil},
		{"one address", "192.168.1.20:7777", "http://192.168.1.20:7777", nil},
		{"one IPv6 address", "[2001:db8::20]:7777", "http://[2001:db8::20]:7777", nil},
		{"all, IPv4", "0.0.0.0:7777", "http://127.0.0.1:7777",
			[]string{"http://192.168.1.20:7777", "http://10.0.0.5:7777", "http://[2001:db8::20]:7777"}},
		{"all, IPv6", "[::]:7777", "http://127.0.0.1:7777",
			[]string{"http://192.168.1.20:7777", "http://10.0.0.5:7777", "http://[2001:db8::20]:7777"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, err := net.ResolveTCPAddr("tcp", tt.listen)
			if err != nil {
				t.Fatal(err)
			}
			local, others := listenURLs(addr, ifaddrs)
			if local != tt.local || !reflect.DeepEqual(others, tt.others) {
				t.Fatalf("listenURLs(%s): %s %q, want %s %q", tt.listen, local, others, tt.local, tt.others)
			}
		})
	}
}

func ipNet(cidr string) net.Addr {
	ip, n, err := net.ParseCIDR(cidr)
	if err != nil {
		panic(err)
	}
	n.IP = ip
	return n
}

var printedURL = regexp.MustCompile(`https?://[^\s,;)]+`)

// Listening on all interfaces, askd serve prints only URLs a person can
// open: the sign-in link on loopback, or on the public URL when one is given,
// and the machine's other addresses beside; never [::] or 0.0.0.0. Webhook
// notifiers without a public URL get a warning: their links would point at
// loopback (ntfy and Slack ones are refused, see TestServeAnswerButtonFlags).
func TestServeOnAllInterfacesPrintsOpenableURLs(t *testing.T) {
	const all, loopback = "0.0.0.0:0", "127.0.0.1:0"
	tests := []struct {
		name   string
		addr   string
		args   []string
		signIn string // how the sign-in link starts
		warn   bool
	}{
		{"no public URL", all, nil, "http://127.0.0.1:", false},
		{"a public URL", all, []string{"--public-url", "https://askd.example.com/"}, "https://askd.example.com/signin?code=", false},
		{"notifiers, no public URL", all, []string{"--notify-webhook", "https://hooks.example.com/askd"}, "http://127.0.0.1:", true},
		{"notifiers and a public URL", all, []string{"--notify-webhook", "https://hooks.example.com/askd", "--public-url", "https://askd.example.com"},
			"https://askd.example.com/signin?code=", false},
		{"notifiers on loopback", loopback, []string{"--notify-webhook", "https://hooks.example.com/askd"}, "http://127.0.0.1:", true},
		{"ntfy with a public URL", loopback, []string{"--notify-ntfy", "https://ntfy.example.com/askd", "--public-url", "https://askd.example.com"},
			"https://askd.example.com/signin?code=", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServe(t, append([]string{"--addr", tt.addr}, tt.args...)...)
			printed := strings.Join(srv.Printed, "\n")
			for _, u := range printedURL.FindAllString(printed, -1) {
				if strings.Contains(u, "[::]") || strings.Contains(u, "0.0.0.0") {
					t.Errorf("printed %s, which no one can open, in\n%s", u, printed)
				}
			}
			if !strings.HasPrefix(srv.SignIn, tt.signIn) {
				t.Errorf("sign-in link %s, want it to start %s", srv.SignIn, tt.signIn)
			}
			if onAll := strings.Contains(printed, "Listening on all interfaces"); onAll != (tt.addr == all) {
				t.Errorf("says it listens on all interfaces: %v, want %v\n%s", onAll, tt.addr == all, printed)
			}
			if got := strings.Contains(printed, "Warning: notifications (--notify-webhook) link to"); got != tt.warn {
				t.Errorf("warning about notification links: %v, want %v\n%s", got, tt.warn, printed)
			}
			get(t, srv.URL+"/healthz", nil, http.StatusOK) // the URL printed first opens
		})
	}
}
