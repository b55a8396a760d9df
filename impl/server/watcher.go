package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/wal"
)

// A connection's watch of the inbox: the methods watch and unwatch on the wire side
// of the hub (watch.go). A watch subscribes the session to the inbox of its token's
// runs, and a goroutine per watching session moves the subscription's events to the
// session's outbox as notification lines, the way a parked admit's answer reaches
// the transport (session.push). It pushes only while the session's unsent answers
// stay under watchOutboxMax and watchUnsentBytesMax; beyond, it waits for the peer
// to read, meanwhile the subscription's bounded queue overflows into a lost event,
// and no admit ever waits for a watch.

const (
	// watchOutboxMax bounds the answers waiting in a watching session's outbox
	// (batches of notifications and its other answers) under which its watch pushes
	// another batch: a subscriber that does not read holds at most this many.
	watchOutboxMax = 8
	// watchUnsentBytesMax bounds the bytes its transport took and has not written
	// (session.unsent) under which its watch pushes another batch.
	watchUnsentBytesMax = 64 << 10
	// watchBatchMax is the most events one pushed batch (one answer) carries, so that
	// the bounds above bound bytes too: 8 batches of 64 events, each at most about
	// 5 KB (every byte of run and key escaped) and most a few hundred bytes.
	watchBatchMax = 64
	// watchPollInterval is how often a watch that waits for its peer to read looks
	// again: only a subscriber that is behind pays for it.
	watchPollInterval = 10 * time.Millisecond
)

// watches are the sessions' watches, at most Limits.WatchesMax at once.
type watches struct {
	mu sync.Mutex
	of map[*session]*watcher
}

// watcher is one session's watch: its subscription and the goroutine that sends its
// events (run).
type watcher struct {
	ss     *session
	sub    *Subscription
	cancel context.CancelFunc // ends run's Next and its waits for room

	mu    sync.Mutex // held while a batch is pushed: none is pushed once ended is set
	ended bool
}

// Watches returns how many connections watch the inbox now.
func (s *Server) Watches() int {
	s.watches.mu.Lock()
	defer s.watches.mu.Unlock()
	return len(s.watches.of)
}

// watch answers a watch request: it subscribes the session to the changes of the
// inbox in its token's runs, answers, and only then starts sending the notifications.
func (ss *session) watch(req *proto.Request) {
	w, ctx, err := ss.s.startWatch(ss)
	if err != nil {
		ss.push(answer{id: req.ID, line: proto.AppendError(nil, req.ID, err)})
		return
	}
	ss.s.log.Debug("watch", "remote", ss.remote, "token_name", ss.cred.Name)
	ss.push(answer{id: req.ID, line: proto.AppendResult(nil, req.ID, &proto.WatchResult{Watching: true})})
	go w.run(ctx)
}

// unwatch answers an unwatch request: the watch ends before the answer is queued, so
// that no notification follows the answer.
func (ss *session) unwatch(req *proto.Request) {
	if !ss.s.endWatch(ss) {
		ss.push(answer{id: req.ID, line: proto.AppendError(nil, req.ID, proto.ErrNotWatching)})
		return
	}
	ss.push(answer{id: req.ID, line: proto.AppendResult(nil, req.ID, &proto.UnwatchResult{Watching: false})})
}

// startWatch subscribes ss, or refuses in the order of docs/protocol.md: a second
// watch, then the server's state (shutting down, failed closed, WatchesMax reached).
// ctx, for the watcher's run, ends with the watch. A session the transport has
// closed already (forget) is not subscribed: nothing would end its watch.
func (s *Server) startWatch(ss *session) (*watcher, context.Context, error) {
	ws := &s.watches
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.of[ss] != nil {
		return nil, nil, proto.ErrWatchRepeated
	}
	select {
	case <-s.doneC:
		return nil, nil, proto.ErrShuttingDown
	default:
	}
	if f := s.node.Failed(); f != nil {
		return nil, nil, fmt.Errorf("%w: the gate refuses until restarted: %v", proto.ErrUnavailable, f)
	}
	if max := s.cfg.Limits.WatchesMax; len(ws.of) >= max {
		err := fmt.Errorf("%w: %d connections watch the inbox, the gate's most", proto.ErrOverloaded, max)
		s.refused.add(s.log, proto.ErrOverloaded.Type, "remote", ss.remote, "token_name", ss.cred.Name, "why", err.Error())
		return nil, nil, err
	}
	s.mu.Lock()
	_, open := s.sessions[ss]
	s.mu.Unlock()
	if !open {
		return nil, nil, proto.ErrShuttingDown // the connection is closing: the answer goes nowhere
	}
	if ws.of == nil {
		ws.of = map[*session]*watcher{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{ss: ss, sub: s.Subscribe(ss.cred.Allows, proto.WatchQueueMax), cancel: cancel}
	ws.of[ss] = w
	return w, ctx, nil
}

// endWatch ends ss's watch, if it has one (unwatch, and forget when the connection
// closes), and reports whether it had.
func (s *Server) endWatch(ss *session) bool {
	ws := &s.watches
	ws.mu.Lock()
	w := ws.of[ss]
	delete(ws.of, ss)
	ws.mu.Unlock()
	if w == nil {
		return false
	}
	w.mu.Lock()
	w.ended = true
	w.mu.Unlock()
	w.cancel()
	w.sub.Close()
	return true
}

// run sends the subscription's events until the watch ends, the server shuts down,
// or the log fails (then the watch is told lost, and a pending asked again answers
// unavailable).
func (w *watcher) run(ctx context.Context) {
	s := w.ss.s
	for {
		evs, lost, closed, err := w.sub.Next(ctx)
		if closed || ctx.Err() != nil {
			return
		}
		if err != nil {
			s.log.Warn("watch: the log failed; the watch sends nothing more", "remote", w.ss.remote, "err", err)
			evs, lost = nil, true
		}
		var line []byte
		if lost {
			line = proto.AppendInboxEvent(line, &proto.InboxEvent{Event: proto.EventLost, AtMs: s.node.Now()})
		}
		for len(evs) > 0 || len(line) > 0 {
			n := min(len(evs), watchBatchMax)
			var after wal.LSN
			for i := range evs[:n] {
				line = proto.AppendInboxEvent(line, wireEvent(&evs[i]))
				after = evs[i].After
			}
			evs = evs[n:]
			if !w.send(ctx, answer{line: line, after: after}) {
				return
			}
			line = nil
		}
		if err != nil {
			return
		}
	}
}

// send pushes one batch of notification lines to the session's outbox once there is
// room (room), unless the watch ends first. after is the record the batch rests on:
// Next waited for it already, and release checks it again, as for every answer.
func (w *watcher) send(ctx context.Context, a answer) bool {
	var t *time.Timer
	for !w.room() {
		if t == nil {
			t = time.NewTimer(watchPollInterval)
			defer t.Stop()
		} else {
			t.Reset(watchPollInterval)
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended || w.ss.revoked.Load() { // a reload took its token away: its close is on the way
		return false
	}
	w.ss.push(a)
	return true
}

// room reports whether the session's peer has read enough for another batch.
func (w *watcher) room() bool {
	return w.ss.queued() < watchOutboxMax && w.ss.unsent.Load() < watchUnsentBytesMax
}

// wireEvent is the notification of a hub's event.
func wireEvent(ev *InboxEvent) *proto.InboxEvent {
	a := &ev.Approval
	return &proto.InboxEvent{Event: string(ev.Kind), Run: a.Run, Key: a.Key, SinceMs: a.Since,
		Description: a.Description, ArgsDigest: a.ArgsDigest, Reason: ev.Reason, AtMs: ev.At}
}
