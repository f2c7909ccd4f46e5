package parked

import (
	"net"
	"testing"
	"time"
)

// tcpPair is a connected loopback pair: the server's end and the client's.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// heard waits for a gone call; a minute is only the bound of a broken test.
func heard(t *testing.T, gone <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-gone:
	case <-time.After(time.Minute):
		t.Fatalf("%s: not heard within a minute", what)
	}
}

// The watch of a parked call's connection hears its client close it, or
// send anything; a stopped watch hears nothing, even when its descriptor's
// number comes back for another connection.
func TestClientsLeaving(t *testing.T) {
	var h hangups
	for _, tt := range []struct {
		name  string
		leave func(net.Conn)
	}{
		{"closes", func(c net.Conn) { c.Close() }},
		{"half-closes", func(c net.Conn) { c.(*net.TCPConn).CloseWrite() }},
		{"sends a byte", func(c net.Conn) { c.Write([]byte{'x'}) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			server, client := tcpPair(t)
			gone := make(chan struct{}, 2)
			stop := h.watch(server, func() { gone <- struct{}{} })
			defer stop()
			tt.leave(client)
			heard(t, gone, "the client leaving")
		})
	}

	t.Run("stopped", func(t *testing.T) {
		server, client := tcpPair(t)
		stale := make(chan struct{}, 1)
		stop := h.watch(server, func() { stale <- struct{}{} })
		stop()
		server.Close()
		client.Close()
		// Another connection, likely on the same descriptor number: its
		// leaving is heard by its own watch alone.
		server2, client2 := tcpPair(t)
		gone := make(chan struct{}, 1)
		stop2 := h.watch(server2, func() { gone <- struct{}{} })
		defer stop2()
		client2.Close()
		heard(t, gone, "the second client leaving")
		select {
		case <-stale:
			t.Fatal("a stopped watch heard a hang-up")
		default:
		}
	})

	t.Run("already gone", func(t *testing.T) {
		server, client := tcpPair(t)
		client.Close()
		gone := make(chan struct{}, 1)
		stop := h.watch(server, func() { gone <- struct{}{} })
		defer stop()
		heard(t, gone, "a client gone before the watch")
	})
}
