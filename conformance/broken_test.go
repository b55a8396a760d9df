package conformance

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestConformanceCatchesBrokenCores builds each deliberately broken core
// (impl/core/broken.go: broken_p1..broken_p4) and checks that both the exhaustive mode
// (a shortest trace) and the randomized mode (a trace gopter shrank) find it.
func TestConformanceCatchesBrokenCores(t *testing.T) {
	if *deep {
		t.Skip("the negative controls run in the quick configuration only; they ran in make test")
	}
	steps := regexp.MustCompile(`divergence after (\d+) operations`)
	dir := t.TempDir()
	for _, tag := range []string{"broken_p1", "broken_p2", "broken_p3", "broken_p4"} {
		t.Run(tag, func(t *testing.T) {
			t.Parallel()
			bin := filepath.Join(dir, tag+".test")
			if out, err := exec.Command("go", "test", "-c", "-tags", tag, "-o", bin, ".").CombinedOutput(); err != nil {
				t.Fatalf("build the %s test binary: %v\n%s", tag, err, out)
			}
			for _, mode := range []string{"TestExhaustive", "TestRandomCore"} {
				cmd := exec.Command(bin, "-test.run", "^"+mode+"$", "-conformance.seed=1", "-conformance.ops=20000")
				out, err := cmd.CombinedOutput()
				if err == nil {
					t.Fatalf("the %s core passed %s:\n%s", tag, mode, out)
				}
				m := steps.FindSubmatch(out)
				if m == nil {
					t.Fatalf("the %s core failed %s without a divergence trace:\n%s", tag, mode, out)
				}
				n, _ := strconv.Atoi(string(m[1]))
				t.Logf("%s found by %s with a trace of %d operations", tag, mode, n)
				if n > 12 {
					t.Errorf("trace of %d operations: not minimal enough to read\n%s", n, out)
				}
			}
		})
	}
}
