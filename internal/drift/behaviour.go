package drift

import (
	"os"
	"path/filepath"

	"github.com/soundgate/soundgate/tlacheck"
)

// BehaviourConfig is the model configuration on which the spec's behaviour at the base
// and now is compared, action by action.
const BehaviourConfig = "spec/tla/SoundGate_quick.cfg"

// BehaviourChanged returns, for each action of either side, whether its labelled
// edges (from-state, arguments, to-state) in the spec's state graph on
// BehaviourConfig differ between oldSrc and the spec now: a change of an action's
// text that leaves them equal is a refactor. When either side cannot be explored on
// the configuration, every action counts as changed, and err says why.
func BehaviourChanged(root, oldSrc string, cur *tlacheck.Operators) (map[string]bool, error) {
	all := func() map[string]bool {
		out := map[string]bool{}
		for _, a := range cur.Actions {
			out[a] = true
		}
		return out
	}
	cfg, err := os.ReadFile(filepath.Join(root, BehaviourConfig))
	if err != nil {
		return all(), err
	}
	curSrc, err := os.ReadFile(filepath.Join(root, SpecPath))
	if err != nil {
		return all(), err
	}
	a, err := actionEdges(oldSrc, string(cfg))
	if err != nil {
		return all(), err
	}
	b, err := actionEdges(string(curSrc), string(cfg))
	if err != nil {
		return all(), err
	}
	out := map[string]bool{}
	for _, action := range cur.Actions { // an action with no edge on either side too
		out[action] = !sameSet(a[action], b[action])
	}
	for _, m := range []map[string]map[string]bool{a, b} {
		for action := range m {
			out[action] = !sameSet(a[action], b[action])
		}
	}
	return out, nil
}

// actionEdges explores a spec and returns each action's edges as strings.
func actionEdges(src, cfg string) (map[string]map[string]bool, error) {
	spec, err := tlacheck.LoadSource(src, cfg)
	if err != nil {
		return nil, err
	}
	g, err := spec.Graph(tlacheck.GraphOptions{MaxStates: 1 << 20})
	if err != nil {
		return nil, err
	}
	names := make([]string, len(g.States))
	for i, s := range g.States {
		names[i] = s.String()
	}
	out := map[string]map[string]bool{}
	for _, e := range g.Edges {
		if out[e.Action] == nil {
			out[e.Action] = map[string]bool{}
		}
		out[e.Action][names[e.From]+" -"+e.Label()+"-> "+names[e.To]] = true
	}
	return out, nil
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
