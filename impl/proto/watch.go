package proto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/soundgate/soundgate/impl/core"
)

// The inbox's live stream (docs/protocol.md, "watch"): a watch answers at once, and
// from then on the gate sends, on the same connection, one notification line per
// change of the pending approvals in the token's scope:
//
//	{"jsonrpc":"2.0","method":"inbox","params":{"event":"pending","run":"r","key":"k",...,"at_ms":N}}
//
// A notification has no id: it answers no request, and a client tells it from an
// answer by that (DecodeNotification).

// NotificationInbox is the method of the notifications a watch sends.
const NotificationInbox = "inbox"

// EventLost is the event of a notification that says the gate dropped events this
// watch did not take in time: list the inbox again (pending).
const EventLost = "lost"

// InboxEvents are the event names of the inbox notifications, in docs/protocol.md's
// order. A later release of version 1 may add some: a client ignores one it does not
// know.
var InboxEvents = []string{"pending", "approved", "rejected", "cancelled", "fenced", "timed_out", EventLost}

// WatchQueueMax is how many events the gate holds for a watch that has not taken
// them; the next one drops them, and the watch is told EventLost.
const WatchQueueMax = 1024

// WatchResult answers watch: the connection watches the inbox from now on
// (Watching, true), and the notifications follow this answer.
type WatchResult struct {
	Watching bool
}

// AppendJSON appends r's JSON object to dst.
func (r *WatchResult) AppendJSON(dst []byte) []byte { return appendWatching(dst, r.Watching) }

// UnmarshalJSON reads r from its JSON object.
func (r *WatchResult) UnmarshalJSON(b []byte) (err error) {
	r.Watching, err = readWatching(b)
	return err
}

// UnwatchResult answers unwatch: the connection's watch has ended (Watching, false),
// and no notification follows this answer.
type UnwatchResult struct {
	Watching bool
}

// AppendJSON appends r's JSON object to dst.
func (r *UnwatchResult) AppendJSON(dst []byte) []byte { return appendWatching(dst, r.Watching) }

// UnmarshalJSON reads r from its JSON object.
func (r *UnwatchResult) UnmarshalJSON(b []byte) (err error) {
	r.Watching, err = readWatching(b)
	return err
}

// appendWatching appends the object {"watching":v}, the answer of watch and unwatch.
func appendWatching(dst []byte, v bool) []byte {
	dst = append(dst, '{')
	dst = appendBool(dst, "watching", v, true)
	return append(dst, '}')
}

func readWatching(b []byte) (bool, error) {
	var w struct {
		Watching bool `json:"watching"`
	}
	err := strictJSON(b, &w)
	return w.Watching, err
}

// InboxEvent is one change of the inbox as an inbox notification carries it: what
// happened (Event) to which approval, with its note as it was opened, and when.
// EventLost has no approval: Run, Key and the note are empty.
type InboxEvent struct {
	Event       string     // one of InboxEvents
	Run         core.RunID // the approval's run
	Key         core.Key   // the approval's key
	SinceMs     core.Time  // when it became pending, on the gate's clock; 0: not known
	Description string     // the gated admit's
	ArgsDigest  string     // the gated admit's
	Reason      string     // the decision's (approved, rejected), if it gave one
	AtMs        core.Time  // when it happened on the gate's clock (lost: when told)
}

// AppendInboxEvent appends the notification line of ev, LF included, to dst. Every
// text is escaped as in the answers, and the line is at most LineBytesMax bytes (its
// members are bounded as a request's are).
func AppendInboxEvent(dst []byte, ev *InboxEvent) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":"`+NotificationInbox+`","params":`...)
	dst = ev.AppendJSON(dst)
	return append(dst, "}\n"...)
}

// AppendJSON appends the params object of ev's notification to dst.
func (ev *InboxEvent) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	dst = appendStr(dst, "event", ev.Event, true)
	if ev.Run != "" || ev.Key != "" {
		dst = appendStr(dst, "run", string(ev.Run), false)
		dst = appendStr(dst, "key", string(ev.Key), false)
	}
	dst = appendNote(dst, ev.SinceMs, ev.Description, ev.ArgsDigest)
	if ev.Reason != "" {
		dst = appendStr(dst, "reason", ev.Reason, false)
	}
	dst = appendInt(dst, "at_ms", int64(ev.AtMs), false)
	return append(dst, '}')
}

// UnmarshalJSON reads ev from a notification's params object. An event name this
// version does not know is kept as it is (a client skips it).
func (ev *InboxEvent) UnmarshalJSON(b []byte) error {
	var w struct {
		Event string `json:"event"`
		Run   string `json:"run"`
		Key   string `json:"key"`
		noteWire
		Reason string `json:"reason"`
		AtMs   int64  `json:"at_ms"`
	}
	if err := strictJSON(b, &w); err != nil {
		return err
	}
	if w.Event == "" {
		return errors.New("soundgate/proto: bad notification: no event")
	}
	*ev = InboxEvent{Event: w.Event, Run: core.RunID(w.Run), Key: core.Key(w.Key), SinceMs: core.Time(w.SinceMs),
		Description: w.Description, ArgsDigest: w.ArgsDigest, Reason: w.Reason, AtMs: core.Time(w.AtMs)}
	return nil
}

// ErrNotNotification: DecodeNotification was given a line that is not a
// notification (an answer, say, which has an id).
var ErrNotNotification = errors.New("soundgate/proto: not a notification")

// DecodeNotification reads one notification line (with or without its LF or CRLF):
// a JSON-RPC 2.0 object with a method and params and no id. params is a copy: it
// does not alias line. A line with an id is ErrNotNotification.
func DecodeNotification(line []byte) (method string, params json.RawMessage, err error) {
	var env struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(trimEOL(line), &env); err != nil {
		return "", nil, fmt.Errorf("soundgate/proto: bad notification: %w", err)
	}
	switch {
	case env.ID != nil || env.Method == nil:
		return "", nil, ErrNotNotification
	case env.JSONRPC != "2.0":
		return "", nil, errors.New(`soundgate/proto: bad notification: jsonrpc is not "2.0"`)
	case len(bytes.TrimSpace(env.Params)) == 0:
		return "", nil, errors.New("soundgate/proto: bad notification: no params")
	}
	return *env.Method, append(json.RawMessage(nil), env.Params...), nil
}
