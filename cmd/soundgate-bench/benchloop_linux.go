//go:build linux

package main

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/soundgate/soundgate/impl/netfd"
	"github.com/soundgate/soundgate/impl/proto"
)

// benchSource is a raw connection's socket as rawLoop reads it.
type benchSource = netfd.Source

// rawLoopAvailable: this platform drives raw connections from one event loop.
const rawLoopAvailable = true

// rawLoop drives every raw connection from one goroutine with epoll, as
// redis-benchmark drives Redis (one thread, an event loop). The bench shares the
// machine's cores with the gate it measures, and a goroutine per connection costs a
// read that finds nothing before every sleep, and a wake-up per answer: at 64 clients
// it spent more CPU per request than redis-benchmark does, CPU the gate then lacked.
// Each readable connection is read once, its answers checked, its window refilled and
// its requests sent in one write. It returns the latencies of every connection.
func rawLoop(ds []*rawDriver, stop time.Time) (map[string][]time.Duration, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	defer syscall.Close(ep)
	byFD := map[int32]*rawDriver{}
	defer func() {
		for _, d := range byFD {
			syscall.Close(d.fd)
		}
	}()
	for _, d := range ds {
		fd, err := netfd.Take(d.nc)
		if err != nil {
			return nil, fmt.Errorf("connection %d: %w", d.id, err)
		}
		d.fd = fd
		d.src = &netfd.Source{FD: fd, Empty: proto.ErrWouldBlock}
		d.rd = proto.NewReader(d.src)
		d.lat = map[string][]time.Duration{}
		byFD[int32(fd)] = d
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}); err != nil {
			return nil, fmt.Errorf("connection %d: epoll: %w", d.id, err)
		}
	}
	live := len(ds)
	finish := func(d *rawDriver, err error) {
		if err != nil {
			d.b.fail(fmt.Errorf("connection %d: %w", d.id, err))
		}
		if !d.finished {
			d.finished = true
			live--
			syscall.EpollCtl(ep, syscall.EPOLL_CTL_DEL, d.fd, nil)
		}
	}
	// step refills d's window (until stop) and sends; d is done once nothing is in
	// flight after stop.
	step := func(d *rawDriver) {
		if time.Now().Before(stop) {
			for len(d.inflight) < d.depth {
				d.enqueue()
			}
		}
		if err := d.send(ep); err != nil {
			finish(d, err)
			return
		}
		if len(d.inflight) == 0 {
			finish(d, nil)
		}
	}
	for _, d := range ds {
		step(d)
	}
	events := make([]syscall.EpollEvent, len(ds))
	for live > 0 {
		n, err := syscall.EpollWait(ep, events, 1000)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("epoll_wait: %w", err)
		}
		for _, ev := range events[:n] {
			d := byFD[ev.Fd]
			if d == nil || d.finished {
				continue
			}
			if ev.Events&syscall.EPOLLOUT != 0 {
				if err := d.send(ep); err != nil {
					finish(d, err)
					continue
				}
			}
			if ev.Events&(syscall.EPOLLIN|syscall.EPOLLHUP|syscall.EPOLLERR) == 0 {
				continue
			}
			d.src.Readable = true
			got := 0
			for len(d.inflight) > 0 {
				err := d.answer()
				if errors.Is(err, proto.ErrWouldBlock) {
					break
				}
				if err != nil {
					finish(d, err)
					break
				}
				got++
			}
			if !d.finished && (got > 0 || len(d.inflight) == 0) {
				step(d)
			}
		}
	}
	lat := map[string][]time.Duration{}
	for _, d := range ds {
		for k, v := range d.lat {
			lat[k] = append(lat[k], v...)
		}
	}
	return lat, nil
}

// send writes what d has encoded; what the socket does not take waits for EPOLLOUT.
func (d *rawDriver) send(ep int) error {
	for len(d.out) > 0 {
		n, err := syscall.Write(d.fd, d.out)
		if n > 0 {
			d.out = d.out[:copy(d.out, d.out[n:])]
		}
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			if !d.wantOut {
				d.wantOut = true
				return syscall.EpollCtl(ep, syscall.EPOLL_CTL_MOD, d.fd, &syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLOUT, Fd: int32(d.fd)})
			}
			return nil
		case err != nil:
			return fmt.Errorf("write: %w", err)
		}
	}
	if d.wantOut {
		d.wantOut = false
		return syscall.EpollCtl(ep, syscall.EPOLL_CTL_MOD, d.fd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(d.fd)})
	}
	return nil
}
