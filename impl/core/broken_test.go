package core_test

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScenariosCatchBrokenCores builds each deliberately broken core (broken.go) and
// checks that the scenario file of the property it breaks fails: the scenarios are
// not only examples, each one would catch the violation it is named after.
func TestScenariosCatchBrokenCores(t *testing.T) {
	cases := []struct{ tag, file string }{
		{"broken_p1", "03_p1_hold_until_decided"},
		{"broken_p2", "04_p2_reject_cancels"},
		{"broken_p3", "05_p3_dedup_on_replay"},
		{"broken_p4", "06_p4_fence_on_cancel"},
	}
	failed := regexp.MustCompile(`--- FAIL: TestScenarios/(\S+)`)
	for _, tc := range cases {
		t.Run(tc.tag, func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command("go", "test", "-count=1", "-tags", tc.tag, "-run", "^TestScenarios$", ".").CombinedOutput()
			require.Error(t, err, "the %s core passed the scenarios:\n%s", tc.tag, out)
			var files []string
			for _, m := range failed.FindAllStringSubmatch(string(out), -1) {
				files = append(files, m[1])
			}
			require.Contains(t, files, tc.file, "the %s core was not caught by %s:\n%s", tc.tag, tc.file, out)
			t.Logf("%s caught by %s", tc.tag, strings.Join(files, ", "))
		})
	}
}

// TestInvariantTierCatchesBrokenP3: with the invariants tag, the core that admits a
// completed effect again (broken_p3) panics at the second admit, whatever test drives
// it: the assertion tier is a check of its own, not only the scenarios'.
func TestInvariantTierCatchesBrokenP3(t *testing.T) {
	out, err := exec.Command("go", "test", "-count=1", "-tags", "broken_p3,invariants", "-run", "^TestScenarios$", ".").CombinedOutput()
	require.Error(t, err, "the broken_p3 core passed with the invariant tier:\n%s", out)
	require.Contains(t, string(out), "admitted twice (P3)", "the invariant tier did not name the violation:\n%s", out)
}
