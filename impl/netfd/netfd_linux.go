//go:build linux

// Package netfd gives an event loop the raw socket of a net.Conn and a reader that
// reads it once per readiness: an event loop that owns its sockets with epoll,
// outside Go's poller, uses it (the gate's, impl/server; the bench's).
package netfd

import (
	"errors"
	"io"
	"net"
	"syscall"
)

// Take returns a non-blocking, close-on-exec duplicate of nc's socket and closes nc.
// Closing nc takes the socket out of Go's poller, which would otherwise be woken for
// every byte the event loop reads itself. On error nc is left open.
func Take(nc net.Conn) (int, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1, errors.New("soundgate/netfd: not a socket")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	if cerr := rc.Control(func(s uintptr) { fd, err = syscall.Dup(int(s)) }); cerr != nil {
		return -1, cerr
	}
	if err != nil {
		return -1, err
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	nc.Close()
	return fd, nil
}

// Source reads the socket FD at most once per readiness that epoll reported
// (Readable, set by the loop): a second read would only find EAGAIN, a system call
// for nothing on every request. Without a readiness, and on EAGAIN, Read returns
// Empty, the error its reader takes for "no bytes now, more later"
// (proto.ErrWouldBlock, which proto.Reader passes on without making it sticky). A
// closed peer is io.EOF.
type Source struct {
	FD       int
	Readable bool
	Empty    error
}

func (s *Source) Read(p []byte) (int, error) {
	if !s.Readable {
		return 0, s.Empty
	}
	s.Readable = false
	for {
		n, err := syscall.Read(s.FD, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return 0, s.Empty
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}
