package model

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// DefaultMaxStates bounds the explorer's distinct states unless Options says otherwise.
const DefaultMaxStates = 5_000_000

// ErrTooManyStates: the exploration reached Options.MaxStates.
var ErrTooManyStates = fmt.Errorf("soundgate/model: state limit reached")

// StepFunc is one step of a Next relation: the successor of s by op, and whether
// there is such a step. Step is the spec's; a test can pass an altered one.
type StepFunc func(c Config, s State, op Op) (State, bool)

// Options tunes Explore.
type Options struct {
	// MaxStates stops the search with ErrTooManyStates; 0 means DefaultMaxStates.
	MaxStates int
	// KeepGraph keeps every state's text and every edge in Result.Graph.
	KeepGraph bool
	// CheckInvariants evaluates Check on every distinct state; a violation stops the
	// search with a *Violation.
	CheckInvariants bool
	// Step replaces the spec's Step (nil: Step).
	Step StepFunc
}

// Edge is one labelled edge of the graph, between state indices.
type Edge struct {
	From, To int
	Label    string
}

// Graph is the reachable state graph: States[i] is the text of the state discovered
// i-th in breadth-first order (under symmetry, of its class's first member), Init the
// initial states, Edges one per distinct (from, to, label) in production order.
type Graph struct {
	States []string
	Init   []int
	Edges  []Edge
}

// WriteText writes g in the TLA+ checker's dump format (docs/tla-graph.md).
func (g *Graph) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, i := range g.Init {
		fmt.Fprintf(&b, "I %d\n", i)
	}
	for i, s := range g.States {
		fmt.Fprintf(&b, "S %d %s\n", i, s)
	}
	for _, e := range g.Edges {
		fmt.Fprintf(&b, "E %d %d %s\n", e.From, e.To, e.Label)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Result holds the figures of one exploration, counted as TLC counts them.
type Result struct {
	// Generated counts the initial states and every successor produced, duplicates
	// and stuttering steps included.
	Generated int64
	// Distinct counts distinct states (orbits under symmetry).
	Distinct int
	// Edges counts distinct (from, to, label) edges between distinct states.
	Edges int64
	// Depth is the number of states on the longest shortest path from an initial
	// state (an initial state alone has depth 1).
	Depth   int
	Elapsed time.Duration
	Graph   *Graph // only with Options.KeepGraph
}

// TraceStep is one state of a counterexample: the label of the step that reached it
// ("Init" for the first) and the state's text.
type TraceStep struct {
	Label string
	State string
}

// Violation is a state whose Check failed, with the shortest path to it.
type Violation struct {
	Err   error
	Trace []TraceStep
}

// Error names the violated property and prints the trace, one state a line.
func (v *Violation) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "soundgate/model: %v after %d steps", v.Err, len(v.Trace)-1)
	for i, t := range v.Trace {
		fmt.Fprintf(&b, "\n  %d %s\n    %s", i, t.Label, t.State)
	}
	return b.String()
}

// Unwrap returns the property's error.
func (v *Violation) Unwrap() error { return v.Err }

// Explore enumerates the states reachable from Init by breadth-first search.
func Explore(c Config, opt Options) (*Result, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if opt.MaxStates == 0 {
		opt.MaxStates = DefaultMaxStates
	}
	step := opt.Step
	if step == nil {
		step = Step
	}
	start := time.Now()
	x := &explorer{c: c, opt: opt, cz: newCanonicalizer(c), res: &Result{}, index: map[string]int{}}
	ops := Ops(c)
	if opt.KeepGraph {
		x.res.Graph = &Graph{}
	}
	x.res.Generated++
	i0, err := x.add(Init(c), -1, "Init")
	if err != nil {
		return nil, err
	}
	if x.res.Graph != nil {
		x.res.Graph.Init = []int{i0}
	}
	if err := x.search(step, ops); err != nil {
		return x.res, err
	}
	x.res.Distinct = len(x.index)
	x.res.Elapsed = time.Since(start)
	return x.res, nil
}

// explorer is one breadth-first search: the states discovered, by key, and how each
// was first reached.
type explorer struct {
	c        Config
	opt      Options
	cz       canonicalizer
	res      *Result
	index    map[string]int // a state's key: its index, in order of discovery
	parent   []int          // parent[i]: index of the state i was discovered from, -1 at Init
	parentOp []string       // the label of that step
	level    []int          // level[i]: the depth of state i
	queue    []queued       // discovered, successors not yet generated
}

type queued struct {
	idx int
	s   State
}

// search generates the successors of every queued state by every operation, in
// breadth-first order, until none is left.
func (x *explorer) search(step StepFunc, ops []Op) error {
	for len(x.queue) > 0 {
		it := x.queue[0]
		x.queue = x.queue[1:]
		for _, op := range ops {
			t, ok := step(x.c, it.s, op)
			if !ok {
				continue
			}
			x.res.Generated++
			j, err := x.add(t, it.idx, op.Label())
			if err != nil {
				return err
			}
			x.res.Edges++
			if x.res.Graph != nil {
				x.res.Graph.Edges = append(x.res.Graph.Edges, Edge{From: it.idx, To: j, Label: op.Label()})
			}
		}
	}
	return nil
}

// add returns the index of s's class, discovering it (reached from state from by
// label) if it is new: then it is queued, and checked with Options.CheckInvariants.
func (x *explorer) add(s State, from int, label string) (int, error) {
	key := x.cz.key(s)
	if i, ok := x.index[key]; ok {
		return i, nil
	}
	if len(x.index) >= x.opt.MaxStates {
		return 0, fmt.Errorf("%w: %d", ErrTooManyStates, x.opt.MaxStates)
	}
	i := len(x.index)
	x.index[key] = i
	x.parent = append(x.parent, from)
	x.parentOp = append(x.parentOp, label)
	lv := 1
	if from >= 0 {
		lv = x.level[from] + 1
	}
	x.level = append(x.level, lv)
	x.res.Depth = max(x.res.Depth, lv)
	if x.res.Graph != nil {
		x.res.Graph.States = append(x.res.Graph.States, s.Text(x.c))
	}
	x.queue = append(x.queue, queued{i, s})
	if x.opt.CheckInvariants {
		if err := Check(s); err != nil {
			return 0, &Violation{Err: err, Trace: trace(x.c, x.res, x.parent, x.parentOp, i, s)}
		}
	}
	return i, nil
}

// trace rebuilds the shortest path to state i. Without a kept graph the earlier
// states' texts are not stored, so only the labels and the last state are shown.
func trace(c Config, res *Result, parent []int, parentOp []string, i int, last State) []TraceStep {
	var rev []TraceStep
	for j := i; j >= 0; j = parent[j] {
		st := ""
		if res.Graph != nil {
			st = res.Graph.States[j]
		}
		if j == i {
			st = last.Text(c)
		}
		rev = append(rev, TraceStep{Label: parentOp[j], State: st})
	}
	out := make([]TraceStep, len(rev))
	for k := range rev {
		out[k] = rev[len(rev)-1-k]
	}
	return out
}
