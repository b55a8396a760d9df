package tlacheck

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// GraphOptions bound a graph dump.
type GraphOptions struct {
	// MaxStates stops with ErrLimit beyond this many states (0: no limit).
	MaxStates int
}

// Edge is a labelled transition of the state graph.
type Edge struct {
	From, To int
	// Action is the action's operator name; Args its argument values.
	Action string
	Args   []Value
}

// Label is Action(arg, ...) or Action, as in the text dump.
func (e Edge) Label() string {
	if len(e.Args) == 0 {
		return e.Action
	}
	parts := make([]string, len(e.Args))
	for i, a := range e.Args {
		parts[i] = a.String()
	}
	return e.Action + "(" + strings.Join(parts, ", ") + ")"
}

// Graph is the reachable state graph of a spec (docs/tla-graph.md).
type Graph struct {
	// Vars are the variables, sorted by name.
	Vars []string
	// States are records [var |-> value], indexed by BFS discovery order.
	States []Value
	// Init are the indices of the initial states.
	Init []int
	// Edges are the distinct (from, to, label) transitions, by from, then production
	// order. Edges with the same label share their Args slice: do not modify it.
	Edges []Edge
}

// Graph explores the reachable states without symmetry reduction or invariant
// checks and returns them with every labelled edge.
func (s *Spec) Graph(opts GraphOptions) (*Graph, error) {
	e := s.newExplorer(Options{NoSymmetry: true, NoDeadlock: true, MaxStates: opts.MaxStates})
	saved := s.invariants
	s.invariants = nil
	defer func() { s.invariants = saved }()
	g := &Graph{Vars: s.Vars()}
	// Edges from one state are produced together (BFS expands one state at a time),
	// so duplicates are found with a per-state set; labels are interned.
	type labelInfo struct {
		action string
		args   []Value
	}
	labels := map[string]*labelInfo{}
	type key struct {
		to    int
		label *labelInfo
	}
	seenEdge := map[key]bool{}
	lastFrom := -1
	e.onEdge = func(from, to int, label string) {
		if from != lastFrom {
			clear(seenEdge)
			lastFrom = from
		}
		li := labels[label]
		if li == nil {
			c := e.c
			li = &labelInfo{action: s.next.name}
			if c.labelDef != nil {
				li.action = c.labelDef.name
				li.args = append([]Value(nil), c.labelArgs...)
			}
			labels[label] = li
		}
		k := key{to, li}
		if seenEdge[k] {
			return
		}
		seenEdge[k] = true
		g.Edges = append(g.Edges, Edge{From: from, To: to, Action: li.action, Args: li.args})
	}
	if _, err := e.run(); err != nil {
		return nil, err
	}
	for i, st := range e.states {
		g.States = append(g.States, s.stateRecord(st))
		if e.parent[i] == noParent {
			g.Init = append(g.Init, i)
		}
	}
	return g, nil
}

// WriteText writes the I/S/E text format of docs/tla-graph.md.
func (g *Graph) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, i := range g.Init {
		fmt.Fprintf(bw, "I %d\n", i)
	}
	for i, st := range g.States {
		fmt.Fprintf(bw, "S %d %s\n", i, st.String())
	}
	for _, e := range g.Edges {
		fmt.Fprintf(bw, "E %d %d %s\n", e.From, e.To, e.Label())
	}
	return bw.Flush()
}
