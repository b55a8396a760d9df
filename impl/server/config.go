package server

import (
	"time"

	"github.com/soundgate/soundgate/impl/proto"
)

// Limits of the server itself (the core has its own, in core.Limits). A zero field
// takes its default.
type Limits struct {
	ConnectionsMax int           // open connections; one more is refused with overloaded
	WriteQueueMax  int           // answers queued per connection before its reader pauses
	WriteTimeout   time.Duration // a peer that does not read its answers for this long is dropped
	HelloTimeout   time.Duration // a connection that does not say hello within this is closed
}

// DefaultLimits are the server limits of `soundgate serve` unless flags change them.
func DefaultLimits() Limits {
	return Limits{ConnectionsMax: 4096, WriteQueueMax: 1024, WriteTimeout: 10 * time.Second,
		HelloTimeout: 10 * time.Second}
}

// withDefaults fills every zero field of l with its default, so that a caller setting
// one limit does not set the others to zero (a zero write queue would block forever).
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.ConnectionsMax <= 0 {
		l.ConnectionsMax = d.ConnectionsMax
	}
	if l.WriteQueueMax <= 0 {
		l.WriteQueueMax = d.WriteQueueMax
	}
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = d.WriteTimeout
	}
	if l.HelloTimeout <= 0 {
		l.HelloTimeout = d.HelloTimeout
	}
	return l
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
	}
	return false
}
