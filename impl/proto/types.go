package proto

import (
	"strconv"

	"github.com/soundgate/soundgate/impl/core"
)

// Method is the operation a request names. The wire name of each is its String.
type Method uint8

// The methods of protocol version 1. MethodNone is the zero value and never decoded.
const (
	MethodNone Method = iota
	MethodHello
	MethodOpen
	MethodAdmit
	MethodDecide
	MethodComplete
	MethodCancel
	MethodFence
	MethodStatus
	MethodPending
	MethodWatch
	MethodUnwatch
)

var methodNames = [...]string{"", "hello", "open", "admit", "decide", "complete", "cancel", "fence", "status", "pending", "watch", "unwatch"}

// Methods lists every method of the protocol, in the order of docs/protocol.md.
var Methods = []Method{MethodHello, MethodOpen, MethodAdmit, MethodDecide, MethodComplete, MethodCancel, MethodFence, MethodStatus, MethodPending,
	MethodWatch, MethodUnwatch}

// String returns the wire name of m ("admit", ...), or "invalid".
func (m Method) String() string {
	if int(m) >= len(methodNames) || m == MethodNone {
		return "invalid"
	}
	return methodNames[m]
}

// ParseMethod maps a wire name to its Method.
func ParseMethod(s string) (Method, bool) {
	for i := 1; i < len(methodNames); i++ {
		if methodNames[i] == s {
			return Method(i), true
		}
	}
	return MethodNone, false
}

// methodOps gives each method the core operation it asks for; hello has none (the
// server answers it itself), nor have pending (a read of the node's inbox, not a
// step), watch and unwatch (a subscription of the connection), and no method asks for core.OpTimeout or core.OpRetire (the gate's clock
// does).
var methodOps = [...]core.Op{
	MethodOpen:     core.OpOpen,
	MethodAdmit:    core.OpAdmit,
	MethodDecide:   core.OpDecide,
	MethodComplete: core.OpComplete,
	MethodCancel:   core.OpCancel,
	MethodFence:    core.OpFence,
	MethodStatus:   core.OpStatus,
}

// Op returns the core operation m asks for. ok is false for MethodHello,
// MethodPending, MethodWatch and MethodUnwatch, which ask the core for no operation,
// and for a value that is not a method.
func (m Method) Op() (op core.Op, ok bool) {
	if int(m) >= len(methodOps) || methodOps[m] == 0 {
		return 0, false
	}
	return methodOps[m], true
}

// MethodOf returns the method that asks for op. ok is false for core.OpTimeout and
// core.OpRetire, which no request asks for, and for a value that is not an operation.
func MethodOf(op core.Op) (m Method, ok bool) {
	for _, m := range Methods {
		if o, ok := m.Op(); ok && o == op {
			return m, true
		}
	}
	return MethodNone, false
}

// IDKind tells what an ID holds.
type IDKind uint8

// The kinds of request id. IDNull appears only in error answers to requests whose id
// could not be read.
const (
	IDNull IDKind = iota
	IDInt
	IDString
)

// ID is a request id: an integer with |id| <= IntMax or a string of at most IDBytesMax
// bytes, chosen by the client and echoed in the answer. The zero value is the null id.
// ID is comparable and can key a map of requests in flight.
type ID struct {
	Kind IDKind
	Int  int64  // when Kind is IDInt
	Str  string // when Kind is IDString
}

// IntID returns the integer id n.
func IntID(n int64) ID { return ID{Kind: IDInt, Int: n} }

// StringID returns the string id s.
func StringID(s string) ID { return ID{Kind: IDString, Str: s} }

// IsNull reports whether id is the null id.
func (id ID) IsNull() bool { return id.Kind == IDNull }

// String returns id as it appears in JSON (5, "a", null), for messages and logs.
func (id ID) String() string { return string(id.AppendJSON(nil)) }

// AppendJSON appends id's JSON form to dst.
func (id ID) AppendJSON(dst []byte) []byte {
	switch id.Kind {
	case IDInt:
		return strconv.AppendInt(dst, id.Int, 10)
	case IDString:
		return appendString(dst, id.Str)
	}
	return append(dst, "null"...)
}

// Request is one decoded request. Method says which fields are meaningful; the others
// are zero. Optional fields absent from the line are zero too, and zero means absent:
// no deadline (TimeoutMs 0), no wait (WaitMs 0), not gated, an empty result, no key in
// a status request, no description, digest or reason, the default limit and no
// cursor in a pending request.
//
//	method    fields
//	hello     Version, Token
//	open      Run, TimeoutMs (optional)
//	admit     Run, Key, Epoch, Gated, WaitMs, Description, ArgsDigest (the last four optional)
//	decide    Run, Key, Decision, Reason (optional)
//	complete  Run, Key, Outcome, Result (optional)
//	cancel    Run
//	fence     Run
//	status    Run, Key (optional)
//	pending   Limit (optional), Cursor (optional)
//	watch     none
//	unwatch   none
type Request struct {
	ID     ID
	Method Method

	Version int64  // hello: the protocol version the client speaks (1..IntMax)
	Token   string // hello: the credential (1..TokenBytesMax bytes)

	Run core.RunID // every method but hello (1..RunBytesMax bytes)
	Key core.Key   // admit, decide, complete; optional in status (1..KeyBytesMax bytes)

	Epoch     uint64 // admit: the epoch the caller works at (1..IntMax)
	Gated     bool   // admit: the effect needs its own approval
	WaitMs    int64  // admit: how long to wait instead of answering held (0..WaitMsMax)
	TimeoutMs int64  // open: the run's deadline, relative to the gate's clock (0: none; 1..TimeoutMsMax)

	Decision core.Decision // decide
	Outcome  core.Outcome  // complete
	Result   string        // complete: the effect's result (0..ResultBytesMax bytes)

	// What an approval says (core.Note): none of it changes a decision.
	Description string // admit: what the effect would do (0..DescriptionBytesMax bytes, core.CheckNoteText)
	ArgsDigest  string // admit: a digest of its arguments (core.CheckArgsDigest)
	Reason      string // decide: why (0..ReasonBytesMax bytes, core.CheckNoteText)

	Limit  int64  // pending: the most approvals to list (1..PendingLimitMax; 0: PendingLimitDefault)
	Cursor string // pending: list after this place, the cursor of the page before (ParseCursor)
}

// Role is what a credential may do, as a hello answer names it.
type Role uint8

// The roles. An agent works on the runs its token is scoped to (admit, complete,
// status); only an approver decides; an operator opens and administers the runs its
// token is scoped to (open, cancel, fence, status); approvers and operators list the
// pending approvals of their runs (pending) and watch them change (watch, unwatch). The server's configuration
// assigns them to tokens (docs/server.md, "Roles file").
const (
	RoleNone Role = iota
	RoleAgent
	RoleApprover
	RoleOperator
)

var roleNames = [...]string{"", "agent", "approver", "operator"}

// String returns the wire name of r ("agent", "approver", "operator"), or "invalid".
func (r Role) String() string {
	if int(r) >= len(roleNames) || r == RoleNone {
		return "invalid"
	}
	return roleNames[r]
}

// ParseRole maps a wire name to its Role.
func ParseRole(s string) (Role, bool) { return parseName[Role](roleNames[:], s) }

func parseName[T ~uint8](names []string, s string) (T, bool) {
	for i, n := range names {
		if n != "" && n == s {
			return T(i), true
		}
	}
	return 0, false
}
