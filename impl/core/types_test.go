package core_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/stretchr/testify/require"
)

// TestNamesAndErrors: the contract's names parse to their values and nothing else
// does (the wire hands decisions and outcomes over as names); a value outside an
// enumeration prints "invalid" instead of crashing; Final is true exactly for
// cancelled and timed_out; a re-created error with the same code matches the
// exported one (the wire carries only the code).
func TestNamesAndErrors(t *testing.T) {
	for name, want := range map[string]core.Decision{"approve": core.Approve, "reject": core.Reject} {
		d, ok := core.ParseDecision(name)
		require.True(t, ok, name)
		require.Equal(t, want, d, name)
	}
	for name, want := range map[string]core.Outcome{"ok": core.OutcomeOK, "failed": core.OutcomeFailed} {
		o, ok := core.ParseOutcome(name)
		require.True(t, ok, name)
		require.Equal(t, want, o, name)
	}
	for _, bad := range []string{"", "Approve", "ok ", "none", "admit"} {
		_, ok := core.ParseDecision(bad)
		require.False(t, ok, "%q parsed as a decision", bad)
		_, ok = core.ParseOutcome(bad)
		require.False(t, ok, "%q parsed as an outcome", bad)
	}
	require.Equal(t, "timed_out", core.RunTimedOut.String())
	require.Equal(t, "retired", core.RunRetired.String())
	require.Equal(t, "invalid", core.RunStatus(5).String())
	require.Equal(t, "invalid", core.EffectStatus(6).String())
	require.Equal(t, "invalid", core.Outcome(3).String())
	for s, final := range map[core.RunStatus]bool{core.RunNone: false, core.RunActive: false,
		core.RunCancelled: true, core.RunTimedOut: true, core.RunRetired: false} {
		require.Equal(t, final, s.Final(), "%s", s)
	}
	require.ErrorIs(t, &core.Error{Code: "unknown_run"}, core.ErrUnknownRun)
	require.NotErrorIs(t, &core.Error{Code: "bad_epoch"}, core.ErrUnknownRun)
}

func TestErrorsAreTyped(t *testing.T) {
	for _, e := range core.Errors {
		require.True(t, strings.HasPrefix(e.Error(), "soundgate/core: "))
		require.True(t, errors.Is(fmt.Errorf("wrapped: %w", e), e))
		require.NotEmpty(t, e.Code)
	}
	require.False(t, errors.Is(core.ErrNotPending, core.ErrNotAdmitted))
}
