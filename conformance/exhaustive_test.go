package conformance

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/model"
)

var (
	deep    = flag.Bool("conformance.deep", false, "use the deep configurations (make verify)")
	opsFlag = flag.Int64("conformance.ops", 0, "operations for the randomized modes (0: the mode's default)")
	seed    = flag.Int64("conformance.seed", 0, "seed of the randomized modes (0: from the clock, printed)")
	focusOn = flag.String("conformance.focus", "", "actions the randomized modes draw more often, comma separated (drift's rerun of touched actions)")
)

// quickSeed is the seed of the quick randomized modes, so that `make test` is
// reproducible; the deep modes of `make verify` draw a new seed each run (printed).
const quickSeed = 20261130

func defaultSeed() int64 {
	switch {
	case *seed != 0:
		return *seed
	case *deep:
		return time.Now().UnixNano()
	}
	return quickSeed
}

// total collects the counts of every mode, for the summary line TestMain prints.
var total = NewStats()

func TestMain(m *testing.M) {
	flag.Parse()
	if *focusOn != "" {
		if err := SetFocus(strings.Split(*focusOn, ",")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Printf("conformance: the random modes draw %s %d times as often\n", *focusOn, FocusFactor)
	}
	code := m.Run()
	fmt.Print(total.Report("total"))
	os.Exit(code)
}

// exhaustiveConfigs are the small domains of the exhaustive mode: quick ones for
// `make test`, larger ones with -conformance.deep.
func exhaustiveConfigs() []model.Config {
	quick := []model.Config{
		{Runs: []string{"r1"}, Keys: []string{"k1", "k2"}, MaxEpoch: 2},
		{Runs: []string{"r1", "r2"}, Keys: []string{"k1"}, MaxEpoch: 2},
	}
	if !*deep {
		return quick
	}
	return append(quick,
		model.Config{Runs: []string{"r1"}, Keys: []string{"k1", "k2", "k3"}, MaxEpoch: 3},
		model.Config{Runs: []string{"r1", "r2"}, Keys: []string{"k1", "k2"}, MaxEpoch: 2},
	)
}

// TestExhaustive: every operation from every reachable state of the model, on the core.
func TestExhaustive(t *testing.T) {
	t.Parallel() // with TestRandomCore: each takes one core for minutes in the deep mode
	for _, c := range exhaustiveConfigs() {
		t.Run(fmt.Sprintf("runs%d_keys%d_epochs%d", len(c.Runs), len(c.Keys), c.MaxEpoch), func(t *testing.T) {
			stats, d, err := Exhaustive(c, core.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			total.Add(stats)
			t.Log("\n" + stats.Report("exhaustive"))
			if d != nil {
				t.Fatalf("%v", d)
			}
			if m := stats.Missing(); len(m) > 0 {
				t.Fatalf("the exhaustive mode never reached: %v", m)
			}
			// Every reachable state was visited exactly once: the same count as the
			// model's own explorer (so the suite's state key is exact).
			res, err := model.Explore(c, model.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if stats.States != int64(res.Distinct) {
				t.Fatalf("visited %d states, the model has %d", stats.States, res.Distinct)
			}
			t.Logf("%d states, every operation from each", stats.States)
		})
	}
}
