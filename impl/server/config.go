package server

import (
	"errors"
	"fmt"
	"time"

	"github.com/soundgate/soundgate/impl/proto"
)

// Limits of the server itself (the core has its own, in core.Limits). A zero field
// takes its default.
type Limits struct {
	ConnectionsMax int           // open connections of the listeners Serve serves; one more is refused with overloaded
	WriteQueueMax  int           // answers queued per connection before its reader pauses
	WriteTimeout   time.Duration // a peer that does not read its answers for this long is dropped
	HelloTimeout   time.Duration // a connection that does not say hello within this is closed
	// IdleTimeout closes an agent's connection that has had no admit waiting and no
	// answer to send, and neither sent nor been sent anything, for this long (idle.go).
	IdleTimeout time.Duration

	// ReservedConnections of ConnectionsMax only approvers and operators may hold:
	// an agent's hello is refused (overloaded) once agents hold the rest. Zero: a
	// sixty-fourth of ConnectionsMax, at most 64.
	ReservedConnections int
	// ConnectionsPerTokenMax is how many connections one token may hold, on every
	// listener together; one more hello is refused (overloaded).
	ConnectionsPerTokenMax int
	// WaitersPerTokenMax is how many admits of one token may wait for a decision at
	// once; one more is refused with quota, so that one agent cannot take the
	// waits all agents share (node.Config.WaitersMax).
	WaitersPerTokenMax int
	// RunsPerTokenMax is how many runs one token may have opened that are not
	// retired yet; one more open is refused with quota, so that one operator cannot
	// take the runs all share (core.Limits.RunsMax). Counted from the gate's start.
	RunsPerTokenMax int
	// ResultBytesPerTokenMax is how many bytes of results one token may have
	// recorded in runs that are not retired yet; a complete that would pass it is
	// refused with quota. Counted from the gate's start.
	ResultBytesPerTokenMax int
	// AdminConnectionsMax is how many connections the listeners ServeAdmin serves
	// hold together, apart from ConnectionsMax.
	AdminConnectionsMax int
	// WatchesMax is how many connections may watch the inbox at once (watch); one
	// more watch is refused with overloaded. Each costs a goroutine, a queue of at
	// most proto.WatchQueueMax events, and a scope check per change of the inbox.
	WatchesMax int
}

// DefaultLimits are the server limits of `soundgate serve` unless flags change them.
func DefaultLimits() Limits {
	return Limits{ConnectionsMax: 4096, WriteQueueMax: 1024, WriteTimeout: 10 * time.Second,
		HelloTimeout: 10 * time.Second, IdleTimeout: 5 * time.Minute, ReservedConnections: 64, ConnectionsPerTokenMax: 1024, AdminConnectionsMax: 64,
		WaitersPerTokenMax: 16384, RunsPerTokenMax: 65536, ResultBytesPerTokenMax: 256 << 20, WatchesMax: 256}
}

// ErrLimits: limits that cannot work together.
var ErrLimits = errors.New("soundgate/server: bad limits")

// withDefaults fills every zero field of l with its default, so that a caller setting
// one limit does not set the others to zero (a zero write queue would block forever).
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	orDefault(&l.ConnectionsMax, d.ConnectionsMax)
	orDefault(&l.WriteQueueMax, d.WriteQueueMax)
	orDefault(&l.WriteTimeout, d.WriteTimeout)
	orDefault(&l.HelloTimeout, d.HelloTimeout)
	orDefault(&l.IdleTimeout, d.IdleTimeout)
	orDefault(&l.ReservedConnections, min(d.ReservedConnections, l.ConnectionsMax/64))
	orDefault(&l.ConnectionsPerTokenMax, d.ConnectionsPerTokenMax)
	orDefault(&l.WaitersPerTokenMax, d.WaitersPerTokenMax)
	orDefault(&l.RunsPerTokenMax, d.RunsPerTokenMax)
	orDefault(&l.ResultBytesPerTokenMax, d.ResultBytesPerTokenMax)
	orDefault(&l.AdminConnectionsMax, d.AdminConnectionsMax)
	orDefault(&l.WatchesMax, d.WatchesMax)
	return l
}

// orDefault sets *v to d unless it is positive.
func orDefault[T int | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// check refuses limits that leave agents no connection.
func (l Limits) check() error {
	if l.ReservedConnections >= l.ConnectionsMax {
		return fmt.Errorf("%w: %d reserved connections of %d leave agents none", ErrLimits, l.ReservedConnections, l.ConnectionsMax)
	}
	return nil
}

// allowedMethods says which role may call which method.
func allowed(role proto.Role, m proto.Method) bool {
	switch m {
	case proto.MethodStatus:
		return true
	case proto.MethodAdmit, proto.MethodComplete:
		return role == proto.RoleAgent
	case proto.MethodDecide:
		return role == proto.RoleApprover
	case proto.MethodOpen, proto.MethodCancel, proto.MethodFence:
		return role == proto.RoleOperator
	case proto.MethodPending, proto.MethodWatch, proto.MethodUnwatch: // the inbox: who decides, and who runs the gate
		return role == proto.RoleApprover || role == proto.RoleOperator
	}
	return false
}
