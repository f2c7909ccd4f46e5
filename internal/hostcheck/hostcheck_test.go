package hostcheck

import "testing"

func TestHostPolicy(t *testing.T) {
	tests := []struct {
		name   string
		hosts  []string
		listen string
		host   string
		want   bool
	}{
		{"localhost", nil, "127.0.0.1:7777", "localhost:7777", true},
		{"localhost, capitals and trailing dot", nil, "127.0.0.1:7777", "LocalHost.:7777", true},
		{"a .localhost name", nil, "127.0.0.1:7777", "askd.localhost:7777", true},
		{"127.0.0.1", nil, "127.0.0.1:7777", "127.0.0.1:7777", true},
		{"elsewhere in 127/8", nil, "127.0.0.1:7777", "127.9.9.9", true},
		{"[::1]", nil, "127.0.0.1:7777", "[::1]:7777", true},
		{"rebound name", nil, "127.0.0.1:7777", "evil.example:7777", false},
		{"rebound name without port", nil, "127.0.0.1:7777", "evil.example", false},
		{"name that looks like loopback", nil, "127.0.0.1:7777", "127.0.0.1.nip.io:7777", false},
		{"localhost as a prefix", nil, "127.0.0.1:7777", "localhost.evil.example", false},
		{"allowed name", []string{"askd.lan"}, "127.0.0.1:7777", "askd.lan:7777", true},
		{"allowed name given with a port", []string{"askd.lan:8080"}, "127.0.0.1:7777", "ASKD.LAN", true},
		{"subdomain wildcard", []string{"*.example.com"}, "127.0.0.1:7777", "inbox.example.com", true},
		{"wildcard is not the bare domain", []string{"*.example.com"}, "127.0.0.1:7777", "example.com", false},
		{"wildcard is a whole label", []string{"*.example.com"}, "127.0.0.1:7777", "evilexample.com", false},
		{"the listen IP", nil, "192.0.2.5:7777", "192.0.2.5:7777", true},
		{"another IP, listening on one", nil, "192.0.2.5:7777", "192.0.2.6:7777", false},
		{"any IP, listening on all", nil, "0.0.0.0:7777", "192.0.2.6:7777", true},
		{"any IPv6, listening on all", nil, "[::]:7777", "[2001:db8::1]:7777", true},
		{"a name, listening on all", nil, "0.0.0.0:7777", "evil.example:7777", false},
		{"no Host (HTTP/1.0)", nil, "127.0.0.1:7777", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := New(tt.hosts, tt.listen).Allows(tt.host); got != tt.want {
				t.Fatalf("allows(%q) = %v, want %v", tt.host, got, tt.want)
			}
		})
	}
}

func TestValid(t *testing.T) {
	tests := []struct {
		host string
		ok   bool
	}{
		{"askd.lan", true}, {"*.example.com", true}, {"askd.lan:7777", true}, {"192.0.2.5", true},
		{"", false}, {"https://askd.lan/", false}, {"a b", false}, {"*", false}, {"ex*ample.com", false},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			if err := Valid(tt.host); (err == nil) != tt.ok {
				t.Fatalf("Valid(%q) = %v, want ok %v", tt.host, err, tt.ok)
			}
		})
	}
}
