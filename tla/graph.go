package tla

import (
	"bufio"
	"fmt"
	"io"
	"sort"
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
	// Edges are the distinct (from, to, label) transitions, by from, then production order.
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
	type key struct {
		from, to int
		label    string
	}
	seenEdge := map[key]bool{}
	e.onEdge = func(from, to int, label string) {
		k := key{from, to, label}
		if seenEdge[k] {
			return
		}
		seenEdge[k] = true
		c := e.c
		ed := Edge{From: from, To: to, Action: s.next.name}
		if c.labelDef != nil {
			ed.Action = c.labelDef.name
			ed.Args = append([]Value(nil), c.labelArgs...)
		}
		g.Edges = append(g.Edges, ed)
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
	sort.SliceStable(g.Edges, func(i, j int) bool { return g.Edges[i].From < g.Edges[j].From })
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
