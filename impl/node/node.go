package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/wal"
)

// Log is what a node needs of a write-ahead log; *wal.Log implements it.
type Log interface {
	// Append adds one record in order and returns its position. The node calls it
	// under its lock, so the log's order is the order the core applied the commands,
	// and reuses rec after it returns: the log keeps a copy.
	Append(rec []byte) (wal.LSN, error)
	// WaitDurable returns once every record up to lsn is on stable storage, or the
	// log's sticky error.
	WaitDurable(ctx context.Context, lsn wal.LSN) error
}

// Compactor is a Log that can replace the records up to a position with a snapshot
// of the state they built (*wal.Log); a node takes snapshots only on one.
type Compactor interface {
	Log
	BeginSnapshot(upto wal.LSN) (wal.SnapshotWriter, error)
}

// Limits of the node itself (the core has its own, in core.Limits).
const (
	// WaitersMaxDefault is Config.WaitersMax when it is 0.
	WaitersMaxDefault = 65536
	// deadlineRecheck bounds how long the deadline timer sleeps, so that a wall clock
	// that jumps forward still times runs out within it.
	deadlineRecheck = time.Second
)

// Config configures a node.
type Config struct {
	Limits core.Limits // the core's limits; zero: core.DefaultLimits()
	// Log makes the node durable: every state change is appended before its answer
	// is returned, and Durable waits for it. Nil keeps the state in memory only.
	Log Log
	// Now is the gate's clock in milliseconds; nil is the wall clock. The deadline
	// timer calls it from its own goroutine, so it must be safe for concurrent use.
	Now        func() core.Time
	Logger     *slog.Logger // nil: discard
	WaitersMax int          // admits waiting at once; 0: WaitersMaxDefault
	// SnapshotEvery: with a Log that is a Compactor, a snapshot is due once this many
	// records follow the last one, and as many as the last one held runs and effects
	// (so that each snapshot is paid for by as many records as it encodes). 0: none.
	SnapshotEvery uint64
	// SnapshotCheck is how often the snapshotter looks whether a snapshot is due; 0:
	// every second.
	SnapshotCheck time.Duration
	// Retention: a finished run that has not changed for this long is retired (its
	// id stays taken, the rest is forgotten). 0: runs are never retired.
	Retention time.Duration
	// OrderedIDs: run ids order in time (byte order), so a retirement moves the
	// core's watermark up to the run (core.Command.Upto) instead of listing its id:
	// retired runs then cost nothing, and an id below the watermark that was never
	// opened cannot be opened any more (docs/server.md, "Retention").
	OrderedIDs bool
	// RetireCheck is how often the node looks for runs to retire; 0: every second, or
	// every Retention if shorter.
	RetireCheck time.Duration
	// Trace, if set, gets one JSON line per step the core takes, per answer handed
	// back and per start (trace.go): what trace validation replays against the spec.
	// Nil costs nothing.
	Trace io.Writer
	// Audit, if set, records the changes the audit trail keeps (watch.go); a
	// snapshot waits for it before the log forgets the records it covers.
	Audit Audit
}

// The node's own refusals; the core's are *core.Error values in Answer.Err.
var (
	// ErrUnavailable: the log failed, and the node refuses every request until a
	// restart replays the log (fail closed).
	ErrUnavailable = errors.New("soundgate/node: unavailable")
	// ErrOverloaded: Config.WaitersMax admits already wait; nothing changed.
	ErrOverloaded = errors.New("soundgate/node: too many waiting admits")
	// ErrStopped: Stop was called; the node takes no more commands.
	ErrStopped = errors.New("soundgate/node: stopped")
)

// Node applies commands to the core, logs them and answers them. Create it with New
// or Recover; its methods are safe for concurrent use.
type Node struct {
	cfg Config
	log *slog.Logger
	now func() core.Time

	mu       sync.Mutex
	gate     *core.Gate
	lastLSN  wal.LSN // the last record appended: every answer waits until it is durable
	failed   error   // sticky: once set, every request is refused
	stopped  bool
	rec      []byte // scratch for encoding log records
	waiters  map[core.RunID][]*waiter
	nWaiters int
	pending  int                     // approvals pending in every run: gate.Pending(), kept by applyLocked
	wakes    []core.RunID            // runs whose waiting admits are to be asked again
	timer    *time.Timer             // the deadline timer (nil: none armed)
	timerGen uint64                  // its generation: a stale timer does nothing
	timerAt  core.Time               // the deadline it was armed for
	snap     *snapshotter            // nil: no snapshots
	ret      *retirer                // nil: runs are never retired
	onRetire func(core.RunID)        // OnRetire's: told of each retirement, under mu
	traceSeq uint64                  // the last step's number in the trace
	watchers map[uint64]func(Change) // Watch's
	watchSeq uint64
}

// New returns a node over an empty gate. cfg.Log, if any, must hold no records (use
// Recover for a log that does).
func New(cfg Config) *Node {
	g := core.New(limitsOf(cfg))
	traceRecovered(cfg, g, 0)
	return newNode(cfg, g, 0)
}

func limitsOf(cfg Config) core.Limits {
	if cfg.Limits == (core.Limits{}) {
		return core.DefaultLimits()
	}
	return cfg.Limits
}

// newNode returns a node over gate, whose last record is last.
func newNode(cfg Config, gate *core.Gate, last wal.LSN) *Node {
	cfg.Limits = limitsOf(cfg)
	if cfg.WaitersMax <= 0 {
		cfg.WaitersMax = WaitersMaxDefault
	}
	n := &Node{cfg: cfg, log: cfg.Logger, now: cfg.Now, gate: gate, lastLSN: last, waiters: map[core.RunID][]*waiter{},
		pending: gate.Pending()}
	if n.log == nil {
		n.log = slog.New(slog.DiscardHandler)
	}
	if n.now == nil {
		n.now = func() core.Time { return core.Time(time.Now().UnixMilli()) }
	}
	if c, ok := cfg.Log.(Compactor); ok && cfg.SnapshotEvery > 0 {
		n.snap = startSnapshotter(n, c)
	}
	if cfg.Retention > 0 {
		every := cfg.RetireCheck
		if every <= 0 {
			every = min(time.Second, cfg.Retention)
		}
		startRetirer(n, cfg.Retention, every)
	}
	n.mu.Lock()
	n.armLocked()
	n.mu.Unlock()
	return n
}

// Request is one command for the node, and what to do if it is an admit that may wait.
type Request struct {
	// Cmd is the command. Apply stamps Cmd.Now with the node's clock; an Open's
	// Cmd.Deadline is a time on that clock (see Now).
	Cmd core.Command
	// Wait, for an admit: a held answer waits up to this long for a decision, cancel,
	// fence or timeout of its run instead of being answered at once. 0: no wait.
	Wait time.Duration
	// Party is who waits: its waiting admits end, unanswered, when it leaves. A
	// request with Wait and no Party or no Done, or a Party that left, is answered
	// at once.
	Party *Party
	// Done receives the answer of an admit that waited (Answer.Parked). It is called
	// once, with the node's lock held: it must not block nor call the node.
	Done func(Answer)
}

// Answer is the node's answer to one Request.
type Answer struct {
	Reply core.Reply // the core's reply (zero when Err is the node's own refusal)
	// Err is the refusal: the core's (Reply.Err), or ErrUnavailable, ErrOverloaded or
	// ErrStopped, wrapped with why.
	Err error
	// After is the log position the answer rests on: it may be sent only once
	// Durable(After) returned nil. 0: nothing to wait for.
	After wal.LSN
	// Parked: the admit waits; its answer will come through Request.Done.
	Parked bool
}

// Apply applies one request: the core decides, the log records what changed, the
// run's waiting admits are asked again, and the answer says what it rests on.
func (n *Node) Apply(req Request) Answer {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := req.Cmd
	c.Now = n.now()
	waits := c.Op == core.OpAdmit && req.Wait > 0 && req.Party != nil && req.Done != nil && !req.Party.gone
	if err := n.refusalLocked(); err != nil {
		return Answer{Err: err}
	}
	if waits && n.nWaiters >= n.cfg.WaitersMax {
		// Refused before the core sees it: an exceeded limit changes nothing.
		return Answer{Err: fmt.Errorf("%w (%d)", ErrOverloaded, n.cfg.WaitersMax)}
	}
	rep, err := n.applyLocked(c)
	seq := n.traceSeq
	n.wakeLocked()
	if err != nil {
		n.traceDeliverLocked(seq, c.Op, rep, err)
		return Answer{Err: err}
	}
	if waits && rep.Err == nil && rep.Admit.Answer == core.AnswerHeld {
		n.parkLocked(c, req)
		return Answer{Parked: true}
	}
	n.traceDeliverLocked(seq, c.Op, rep, nil)
	return n.answerLocked(rep)
}

// answerLocked is the answer to a reply: every answer, a typed refusal of the core
// included (not_pending can rest on a decision still on its way to the disk), rests
// on the last record appended.
func (n *Node) answerLocked(rep core.Reply) Answer {
	return Answer{Reply: rep, Err: rep.Err, After: n.lastLSN}
}

// refusalLocked is the error every request gets while the node cannot take one.
func (n *Node) refusalLocked() error {
	switch {
	case n.failed != nil:
		return fmt.Errorf("%w: the gate refuses until restarted: %v", ErrUnavailable, n.failed)
	case n.stopped:
		return ErrStopped
	}
	return nil
}

// applyLocked is the one place that steps the core: it appends what changed to the
// log before anything can read it, and queues the wake-ups the reply asks for.
func (n *Node) applyLocked(c core.Command) (core.Reply, error) {
	if err := n.refusalLocked(); err != nil {
		return core.Reply{}, err
	}
	before := n.gate.PendingOf(c.Run) // a command changes its own run's approvals only
	tell := len(n.watchers) > 0 || n.cfg.Audit != nil
	var listed []core.Approval // for the watchers (watch.go)
	if tell {
		listed, _ = listBefore(n.gate, c)
	}
	rep := n.gate.Step(c)
	if rep.Persist {
		n.pending += n.gate.PendingOf(c.Run) - before
		// The trace line first: a process killed between the append and its line
		// would leave a durable record that no traced step wrote, where a line whose
		// record never reached the disk is a step a crash undid, as trace validation
		// allows of every record not yet durable.
		n.traceStepLocked(c, rep, n.nextLSNLocked())
		err := n.appendLocked(c)
		if err != nil {
			return core.Reply{}, err
		}
		if tell {
			n.tellLocked(c, rep, listed, before)
		}
	} else {
		n.traceStepLocked(c, rep, n.lastLSN)
	}
	if rep.Wake {
		n.wakes = append(n.wakes, c.Run)
	}
	if rep.Persist && c.Op != core.OpRetire {
		n.noteLocked(c.Run)
	}
	if rep.Persist && c.Op == core.OpRetire && n.onRetire != nil {
		n.onRetire(c.Run)
	}
	if c.Op == core.OpOpen && rep.Open.Created && c.Deadline > 0 {
		n.armLocked()
	}
	return rep, nil
}

// appendLocked logs c. A failed append fails the node closed: the core holds a
// change the log does not.
func (n *Node) appendLocked(c core.Command) error {
	if n.cfg.Log == nil {
		return nil
	}
	n.rec = core.AppendCommand(n.rec[:0], c)
	want := n.nextLSNLocked()
	lsn, err := n.cfg.Log.Append(n.rec)
	if err == nil && lsn != want { // the trace named want (a log numbers its records one by one)
		err = fmt.Errorf("soundgate/node: the log numbered a record %d, not %d", lsn, want)
	}
	if err != nil {
		n.failLocked(err)
		return n.refusalLocked()
	}
	n.lastLSN = lsn
	return nil
}

// nextLSNLocked is the position the next appended record gets: the one after the
// last (a node without a log appends nothing, and its answers rest on nothing).
func (n *Node) nextLSNLocked() wal.LSN {
	if n.cfg.Log == nil {
		return n.lastLSN
	}
	return n.lastLSN + 1
}

// OnRetire sets f to be told of each run the node retires, once its Retire is
// appended to the log, so that what is kept per run elsewhere (the server's quotas)
// can go with it. f is called with the node's lock held: it must not block nor call
// the node. It replaces an earlier f; nil: none. The retirements a recovery replays
// are not told.
func (n *Node) OnRetire(f func(core.RunID)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.onRetire = f
}

// Durable returns once the log holds every record up to lsn: an answer whose After
// is lsn may then be sent. If the log cannot make it durable, the node fails closed
// and Durable returns the refusal to send instead (D1, F1).
func (n *Node) Durable(lsn wal.LSN) error {
	if lsn == 0 || n.cfg.Log == nil {
		return nil
	}
	err := n.cfg.Log.WaitDurable(context.Background(), lsn)
	if err == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.failLocked(err)
	return n.refusalLocked()
}

// failLocked puts the node in its fail-closed state; waiting admits hear it now.
func (n *Node) failLocked(err error) {
	if n.failed != nil {
		return
	}
	n.failed = err
	n.log.Error("log failed: refusing every request until restart (fail closed)", "err", err)
	n.releaseAllLocked(n.refusalLocked())
}

// Fail puts the node in its fail-closed state for err, a failure outside its log
// (the audit trail could not write): every request is refused until a restart.
func (n *Node) Fail(err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.failLocked(err)
}

// Failed returns why the node refuses every request, or nil while it is healthy.
func (n *Node) Failed() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.failed
}

// Pending returns how many approvals are pending now, in every run.
func (n *Node) Pending() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.pending
}

// LastLSN returns the position of the last record the node appended or replayed.
func (n *Node) LastLSN() wal.LSN {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.lastLSN
}

// Now returns the node's clock: an Open's deadline is a time on it.
func (n *Node) Now() core.Time { return n.now() }

// Stop makes the node take no more commands: every waiting admit is answered
// ErrStopped now, every later request too, and deadlines no longer fire.
func (n *Node) Stop() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return
	}
	n.stopped = true
	n.stopTimerLocked()
	n.releaseAllLocked(ErrStopped)
}

// Close stops the node and waits for a snapshot in progress to give up, so that the
// log can be closed after it. It may be called more than once.
func (n *Node) Close() {
	n.Stop()
	n.stopRetirer()
	if n.snap != nil {
		n.snap.close()
	}
}

// Inspect calls fn with the gate, under the node's lock, for tests and tools that
// read the state. fn must not keep the gate nor change it.
func (n *Node) Inspect(fn func(g *core.Gate)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	fn(n.gate)
}
