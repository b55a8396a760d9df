package core

// The state's memory budget (Limits.StateBytesMax): what StateBytes counts of a run
// and of an effect is its id, key, result and note bytes and a share for the
// structures that hold them, so that a state within the budget is within it in memory too, up to
// that share's accuracy (docs/server.md, "Limits").
const (
	runOverheadBytes    = 256 // a Run and its three maps, empty
	effectOverheadBytes = 96  // an entry of a run's effects map
)

func runBytes(id RunID) int64 { return int64(len(id)) + runOverheadBytes }

func effectBytes(k Key, e Effect) int64 {
	return int64(len(k)+len(e.Result)) + effectOverheadBytes + e.Note.bytes()
}

// StateBytes returns what the budget counts now: every run the gate holds and every
// effect of them.
func (g *Gate) StateBytes() int64 { return g.bytes }

// fits reports whether n more bytes keep the state within its budget; adding nothing
// always fits (a state restored under a smaller budget may be over it).
func (g *Gate) fits(n int64) bool { return n == 0 || g.bytes+n <= g.limits.StateBytesMax }

// countBytes is StateBytes computed from the state itself, one step per entry.
func countBytes(runs map[RunID]*Run) int64 {
	var n int64
	for _, run := range runs {
		n += run.bytes()
	}
	return n
}

// bytes is what the budget counts of run: its id and each effect.
func (run *Run) bytes() int64 {
	n := runBytes(run.ID)
	for k, e := range run.effects {
		n += effectBytes(k, e)
	}
	return n
}
