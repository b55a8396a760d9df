package main

import (
	"os"
	"regexp"
	"testing"

	"github.com/soundgate/soundgate/tlacheck"
)

// mustViolateRE finds the invariant a broken variant's config says must fail: its
// second line, "must report a violation of NoLoss".
var mustViolateRE = regexp.MustCompile(`must report a violation of ([A-Za-z_][A-Za-z0-9_]*)`)

// TestBrokenVariantsFailTheirInvariant: each config of spec/tla/broken ends in a
// violation of the invariant its header names, not of another one (-all checks only
// that it ends in a violation).
func TestBrokenVariantsFailTheirInvariant(t *testing.T) {
	runs, err := findConfigs("../../spec/tla/broken", false)
	if err != nil || len(runs) == 0 {
		t.Fatalf("no broken configs: %v", err)
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			src, err := os.ReadFile(r.cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			m := mustViolateRE.FindSubmatch(src)
			if m == nil {
				t.Fatalf("%s does not say which invariant must fail (\"must report a violation of NAME\")", r.cfgPath)
			}
			spec, err := tlacheck.Load(r.tlaPath, r.cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			res, err := spec.Check(tlacheck.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tlacheck.InvariantViolated || res.Invariant != string(m[1]) {
				t.Errorf("outcome %v, invariant %q; the config says %s must fail", res.Outcome, res.Invariant, m[1])
			}
		})
	}
}
