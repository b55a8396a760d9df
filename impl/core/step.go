package core

// Op names an action of the contract, as the log and the wire carry it.
type Op uint8

// The operations. OpStatus is read only and never logged.
const (
	OpOpen Op = iota + 1
	OpAdmit
	OpDecide
	OpComplete
	OpCancel
	OpFence
	OpTimeout
	OpStatus
)

var opNames = [...]string{"", "open", "admit", "decide", "complete", "cancel", "fence", "timeout", "status"}

// String returns the wire name of the operation ("admit", ...).
func (o Op) String() string { return enumName(opNames[:], int(o)) }

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
}

// Reply is the core's answer to one Command, and what the shell must do with it.
type Reply struct {
	// Err is the typed refusal, if any; then nothing changed and Persist is false.
	Err error

	// Persist reports that the command changed the state. The shell must append the
	// Command to its log and wait until it is durable BEFORE sending this reply, and
	// before answering any later request that read the state this command wrote
	// (durability D1: no answer rests on a decision that a crash could undo).
	Persist bool

	// Wake reports that parked admits of Command.Run may now get another answer
	// (a decision, cancel, fence or timeout of the run); the shell re-asks them AFTER
	// this command is durable.
	Wake bool

	Admit    AdmitResult    // OpAdmit
	Decide   DecideResult   // OpDecide
	Complete CompleteResult // OpComplete
	Open     OpenResult     // OpOpen
	Run      RunView        // OpCancel, OpFence, OpStatus, OpTimeout: the run after the action
	Effect   EffectView     // OpStatus with a key
}

// Step applies one command. It is the single entry point of the shell (server, log
// replay); the typed methods (Admit, Decide, ...) are the same actions for callers
// that hold a Gate directly.
func (g *Gate) Step(c Command) Reply {
	var rep Reply
	switch c.Op {
	case OpOpen:
		rep.Open, rep.Err = g.Open(c.Run, c.Deadline)
		rep.Persist = rep.Open.Created
	case OpAdmit:
		rep.Admit, rep.Err = g.Admit(c.Run, c.Key, c.Epoch, c.Gated, c.Now)
		rep.Persist = rep.Admit.Changed
		rep.Wake = rep.Admit.TimedOut
	case OpDecide:
		rep.Decide, rep.Err = g.Decide(c.Run, c.Key, c.Decision)
		rep.Persist = rep.Err == nil && !rep.Decide.Repeat
		rep.Wake = rep.Persist
	case OpComplete:
		rep.Complete, rep.Err = g.Complete(c.Run, c.Key, c.Outcome, c.Result)
		rep.Persist = rep.Err == nil && !rep.Complete.Repeat
	case OpCancel:
		var res CancelResult
		res, rep.Err = g.Cancel(c.Run)
		rep.Run, rep.Persist, rep.Wake = res.Run, res.Changed, res.Changed
	case OpFence:
		rep.Run, rep.Err = g.Fence(c.Run)
		rep.Persist, rep.Wake = rep.Err == nil, rep.Err == nil
	case OpTimeout:
		var changed bool
		changed, rep.Err = g.Timeout(c.Run)
		rep.Persist, rep.Wake = changed, changed
		if rep.Err == nil {
			rep.Run, _, _ = g.Status(c.Run, "")
		}
	case OpStatus:
		rep.Run, rep.Effect, rep.Err = g.Status(c.Run, c.Key)
	default:
		rep.Err = ErrInvalid
	}
	if rep.Err != nil {
		rep.Persist, rep.Wake = false, false
	}
	return rep
}
