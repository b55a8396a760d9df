package core

import "errors"

// Op names an action of the contract, as the log and the wire carry it.
type Op uint8

// The operations. OpStatus is read only and never logged. OpTimeout and OpRetire
// come from the shell's clock, never from the wire.
const (
	OpOpen Op = iota + 1
	OpAdmit
	OpDecide
	OpComplete
	OpCancel
	OpFence
	OpTimeout
	OpStatus
	OpRetire
)

var opNames = [...]string{"", "open", "admit", "decide", "complete", "cancel", "fence", "timeout", "status", "retire"}

// String returns the wire name of the operation ("admit", ...).
func (o Op) String() string { return enumName(opNames[:], int(o)) }

// ParseOp maps an operation's name to its Op.
func ParseOp(s string) (Op, bool) { return parseEnum[Op](opNames[:], s) }

// Command is one request to the core with every argument it needs, time included, so
// that applying the same commands in the same order always gives the same state. The
// write-ahead log stores Commands; replaying them rebuilds the gate.
type Command struct {
	Op       Op
	Run      RunID
	Key      Key
	Epoch    uint64   // Admit
	Gated    bool     // Admit
	Decision Decision // Decide
	Outcome  Outcome  // Complete
	Result   string   // Complete
	Deadline Time     // Open; 0: none
	Now      Time     // Admit: the gate's clock when the request was decided
	Upto     bool     // Retire: move the watermark up to Run instead of listing it

	// What an approval says (note.go): kept with the approval a gated Admit opens,
	// and with the decided effect; no decision reads them.
	Description string // Admit: what the effect would do, for the approver
	ArgsDigest  string // Admit: a digest of its arguments ("sha256:<hex>")
	Reason      string // Decide, Cancel, Fence: why
	// By is who asked: the name of the token (never the token), for the audit trail
	// (docs/audit.md). Decide, Cancel and Fence carry it; no action reads it.
	By string
}

// Reply is the core's answer to one Command, and what the shell must do with it.
type Reply struct {
	// Err is the typed refusal, if any; then nothing changed and Persist is false.
	Err error

	// Persist reports that the command changed the state. The shell must append the
	// Command to its log BEFORE the next command is applied (the log's order is the
	// order of application, so replay rebuilds this state), and must not send this
	// reply, nor any later answer that read the state this command wrote, until the
	// record is durable (durability D1: no answer rests on a decision that a crash
	// could undo).
	Persist bool

	// Wake reports that parked admits of Command.Run may now get another answer (a
	// decision, cancel, fence or timeout of the run): the shell asks them again. Their
	// answers, like every answer, leave only once what they read is durable.
	Wake bool

	Admit    AdmitResult    // OpAdmit
	Decide   DecideResult   // OpDecide
	Complete CompleteResult // OpComplete
	Open     OpenResult     // OpOpen
	Run      RunView        // OpCancel, OpFence, OpStatus, OpTimeout, OpRetire: the run after the action
	Effect   EffectView     // OpStatus with a key
}

// Step applies one command: it is the core's only entry point that changes state.
// A shell calls it from one place (impl/node), and the log's replay with the same
// commands rebuilds the same state.
func (g *Gate) Step(c Command) Reply {
	if err := c.checkNote(); err != nil {
		return Reply{Err: err} // before anything: the state is as it was
	}
	if g.cut != nil && c.Op != OpStatus {
		if run := g.runs[c.Run]; run != nil {
			g.cut.touch(run)
		}
	}
	var rep Reply
	switch c.Op {
	case OpOpen:
		rep.Open, rep.Err = g.open(c.Run, c.Deadline)
		rep.Persist = rep.Open.Created
	case OpAdmit:
		rep = g.stepAdmit(&c)
	case OpDecide:
		rep.Decide, rep.Err = g.decide(c.Run, c.Key, c.Decision, c.Reason)
		rep.Persist = rep.Err == nil && !rep.Decide.Repeat
		rep.Wake = rep.Persist
	case OpComplete:
		rep.Complete, rep.Err = g.complete(c.Run, c.Key, c.Outcome, c.Result)
		rep.Persist = rep.Err == nil && !rep.Complete.Repeat
	case OpCancel:
		var res CancelResult
		res, rep.Err = g.cancel(c.Run)
		rep.Run, rep.Persist, rep.Wake = res.Run, res.Changed, res.Changed
	case OpFence:
		rep.Run, rep.Err = g.fence(c.Run)
		rep.Persist, rep.Wake = rep.Err == nil, rep.Err == nil
	case OpTimeout:
		var changed bool
		changed, rep.Err = g.timeout(c.Run)
		rep.Persist, rep.Wake = changed, changed
		if rep.Err == nil {
			rep.Run, _, _ = g.Status(c.Run, "")
		}
	case OpStatus:
		rep.Run, rep.Effect, rep.Err = g.Status(c.Run, c.Key)
	case OpRetire:
		rep.Run, rep.Persist, rep.Err = g.retire(c.Run, c.Upto)
	default:
		rep.Err = ErrInvalid
	}
	if rep.Err != nil {
		rep.Persist, rep.Wake = false, false
	}
	if rep.Persist {
		g.listPending(c.Run) // a step that changed nothing opened or closed no approval
	}
	g.assertInvariants(c, rep)
	return rep
}

// stepAdmit is the contract's Admit in full: its step 2, a deadline that has passed
// at c.Now, is the spec's Timeout of the run, taken first; the admit proper then
// answers on the timed-out run (denied, timed_out). The log records the Admit alone,
// and its replay at the same c.Now takes the same Timeout.
func (g *Gate) stepAdmit(c *Command) Reply {
	run, err := g.admitTarget(c.Run, c.Key, c.Epoch)
	if errors.Is(err, ErrRunRetired) {
		return Reply{Admit: AdmitResult{Answer: AnswerDenied, Reason: ReasonRetired}}
	}
	if err != nil {
		return Reply{Err: err}
	}
	var rep Reply
	if run.due(c.Now) {
		g.timeOut(run)
		rep.Persist, rep.Wake = true, true
	}
	note := c.openNote()
	rep.Admit, rep.Err = g.admit(run, c.Key, c.Epoch, c.Gated, &note)
	if rep.Err != nil && rep.Persist {
		// A timed-out run answers denied; an error here would drop a state change.
		panic("soundgate/core: an admit refused after its run timed out")
	}
	rep.Persist = rep.Persist || rep.Admit.Changed
	return rep
}
