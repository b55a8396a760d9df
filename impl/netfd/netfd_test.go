//go:build linux

package netfd_test

import (
	"errors"
	"io"
	"net"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/netfd"
	"github.com/soundgate/soundgate/impl/proto"
)

// TestTakeAndSource: Take hands over a working non-blocking socket and closes the
// net.Conn; Source reads only when told the socket is readable, reports EAGAIN and
// the lack of readiness as ErrWouldBlock, and a closed peer as EOF.
func TestTakeAndSource(t *testing.T) {
	l, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	require.NoError(t, err)
	defer l.Close()
	peer, err := net.Dial("unix", l.Addr().String())
	require.NoError(t, err)
	defer peer.Close()
	nc, err := l.Accept()
	require.NoError(t, err)

	fd, err := netfd.Take(nc)
	require.NoError(t, err)
	defer syscall.Close(fd)
	_, err = nc.Write([]byte("x"))
	require.Error(t, err, "Take leaves nc open")
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	require.Zero(t, errno)
	require.NotZero(t, flags&syscall.O_NONBLOCK, "the socket is blocking")

	src := &netfd.Source{FD: fd, Empty: proto.ErrWouldBlock}
	buf := make([]byte, 16)
	_, err = src.Read(buf)
	require.ErrorIs(t, err, proto.ErrWouldBlock, "read without a readiness")
	src.Readable = true
	_, err = src.Read(buf)
	require.ErrorIs(t, err, proto.ErrWouldBlock, "EAGAIN on an empty socket")

	_, err = peer.Write([]byte("hello\n"))
	require.NoError(t, err)
	src.Readable = true
	n, err := src.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "hello\n", string(buf[:n]))
	_, err = src.Read(buf)
	require.ErrorIs(t, err, proto.ErrWouldBlock, "a second read for one readiness")

	peer.Close()
	src.Readable = true
	_, err = src.Read(buf)
	require.True(t, errors.Is(err, io.EOF), "a closed peer: %v", err)

	_, err = netfd.Take(fakeConn{})
	require.Error(t, err, "a net.Conn without a socket")
}

type fakeConn struct{ net.Conn }
