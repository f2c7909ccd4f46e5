//go:build !linux

package parked

import "net"

// hangups is, off Linux, a goroutine per connection (watchAlone).
type hangups struct{}

func (h *hangups) watch(conn net.Conn, gone func()) (stop func()) { return watchAlone(conn, gone) }
