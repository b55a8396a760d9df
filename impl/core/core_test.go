package core_test

import (
	"fmt"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/stretchr/testify/require"
)

// TestCoreIsPure holds the core to its design: no I/O, no clock, no randomness, no locks.
func TestCoreIsPure(t *testing.T) {
	forbidden := map[string]bool{"time": true, "math/rand": true, "math/rand/v2": true, "os": true,
		"net": true, "sync": true, "io": true, "syscall": true, "unsafe": true, "log": true}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		pf, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range pf.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			require.Falsef(t, forbidden[path], "%s imports %s: the core must stay pure", f, path)
		}
		checked++
	}
	require.Greater(t, checked, 3)
}

// randomHistories calls f for seeds 1 to seeds with a new gate (default limits) and n
// random commands of that seed; stream keeps one test's histories apart from another's.
func randomHistories(seeds, stream uint64, n int, f func(seed uint64, g *core.Gate, cmds []core.Command)) {
	for seed := uint64(1); seed <= seeds; seed++ {
		f(seed, core.New(core.DefaultLimits()), randomCommands(rand.New(rand.NewPCG(seed, stream)), n))
	}
}

// randomCommands generates a command mix over few runs and keys, so that every action
// and answer is frequent.
func randomCommands(rng *rand.Rand, n int) []core.Command {
	runs := []core.RunID{"r1", "r2", "r3"}
	keys := []core.Key{"a", "b", "c", "d"}
	out := make([]core.Command, n)
	for i := range out {
		c := core.Command{Run: runs[rng.IntN(len(runs))], Key: keys[rng.IntN(len(keys))],
			Epoch: uint64(1 + rng.IntN(3)), Gated: rng.IntN(3) == 0, Now: core.Time(i)}
		switch rng.IntN(12) {
		case 0:
			c.Op, c.Deadline = core.OpOpen, core.Time(rng.IntN(3)*n/2)
		case 1, 2, 3, 4:
			c.Op = core.OpAdmit
			if rng.IntN(2) == 0 { // notes, which change no decision (note_test.go)
				c.Description = fmt.Sprint("effect ", c.Key, " at ", i)
			}
		case 5, 6:
			c.Op, c.Decision = core.OpDecide, core.Decision(1+rng.IntN(2))
			if rng.IntN(2) == 0 {
				c.Reason = fmt.Sprint("decided at ", i)
			}
		case 7:
			c.Op, c.Outcome, c.Result = core.OpComplete, core.Outcome(1+rng.IntN(2)), fmt.Sprint(rng.IntN(2))
		case 8:
			c.Op = core.OpCancel
		case 9:
			c.Op = core.OpFence
		case 10:
			c.Op = core.OpTimeout
		default:
			c.Op = core.OpStatus
			if rng.IntN(4) == 0 {
				c.Op, c.Upto = core.OpRetire, rng.IntN(3) == 0
			}
		}
		out[i] = c
	}
	return out
}
