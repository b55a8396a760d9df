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
// redis-benchmark drives Redis (one thread, an event loop): the bench shares the
// machine's cores with the gate it measures, and a goroutine per connection costs a
// read that finds nothing before every sleep and a wake-up per answer, CPU the gate
// then lacks. Each readable connection is read once, its answers checked, its window
// refilled and its requests sent in one write. It returns the latencies of every
// connection.
func rawLoop(ds []*rawDriver, stop time.Time) (map[string][]time.Duration, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	defer syscall.Close(ep)
	l := &eventLoop{ep: ep, stop: stop, byFD: map[int32]*rawDriver{}}
	defer l.closeAll()
	if err := l.register(ds); err != nil {
		return nil, err
	}
	l.live = len(ds)
	for _, d := range ds {
		l.step(d)
	}
	if err := l.run(len(ds)); err != nil {
		return nil, err
	}
	lat := map[string][]time.Duration{}
	for _, d := range ds {
		addLatencies(lat, d.lat)
	}
	return lat, nil
}

// eventLoop is rawLoop's state: the epoll instance, the connections by socket and
// how many are not finished.
type eventLoop struct {
	ep   int
	stop time.Time
	byFD map[int32]*rawDriver
	live int
}

// register takes every connection's socket from its net.Conn and watches it for
// input.
func (l *eventLoop) register(ds []*rawDriver) error {
	for _, d := range ds {
		fd, err := netfd.Take(d.nc)
		if err != nil {
			return fmt.Errorf("connection %d: %w", d.id, err)
		}
		d.fd = fd
		d.src = &netfd.Source{FD: fd, Empty: proto.ErrWouldBlock}
		d.rd = proto.NewReader(d.src)
		d.lat = map[string][]time.Duration{}
		l.byFD[int32(fd)] = d
		if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}); err != nil {
			return fmt.Errorf("connection %d: epoll: %w", d.id, err)
		}
	}
	return nil
}

func (l *eventLoop) closeAll() {
	for _, d := range l.byFD {
		syscall.Close(d.fd)
	}
}

// finish stops watching d, counting err (if any) against the bench.
func (l *eventLoop) finish(d *rawDriver, err error) {
	if err != nil {
		d.b.fail(fmt.Errorf("connection %d: %w", d.id, err))
	}
	if !d.finished {
		d.finished = true
		l.live--
		syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_DEL, d.fd, nil)
	}
}

// step refills d's window (until stop) and sends; d is done once nothing is in
// flight after stop.
func (l *eventLoop) step(d *rawDriver) {
	if time.Now().Before(l.stop) {
		for len(d.inflight) < d.depth {
			d.enqueue()
		}
	}
	if err := d.send(l.ep); err != nil {
		l.finish(d, err)
		return
	}
	if len(d.inflight) == 0 {
		l.finish(d, nil)
	}
}

// run waits for events, up to maxEvents at a time, and handles them until every
// connection is finished.
func (l *eventLoop) run(maxEvents int) error {
	events := make([]syscall.EpollEvent, maxEvents)
	for l.live > 0 {
		n, err := syscall.EpollWait(l.ep, events, 1000)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("epoll_wait: %w", err)
		}
		for _, ev := range events[:n] {
			if d := l.byFD[ev.Fd]; d != nil && !d.finished {
				l.handle(d, ev.Events)
			}
		}
	}
	return nil
}

// handle sends what waited for EPOLLOUT, reads and checks every answer d has ready,
// and steps d when it got one or has nothing in flight.
func (l *eventLoop) handle(d *rawDriver, events uint32) {
	if events&syscall.EPOLLOUT != 0 {
		if err := d.send(l.ep); err != nil {
			l.finish(d, err)
			return
		}
	}
	if events&(syscall.EPOLLIN|syscall.EPOLLHUP|syscall.EPOLLERR) == 0 {
		return
	}
	d.src.Readable = true
	got := 0
	for len(d.inflight) > 0 {
		err := d.answer()
		if errors.Is(err, proto.ErrWouldBlock) {
			break
		}
		if err != nil {
			l.finish(d, err)
			break
		}
		got++
	}
	if !d.finished && (got > 0 || len(d.inflight) == 0) {
		l.step(d)
	}
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
