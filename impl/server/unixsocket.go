package server

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
	"time"
)

// ErrSocketInUse reports a Unix socket path that a gate may not take: another gate
// holds it, a process answers on it, or something other than a socket is there.
var ErrSocketInUse = errors.New("soundgate/server: socket path in use")

// ListenUnix listens on a Unix socket at path, one gate per socket as there is one
// per log: two gates answering on one path would admit one key twice. It holds an
// exclusive lock on path+".lock" for as long as the listener is open (the kernel
// drops it when the process dies), and replaces what is at path only if it is a
// socket that nobody answers on (a gate that was killed). A regular file, a
// directory, a live socket or a path locked by another gate is ErrSocketInUse, and
// is left as it was.
func ListenUnix(path string) (net.Listener, error) {
	if weakened.socket {
		os.RemoveAll(path)
		return net.Listen("unix", path)
	}
	lock, err := lockSocketPath(path + ".lock")
	if err != nil {
		return nil, err
	}
	l, err := listenUnixLocked(path)
	if err != nil {
		lock.Close()
		return nil, err
	}
	return &lockedListener{Listener: l, lock: lock}, nil
}

func listenUnixLocked(path string) (net.Listener, error) {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case st.Mode()&fs.ModeSocket == 0:
		return nil, fmt.Errorf("%w: %s is a %s, not a socket: not replacing it", ErrSocketInUse, path, fileKind(st.Mode()))
	default:
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			c.Close()
			return nil, fmt.Errorf("%w: a process answers on %s (another gate?)", ErrSocketInUse, path)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w: %s: %v", ErrSocketInUse, path, err)
		}
		// A socket nobody listens on, under our lock: a gate that was killed.
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	return net.Listen("unix", path)
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsRegular():
		return "regular file"
	}
	return "file of mode " + m.String()
}

// lockSocketPath takes the lock file of a socket path (created mode 0600, never
// through a symbolic link) with a non-blocking exclusive flock.
func lockSocketPath(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock for the socket: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: another gate holds %s", ErrSocketInUse, p)
		}
		return nil, fmt.Errorf("lock %s: %w", p, err)
	}
	return f, nil
}

// lockedListener releases the socket path's lock when it closes.
type lockedListener struct {
	net.Listener
	lock *os.File
}

func (l *lockedListener) Close() error {
	err := l.Listener.Close() // removes the socket file
	return errors.Join(err, l.lock.Close())
}
