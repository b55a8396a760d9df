package conformance

import (
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/model"
)

// Exhaustive explores the model's reachable states for c breadth-first and, from every
// state, applies every operation of model.OpsWide(c) to the model and to a node
// holding the same state (restored from a snapshot), comparing answers and abstract
// states. It returns the counts and the first divergence, with the shortest trace
// that reaches it.
func Exhaustive(c model.Config, limits core.Limits) (*Stats, *Divergence, error) {
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	type entry struct {
		s     model.State
		snap  []byte // the core in the same state
		trace []model.Op
	}
	ops := model.OpsWide(c)
	stats := NewStats()
	name := func(r string) core.RunID { return core.RunID(r) }
	init, _ := core.New(limits).MarshalBinary()
	cfg := node.Config{Limits: limits, Now: zeroClock}
	queue := []entry{{s: model.Init(c), snap: init}}
	seen := map[string]bool{model.Init(c).Key(): true}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		stats.States++
		for _, op := range ops {
			mAns, mNext, err := model.Apply(c, n.s, op)
			if err != nil {
				return stats, nil, err
			}
			nd, err := node.Restore(cfg, n.snap)
			if err != nil {
				return stats, nil, err
			}
			iAns := apply(nd, op, name(op.Run))
			trace := append(n.trace[:len(n.trace):len(n.trace)], op)
			stats.count(op, mAns)
			if d := compare(c, trace, mAns, mNext, iAns, abstractNode(c, nd, name)); d != nil {
				stats.Divergences++
				return stats, d, nil
			}
			if !model.Enabled(c, n.s, op, mAns) {
				continue
			}
			key := mNext.Key()
			if seen[key] {
				continue
			}
			seen[key] = true
			var snap []byte
			nd.Inspect(func(g *core.Gate) { snap, err = g.MarshalBinary() })
			if err != nil {
				return stats, nil, err
			}
			queue = append(queue, entry{s: mNext, snap: snap, trace: trace})
		}
	}
	return stats, nil, nil
}
