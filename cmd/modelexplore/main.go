// Command modelexplore enumerates the reachable states of the Go model (package
// model) on the constants of a TLC .cfg of spec/tla/SoundGate.tla and prints its
// figures, counted as TLC counts them. The last line is one summary line.
//
//	go run ./cmd/modelexplore -config spec/tla/SoundGate_deep.cfg
//
// With -dump FILE it also writes the state graph in the TLA+ checker's dump format
// (docs/tla-graph.md); a dump keeps every state, so it ignores SYMMETRY, as the
// checker's dump does. It exits 1 on a bad config, 12 when a property of the spec is
// violated in the model (the trace is printed).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/soundgate/soundgate/model"
)

func main() {
	cfgPath := flag.String("config", "spec/tla/SoundGate_quick.cfg", "TLC .cfg whose constants to use")
	dump := flag.String("dump", "", "write the state graph to this file (ignores SYMMETRY)")
	noSym := flag.Bool("nosymmetry", false, "ignore SYMMETRY in the .cfg")
	maxStates := flag.Int("max-states", model.DefaultMaxStates, "stop after this many distinct states")
	flag.Parse()
	os.Exit(run(*cfgPath, *dump, *noSym, *maxStates))
}

func run(cfgPath, dump string, noSym bool, maxStates int) int {
	c, err := model.LoadCfg(cfgPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "modelexplore:", err)
		return 1
	}
	if noSym || dump != "" {
		c.Symmetry = false
	}
	fmt.Printf("model on %s: Runs %v, Keys %v, MaxEpoch %d, symmetry %v\n",
		cfgPath, c.Runs, c.Keys, c.MaxEpoch, c.Symmetry)
	res, err := model.Explore(c, model.Options{CheckInvariants: true, KeepGraph: dump != "", MaxStates: maxStates})
	name := strings.TrimSuffix(filepath.Base(cfgPath), ".cfg")
	var v *model.Violation
	switch {
	case errors.As(err, &v):
		fmt.Println(v.Error())
		fmt.Printf("model %s: property violated (%v)\n", name, v.Err)
		return 12
	case err != nil:
		fmt.Fprintln(os.Stderr, "modelexplore:", err)
		return 1
	}
	if dump != "" {
		f, err := os.Create(dump)
		if err == nil {
			err = res.Graph.WriteText(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "modelexplore:", err)
			return 1
		}
		fmt.Printf("graph written to %s\n", dump)
	}
	fmt.Printf("%d states generated, %d distinct states, %d edges, depth %d\n",
		res.Generated, res.Distinct, res.Edges, res.Depth)
	fmt.Printf("model %s: %d generated, %d distinct, %d edges, depth %d, %.1fs, P1-P4 and structure hold\n",
		name, res.Generated, res.Distinct, res.Edges, res.Depth, res.Elapsed.Seconds())
	return 0
}
