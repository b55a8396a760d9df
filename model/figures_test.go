package model

import (
	"os"
	"testing"
)

// tlcFigures are the figures that TLC 2.20 printed for spec/tla/SoundGate.tla on each
// config (docs/verify/spec.md has the commands, dates and full output lines). The
// model must reach exactly as many states, generated and distinct, at the same depth.
var tlcFigures = []struct {
	cfg             string
	generated       int64
	distinct, depth int
	deep            bool // minutes: only with MODEL_DEEP=1 (make verify)
}{
	{cfg: "SoundGate_quick.cfg", generated: 7581, distinct: 490, depth: 12},
	{cfg: "SoundGate_keys3.cfg", generated: 177588, distinct: 7090, depth: 17, deep: true},
	{cfg: "SoundGate_runs2.cfg", generated: 59585, distinct: 3136, depth: 15},
	{cfg: "SoundGate_deep.cfg", generated: 1889321, distinct: 61054, depth: 23, deep: true},
}

// TestTLCFigures explores the model on the constants of each config of the spec and
// compares its counts with TLC's.
func TestTLCFigures(t *testing.T) {
	for _, f := range tlcFigures {
		t.Run(f.cfg, func(t *testing.T) {
			if f.deep && os.Getenv("MODEL_DEEP") != "1" {
				t.Skip("deep config: set MODEL_DEEP=1 (make verify-model runs it)")
			}
			c, err := LoadCfg("../spec/tla/" + f.cfg)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Explore(c, Options{CheckInvariants: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Generated != f.generated || res.Distinct != f.distinct || res.Depth != f.depth {
				t.Errorf("model: %d generated, %d distinct, depth %d; TLC: %d generated, %d distinct, depth %d",
					res.Generated, res.Distinct, res.Depth, f.generated, f.distinct, f.depth)
			}
			t.Logf("%s: %d generated, %d distinct, %d edges, depth %d, %v",
				f.cfg, res.Generated, res.Distinct, res.Edges, res.Depth, res.Elapsed)
		})
	}
}
