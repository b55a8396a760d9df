//go:build !linux

package server

import (
	"errors"
	"net"
)

// loop: the event loop exists on Linux only (loop_linux.go); elsewhere the goroutine
// transport serves every connection.
type loop struct{}

const loopAvailable = false

func newLoop(*Server) (*loop, error)      { return nil, errors.New("no event loop on this platform") }
func (*loop) add(*session, net.Conn) bool { return false }
func (*loop) stop(abort bool)             {}
