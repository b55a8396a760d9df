package proto

import "github.com/soundgate/soundgate/impl/core"

// methodOps maps each method but hello to the core's operation of the same name.
var methodOps = map[Method]core.Op{MethodOpen: core.OpOpen, MethodAdmit: core.OpAdmit, MethodDecide: core.OpDecide,
	MethodComplete: core.OpComplete, MethodCancel: core.OpCancel, MethodFence: core.OpFence, MethodStatus: core.OpStatus}

// Op returns the core's operation of m; hello has none.
func (m Method) Op() (core.Op, bool) {
	op, ok := methodOps[m]
	return op, ok
}
