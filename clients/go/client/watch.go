package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/soundgate/soundgate/impl/proto"
)

// The inbox's live stream: the gate's notifications on the connection (id-less
// lines, which the reader hands to the connection's watch instead of to a call).

// ErrUnwatched is what Watch.Next returns once Unwatch ended the watch and the events
// that came before were taken.
var ErrUnwatched = errors.New("soundgate/client: the watch ended")

// watchQueueMax bounds the events a Watch holds that Next has not taken: as on the
// gate (proto.WatchQueueMax), one more drops them and Next says proto.EventLost.
// The reader never waits for Next, so a slow taker never delays a call's answer.
const watchQueueMax = proto.WatchQueueMax

// Watch is the connection's watch of the inbox (Client.Watch): the changes of the
// pending approvals in the token's runs, in the gate's order, each sent once it is
// durable. Take them with Next; end it with Unwatch or by closing the client.
type Watch struct {
	c     *Client
	ready chan struct{} // holds a token while Next has something to take

	mu    sync.Mutex
	queue []proto.InboxEvent
	lost  bool  // the queue overflowed: Next says proto.EventLost first
	err   error // why the watch ended: ErrUnwatched, or the connection's error
}

// Watch starts the connection's watch of the inbox (an approver's or an operator's
// call; one watch a connection, a second is proto.ErrWatchRepeated). Watch first,
// then list the inbox with Pending: every change after the watch's answer comes as
// an event, so the list and the events together miss nothing (an event may repeat
// what the list shows). On an event proto.EventLost, events were dropped (the gate's
// queue or this client's overflowed): list the inbox again. If ctx ends before the
// answer, the gate may be watching nonetheless (the outcome is unknown): close the
// client to be sure.
func (c *Client) Watch(ctx context.Context) (*Watch, error) {
	w := &Watch{c: c, ready: make(chan struct{}, 1)}
	c.mu.Lock()
	switch {
	case c.err != nil:
		err := c.err
		c.mu.Unlock()
		return nil, err
	case c.watch != nil:
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: this client watches already (Unwatch first)", proto.ErrWatchRepeated)
	}
	c.watch = w // before the request: the events follow its answer at once
	c.mu.Unlock()
	var res proto.WatchResult
	if err := c.call(ctx, &proto.Request{Method: proto.MethodWatch}, &res); err != nil {
		c.dropWatch(w)
		return nil, err
	}
	return w, nil
}

// Next returns the next event, waiting for one until ctx ends (ctx.Err()). An event
// whose Event this version does not know (proto.InboxEvents) may come: skip it. A
// proto.EventLost that this client made itself, its own queue having overflowed, has
// AtMs 0. Once the watch has ended and its events were taken, Next returns
// ErrUnwatched after Unwatch, or the connection's error (ErrClosed, wrapping the
// cause) when the connection closed or broke: the gate went away.
func (w *Watch) Next(ctx context.Context) (proto.InboxEvent, error) {
	for {
		w.mu.Lock()
		switch {
		case w.lost:
			w.lost = false
			w.mu.Unlock()
			return proto.InboxEvent{Event: proto.EventLost}, nil
		case len(w.queue) > 0:
			ev := w.queue[0]
			w.queue[0] = proto.InboxEvent{}
			w.queue = w.queue[1:]
			w.mu.Unlock()
			return ev, nil
		case w.err != nil:
			err := w.err
			w.mu.Unlock()
			return proto.InboxEvent{}, err
		}
		w.mu.Unlock()
		select {
		case <-w.ready:
		case <-ctx.Done():
			return proto.InboxEvent{}, ctx.Err()
		}
	}
}

// Unwatch ends the watch: the gate sends no event after its answer. Next returns the
// events that came before, then ErrUnwatched. A gate that says the connection does
// not watch (proto.ErrNotWatching) ends it too.
func (w *Watch) Unwatch(ctx context.Context) error {
	var res proto.UnwatchResult
	err := w.c.call(ctx, &proto.Request{Method: proto.MethodUnwatch}, &res)
	if err == nil || errors.Is(err, proto.ErrNotWatching) {
		w.c.dropWatch(w)
		w.end(ErrUnwatched)
	}
	return err
}

// add files one event of the gate, or drops the queue when it is full.
func (w *Watch) add(ev proto.InboxEvent) {
	w.mu.Lock()
	if w.err == nil {
		if len(w.queue) >= watchQueueMax {
			w.queue, w.lost = nil, true // what came before ev is gone, ev is not
		}
		w.queue = append(w.queue, ev)
	}
	w.mu.Unlock()
	w.signal()
}

// end ends the watch with err, unless it has ended already.
func (w *Watch) end(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
	w.signal()
}

func (w *Watch) signal() {
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

// dropWatch forgets w as the connection's watch.
func (c *Client) dropWatch(w *Watch) {
	c.mu.Lock()
	if c.watch == w {
		c.watch = nil
	}
	c.mu.Unlock()
}

// notified hands a notification of the gate to the connection's watch. One of a
// method this client does not know is skipped (a later version may add some); a bad
// one breaks the connection, as a bad answer does.
func (c *Client) notified(method string, params json.RawMessage) error {
	if method != proto.NotificationInbox {
		return nil
	}
	var ev proto.InboxEvent
	if err := ev.UnmarshalJSON(params); err != nil {
		return err
	}
	c.mu.Lock()
	w := c.watch
	c.mu.Unlock()
	if w != nil {
		w.add(ev)
	}
	return nil
}
