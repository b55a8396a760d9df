package conformance

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/commands"
	"github.com/leanovate/gopter/gen"

	"github.com/soundgate/soundgate/model"
)

// RandomConfig is the domain of the randomized modes: more names than the exhaustive
// mode can afford, epochs up to 4.
var RandomConfig = model.Config{Runs: []string{"r1", "r2", "r3"}, Keys: []string{"k1", "k2", "k3", "k4"}, MaxEpoch: 4}

// traceState is the model side of a trace: the model's state and the trace so far.
type traceState struct {
	s     model.State
	trace []model.Op
	ans   model.Answer // the model's answer to the trace's last operation
}

// String keeps gopter's report short: the trace is printed as the command sequence.
func (ts *traceState) String() string {
	return fmt.Sprintf("model state after %d operations", len(ts.trace))
}

// opCommand is one operation of a trace, for gopter's stateful testing.
type opCommand struct {
	c     model.Config
	op    model.Op
	stats *Stats
	mu    *sync.Mutex
}

type stepResult struct {
	ans   model.Answer
	state model.State
}

func (oc *opCommand) Run(sut commands.SystemUnderTest) commands.Result {
	impl := sut.(Impl)
	a := impl.Do(oc.op)
	return stepResult{ans: a, state: impl.Abstract(oc.c)}
}

func (oc *opCommand) NextState(st commands.State) commands.State {
	ts := st.(*traceState)
	ans, next, err := model.Apply(oc.c, ts.s, oc.op)
	if err != nil {
		panic(err)
	}
	return &traceState{s: next, trace: append(ts.trace[:len(ts.trace):len(ts.trace)], oc.op), ans: ans}
}

func (oc *opCommand) PreCondition(commands.State) bool { return true }

// PostCondition compares the implementation's answer and state with the model's
// (gopter calls it with the state after NextState, which carries the model's answer).
func (oc *opCommand) PostCondition(st commands.State, res commands.Result) *gopter.PropResult {
	ts := st.(*traceState)
	mAns := ts.ans
	r := res.(stepResult)
	oc.mu.Lock()
	oc.stats.count(oc.op, mAns)
	d := compare(oc.c, ts.trace, mAns, ts.s, r.ans, r.state)
	if d != nil {
		oc.stats.Divergences++
		if oc.stats.Smallest == nil || len(d.Trace) <= len(oc.stats.Smallest.Trace) {
			oc.stats.Smallest = d // shrinking only ever keeps failing candidates
		}
	}
	oc.mu.Unlock()
	if d != nil {
		return &gopter.PropResult{Status: gopter.PropFalse, Error: d}
	}
	return &gopter.PropResult{Status: gopter.PropTrue}
}

func (oc *opCommand) String() string { return oc.op.Label() }

// genOp generates the next operation from the model's state, weighted so that the
// interesting paths are common: admits at the run's current epoch (sometimes stale or
// ahead), decisions on pending keys, cancels, fences, timeouts, retirements and
// replays.
func genOp(c model.Config, st *traceState, stats *Stats, mu *sync.Mutex) gopter.Gen {
	g := opGen{c: c, st: st, stats: stats, mu: mu, runG: gen.IntRange(0, len(c.Runs)-1), keyG: gen.IntRange(0, len(c.Keys)-1)}
	openWeight := 4
	for _, run := range st.s.Runs {
		if run.Status == model.RunNone {
			openWeight += 10 // most operations on a run that was never opened are refused
		}
	}
	return gen.Weighted([]gen.WeightedGen{
		{Weight: weight(model.ActAdmit, 40), Gen: g.admit()},
		{Weight: weight(model.ActDecide, 14), Gen: g.decide()},
		{Weight: weight(model.ActComplete, 10), Gen: g.complete()},
		{Weight: weight(model.ActOpen, openWeight), Gen: g.runOp(model.ActOpen)},
		{Weight: weight(model.ActCancel, 4), Gen: g.runOp(model.ActCancel)},
		{Weight: weight(model.ActFence, 5), Gen: g.runOp(model.ActFence)},
		{Weight: weight(model.ActTimeout, 3), Gen: g.runOp(model.ActTimeout)},
		{Weight: weight(model.ActRetire, 3), Gen: g.retire()},
	})
}

// focus holds the actions whose operations the random modes draw FocusFactor times
// as often: drift's rerun of the actions a change touched (cmd/drift).
var focus = map[string]bool{}

// FocusFactor is how much more often a focused action is drawn.
const FocusFactor = 4

// SetFocus makes the random modes draw the operations of actions FocusFactor times
// as often; nil: the default mix. An unknown action is an error.
func SetFocus(actions []string) error {
	next := map[string]bool{}
	for _, a := range actions {
		if !slices.Contains(model.Actions, a) {
			return fmt.Errorf("conformance: focus on %q: not an action (%s)", a, strings.Join(model.Actions, ", "))
		}
		next[a] = true
	}
	focus = next
	return nil
}

func weight(action string, w int) int {
	if focus[action] {
		return w * FocusFactor
	}
	return w
}

// opGen makes the generators of genOp, each drawing a run and a key index from runG
// and keyG and choosing from the model's state st.
type opGen struct {
	c          model.Config
	st         *traceState
	stats      *Stats
	mu         *sync.Mutex
	runG, keyG gopter.Gen
}

func (g opGen) mk(op model.Op) commands.Command {
	return &opCommand{c: g.c, op: op, stats: g.stats, mu: g.mu}
}

// admit: at the run's epoch, sometimes one behind (stale) or one ahead; gated about
// one time in four.
func (g opGen) admit() gopter.Gen {
	return gopter.CombineGens(g.runG, g.keyG, gen.IntRange(0, 9), gen.Bool()).Map(func(v []any) commands.Command {
		r, k, pick, gated := v[0].(int), v[1].(int), v[2].(int), v[3].(bool)
		e := max(g.st.s.Runs[r].Epoch, 1)
		switch pick {
		case 0:
			e-- // stale (or 0 when the run is new: invalid)
		case 1:
			e++ // ahead: bad_epoch
		}
		gated = gated && pick < 5
		return g.mk(model.Op{Action: model.ActAdmit, Run: g.c.Runs[r], Key: g.c.Keys[k], Epoch: e, Gated: gated})
	})
}

// decide: approve or (one in three) reject, preferably a pending key.
func (g opGen) decide() gopter.Gen {
	return gopter.CombineGens(g.runG, g.keyG, gen.IntRange(0, 2)).Map(func(v []any) commands.Command {
		r, k, d := v[0].(int), v[1].(int), v[2].(int)
		k = g.decideKey(r, k)
		dec := model.Approve
		if d == 0 {
			dec = model.Reject
		}
		return g.mk(model.Op{Action: model.ActDecide, Run: g.c.Runs[r], Key: g.c.Keys[k], Decision: dec})
	})
}

// decideKey returns the first pending key of run r from k on; else the first one
// already decided, so that repeated decisions (a retry after a lost answer) are
// common too; else k.
func (g opGen) decideKey(r, k int) int {
	pick := -1
	for j := range g.c.Keys {
		kk := (k + j) % len(g.c.Keys)
		if g.st.s.Runs[r].Pending[kk] {
			return kk
		}
		if e := g.st.s.Runs[r].Effects[kk]; pick < 0 && (e.Approved || e.Status == model.EffRejected) {
			pick = kk
		}
	}
	if pick >= 0 {
		return pick
	}
	return k
}

// complete: OK or failed, preferably an admitted or completed key: completions,
// repeats and conflicts.
func (g opGen) complete() gopter.Gen {
	return gopter.CombineGens(g.runG, g.keyG, gen.Bool()).Map(func(v []any) commands.Command {
		r, k := v[0].(int), v[1].(int)
		o := model.OK
		if v[2].(bool) {
			o = model.Failed
		}
		for j := range g.c.Keys {
			kk := (k + j) % len(g.c.Keys)
			if st := g.st.s.Runs[r].Effects[kk].Status; st == model.EffAdmitted || st == model.EffCompleted {
				k = kk
				break
			}
		}
		return g.mk(model.Op{Action: model.ActComplete, Run: g.c.Runs[r], Key: g.c.Keys[k], Outcome: o})
	})
}

// runOp: action on a random run.
func (g opGen) runOp(action string) gopter.Gen {
	return g.runG.Map(func(r int) commands.Command { return g.mk(model.Op{Action: action, Run: g.c.Runs[r]}) })
}

// retire: on a random run, one time in three with the watermark (RetireUpto).
func (g opGen) retire() gopter.Gen {
	return gopter.CombineGens(g.runG, gen.IntRange(0, 2)).Map(func(v []any) commands.Command {
		return g.mk(model.Op{Action: model.ActRetire, Run: g.c.Runs[v[0].(int)], Upto: v[1].(int) == 0})
	})
}

// Commands returns gopter's description of the conformance property for c: traces of
// operations on a fresh implementation from newImpl, compared step by step.
func Commands(c model.Config, newImpl func() Impl, stats *Stats) *commands.ProtoCommands {
	mu := &sync.Mutex{}
	return &commands.ProtoCommands{
		NewSystemUnderTestFunc: func(commands.State) commands.SystemUnderTest { return newImpl() },
		InitialStateGen:        gen.Const(&traceState{s: model.Init(c)}),
		InitialPreConditionFunc: func(st commands.State) bool {
			return len(st.(*traceState).trace) == 0
		},
		GenCommandFunc: func(st commands.State) gopter.Gen { return genOp(c, st.(*traceState), stats, mu) },
	}
}

// Describe names a trace for failure messages.
func Describe(seed int64, mode string) string {
	return fmt.Sprintf("replay: go test ./conformance -run %s -args -conformance.seed=%d", mode, seed)
}
