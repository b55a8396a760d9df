package server

import (
	"context"
	"sync"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/wal"
)

// The inbox's subscriptions: what `soundgate pending --watch` and the approvers'
// page stream. The node tells the hub of each change under its lock (node.Watch);
// the hub files it with each subscriber in scope, in a bounded queue, and never
// waits: a subscriber that does not read loses its queue (told as Lost, then it
// lists the inbox again) instead of slowing an admit.

// InboxEventKind says what happened to a pending approval.
type InboxEventKind string

// The kinds of inbox events.
const (
	EventPending   InboxEventKind = "pending"   // a gated admit opened it
	EventApproved  InboxEventKind = "approved"  // an approver approved it
	EventRejected  InboxEventKind = "rejected"  // an approver rejected it, or a sibling of its run (P2)
	EventCancelled InboxEventKind = "cancelled" // an operator cancelled its run
	EventFenced    InboxEventKind = "fenced"    // its run's attempt was fenced
	EventTimedOut  InboxEventKind = "timed_out" // its run's deadline passed
)

// InboxEvent is one change of the inbox, as a subscriber gets it.
type InboxEvent struct {
	Kind     InboxEventKind
	Approval core.Approval // the approval, with its note as it was opened
	Reason   string        // the decision's reason (approved, rejected), if one was given
	At       core.Time     // the gate's clock when it happened
	After    wal.LSN       // the record it rests on: sent only once durable
}

// subscriptionQueueMax is the most events a subscriber's queue holds before it is
// dropped and the subscriber told it lost some.
const subscriptionQueueMax = 1024

// hub fans the node's changes out to the subscriptions.
type hub struct {
	watch sync.Once // the node.Watch, from the first subscription on
	mu    sync.Mutex
	subs  map[*Subscription]struct{}
}

// Subscription is one subscriber's view of the inbox's changes. Take its events
// with Next; Close it when done.
type Subscription struct {
	s     *Server
	scope func(core.RunID) bool
	max   int

	mu     sync.Mutex
	queue  []InboxEvent
	lost   bool
	closed bool
	ready  chan struct{} // holds a token while the queue has something to say
}

// Subscribe returns a subscription to the changes of the inbox in the runs scope
// covers (a credential's Allows; nil: every run), from now on. max bounds its queue
// (0: subscriptionQueueMax).
func (s *Server) Subscribe(scope func(core.RunID) bool, max int) *Subscription {
	if max <= 0 {
		max = subscriptionQueueMax
	}
	sub := &Subscription{s: s, scope: scope, max: max, ready: make(chan struct{}, 1)}
	h := &s.hub
	// Not under h.mu: the node's lock is taken before the hub's (tell).
	h.watch.Do(func() { s.node.Watch(h.tell) })
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[*Subscription]struct{}{}
	}
	h.subs[sub] = struct{}{}
	return sub
}

// len returns how many subscriptions are open.
func (h *hub) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Close ends the subscription: Next returns at once from then on.
func (sub *Subscription) Close() {
	h := &sub.s.hub
	h.mu.Lock()
	delete(h.subs, sub)
	h.mu.Unlock()
	sub.mu.Lock()
	sub.closed = true
	sub.mu.Unlock()
	sub.signal()
}

// Next waits until the subscription has events, lost some, or is closed, or ctx is
// done, and returns the events that are durable, in the log's order. lost reports
// that the queue overflowed since the last call: the events before these are gone,
// and the subscriber should list the inbox again. closed reports a subscription
// closed (by Close or the server's shutdown). A durable-wait failure (the log
// failed) returns its error: the gate is failed closed.
func (sub *Subscription) Next(ctx context.Context) (events []InboxEvent, lost, closed bool, err error) {
	for {
		sub.mu.Lock()
		events, lost, closed = sub.queue, sub.lost, sub.closed
		sub.queue, sub.lost = nil, false
		sub.mu.Unlock()
		if closed || lost || len(events) > 0 {
			break
		}
		select {
		case <-sub.ready:
		case <-ctx.Done():
			return nil, false, false, ctx.Err()
		case <-sub.s.doneC:
			return nil, false, true, nil
		}
	}
	if len(events) > 0 {
		if err := sub.s.node.Durable(events[len(events)-1].After); err != nil {
			return nil, lost, closed, err
		}
	}
	return events, lost, closed, nil
}

func (sub *Subscription) signal() {
	select {
	case sub.ready <- struct{}{}:
	default:
	}
}

// push files evs with sub, or drops its queue when they would not fit.
func (sub *Subscription) push(evs []InboxEvent) {
	sub.mu.Lock()
	if sub.closed {
		sub.mu.Unlock()
		return
	}
	for _, ev := range evs {
		if sub.scope != nil && !sub.scope(ev.Approval.Run) {
			continue
		}
		if len(sub.queue) >= sub.max {
			sub.queue, sub.lost = nil, true // what came before ev is gone, ev is not
		}
		sub.queue = append(sub.queue, ev)
	}
	sub.mu.Unlock()
	sub.signal()
}

// tell is the hub's node.Watch: called under the node's lock, it must not block.
func (h *hub) tell(ch node.Change) {
	evs := inboxEvents(ch)
	if len(evs) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range h.subs {
		sub.push(evs)
	}
}

// inboxEvents are the inbox events of one change.
func inboxEvents(ch node.Change) []InboxEvent {
	var evs []InboxEvent
	at := ch.Cmd.Now
	for _, a := range ch.Closed {
		ev := InboxEvent{Approval: a, At: at, After: ch.LSN}
		switch {
		case ch.TimedOut:
			ev.Kind = EventTimedOut
		case ch.Cmd.Op == core.OpDecide && ch.Cmd.Decision == core.Approve && a.Key == ch.Cmd.Key:
			ev.Kind, ev.Reason = EventApproved, ch.Cmd.Reason
		case ch.Cmd.Op == core.OpDecide:
			ev.Kind, ev.Reason = EventRejected, ch.Cmd.Reason
		case ch.Cmd.Op == core.OpCancel:
			ev.Kind = EventCancelled
		default:
			ev.Kind = EventFenced
		}
		evs = append(evs, ev)
	}
	if ch.Opened != nil {
		evs = append(evs, InboxEvent{Kind: EventPending, Approval: *ch.Opened, At: at, After: ch.LSN})
	}
	return evs
}
