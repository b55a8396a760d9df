package core

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCutReleasesSavedState: a run keeps saved state only while the cut has not taken
// it; a step on a taken run saves nothing; End releases what is left, taken or not.
func TestCutReleasesSavedState(t *testing.T) {
	g := New(DefaultLimits())
	for r := 0; r < 3; r++ {
		g.Step(Command{Op: OpOpen, Run: RunID(fmt.Sprint("run-", r))})
	}
	admit := func(r int, k string) {
		rep := g.Step(Command{Op: OpAdmit, Run: RunID(fmt.Sprint("run-", r)), Key: Key(k), Epoch: 1})
		require.NoError(t, rep.Err)
	}
	cut := g.BeginCut()
	for r := 0; r < 3; r++ {
		admit(r, "a")
		require.NotNil(t, g.order[r].saved, "run %d changed during the cut", r)
	}
	require.True(t, cut.Take(1))
	require.Nil(t, g.order[0].saved, "a taken run keeps nothing")
	admit(0, "b")
	require.Nil(t, g.order[0].saved, "a step on a taken run saves nothing")
	require.NotNil(t, g.order[1].saved)
	cut.End()
	for r := 0; r < 3; r++ {
		require.Nil(t, g.order[r].saved, "run %d after End", r)
	}
}
