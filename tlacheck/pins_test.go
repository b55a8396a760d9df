package tlacheck

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const pinModule = `---- MODULE P ----
EXTENDS Naturals
VARIABLES x, y
Small(n) == n < 3
Inc == /\ Small(x)
       /\ x' = x + 1
       /\ UNCHANGED y
Reset == x' = 0 /\ y' = y
Pick == /\ x' = x
        /\ \/ y' = 1
           \/ y' = 2
Unused == 7
Next == Inc \/ Reset \/ Pick \/ Small(x)
====
`

// TestPins groups what a pin must and must not see.
func TestPins(t *testing.T) {
	base := mustOps(t, pinModule)
	require.Equal(t, []string{"Inc", "Reset", "Pick"}, base.Actions, "Small is named by Next but changes nothing")
	require.Equal(t, []string{"Inc", "Small"}, base.Closure("Inc"))
	require.Len(t, base.Pin("Inc"), 12)
	require.Empty(t, base.Pin("Nope"))
	for _, tc := range []struct {
		name, old, new string
		stale          []string // actions whose pins change; the others must not
	}{
		{"whitespace", "Reset == x' = 0 /\\ y' = y", "Reset ==   x' = 0\n   /\\ y' = y", nil},
		{"a comment", "Unused == 7", "\\* a note\nUnused == 7 (* another *)", nil},
		{"an operator no action reaches", "Unused == 7", "Unused == 8", nil},
		{"a guard weakened", "/\\ Small(x)\n", "/\\ TRUE\n", []string{"Inc"}},
		{"a helper an action reaches", "n < 3", "n < 4", []string{"Inc"}},
		{"an update", "x' = 0 /\\", "x' = 1 /\\", []string{"Reset"}},
		// The same tokens, another tree: the second disjunct moved under the outer
		// list's bullets ends the inner list, so it is a disjunct of the whole action.
		{"a junction's layout", "           \\/ y' = 2", "        \\/ y' = 2", []string{"Pick"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Contains(t, pinModule, tc.old)
			src := strings.Replace(pinModule, tc.old, tc.new, 1)
			ops, err := ParseOperators(src)
			require.NoError(t, err, src)
			var stale []string
			for _, a := range base.Actions {
				if ops.Pin(a) != base.Pin(a) {
					stale = append(stale, a)
				}
			}
			require.Equal(t, tc.stale, stale)
		})
	}
}

// TestSoundGateActions: the spec's actions are the eight Next names.
func TestSoundGateActions(t *testing.T) {
	src, err := os.ReadFile("../spec/tla/SoundGate.tla")
	require.NoError(t, err)
	ops := mustOps(t, string(src))
	require.Equal(t, []string{"Open", "Admit", "Decide", "Complete", "Cancel", "Fence", "Timeout", "Retire"}, ops.Actions)
	require.Contains(t, ops.Closure("Retire"), "Finished")
}

func mustOps(t *testing.T, src string) *Operators {
	t.Helper()
	ops, err := ParseOperators(src)
	require.NoError(t, err)
	return ops
}
