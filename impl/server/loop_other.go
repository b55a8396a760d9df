//go:build !linux

package server

import (
	"errors"
	"net"
)

// loop: the event loop exists on Linux only (loop_linux.go); elsewhere a goroutine
// pair serves each connection.
type loop struct{}

const loopAvailable = false

type loopSource struct{}

func newLoop(*Server) (*loop, error)   { return nil, errors.New("no event loop on this platform") }
func (*loop) add(*conn, net.Conn) bool { return false }
func (*loop) kick(*conn)               {}
func (*loop) stop(abort bool)          {}
