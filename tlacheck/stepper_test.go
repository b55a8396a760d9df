package tlacheck

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStepper: single named steps of SoundGate from its initial state, answers
// evaluated in the states between, and a disabled action with no successor.
func TestStepper(t *testing.T) {
	src, err := os.ReadFile("../spec/tla/SoundGate.tla")
	require.NoError(t, err)
	spec, err := LoadSource(string(src), "CONSTANTS Runs = {r1, r2}\nKeys = {k1}\nMaxEpoch = 3\nINIT Init\nNEXT Next\n")
	require.NoError(t, err)
	st := spec.Stepper()
	inits, err := st.Init()
	require.NoError(t, err)
	require.Len(t, inits, 1)
	runs, ok := st.Constant("Runs")
	require.True(t, ok)
	r1, k1 := runs.Elems()[0], ModelValue("k1")
	require.Equal(t, "r1", r1.ModelName())

	step := func(from State, name string, args ...Value) State {
		t.Helper()
		next, err := st.Step(from, name, args...)
		require.NoError(t, err)
		require.Len(t, next, 1, "%s is deterministic", name)
		return next[0]
	}
	s := inits[0]
	a, err := st.Eval(s, "AdmitAnswer", r1, k1, Int(1), Bool(false))
	require.NoError(t, err)
	require.Equal(t, `[answer |-> "error", reason |-> "unknown_run"]`, a.String())
	none, err := st.Step(s, "Admit", r1, k1, Int(1), Bool(false))
	require.NoError(t, err)
	require.Empty(t, none, "Admit of an unknown run is not enabled")

	s = step(s, "Open", r1)
	status, _ := st.Var(s, "runStatus")
	require.Equal(t, `(r1 :> "active" @@ r2 :> "none")`, status.String())
	s = step(s, "Admit", r1, k1, Int(1), Bool(true))
	eff, _ := st.Var(s, "effStatus")
	require.Equal(t, `(r1 :> (k1 :> "held") @@ r2 :> (k1 :> "absent"))`, eff.String())
	a, err = st.Eval(s, "DecideAnswer", r1, k1, Str("approve"))
	require.NoError(t, err)
	require.Equal(t, `"decided"`, a.String())
	s = step(s, "Decide", r1, k1, Str("approve"))
	eff, _ = st.Var(s, "effStatus")
	require.Equal(t, `(r1 :> (k1 :> "released") @@ r2 :> (k1 :> "absent"))`, eff.String())

	_, err = st.Step(s, "Admit", r1)
	require.ErrorContains(t, err, "Admit takes 4 arguments, not 1")
	_, err = st.Eval(s, "Admit", r1, k1, Int(1), Bool(true))
	require.ErrorContains(t, err, "is an action")
	_, err = st.Step(s, "Nope")
	require.ErrorContains(t, err, "no definition Nope")
}
