package model

import "fmt"

// Check evaluates the spec's properties in s and returns the first that is false:
// P1-P4 over the history, and the structural invariants NoOrphanHold, PendingExact
// and CurrentEpoch. The names are the spec's.
func Check(s State) error {
	for r, run := range s.Runs {
		for k, eff := range run.Effects {
			for _, c := range eff.AdmitCtx {
				if anyTrue(c.Pending) {
					return fmt.Errorf("P1 violated: run %d key %d admitted while an approval was pending", r, k)
				}
				if c.Doomed {
					return fmt.Errorf("P2 violated: run %d key %d admitted after it was doomed", r, k)
				}
				if c.Status != RunActive || !c.Current {
					return fmt.Errorf("P4 violated: run %d key %d admitted with run %s, current epoch %v", r, k, c.Status, c.Current)
				}
			}
			if eff.Admits > 1 {
				return fmt.Errorf("P3 violated: run %d key %d admitted %d times", r, k, eff.Admits)
			}
			if eff.Status == EffHeld && (run.Status != RunActive || !anyTrue(run.Pending)) {
				return fmt.Errorf("NoOrphanHold violated: run %d key %d held without a pending approval of an active run", r, k)
			}
			if run.Pending[k] != (eff.Status == EffHeld && eff.Gated && !eff.Approved) {
				return fmt.Errorf("PendingExact violated: run %d key %d", r, k)
			}
			if live(eff.Status) && eff.Epoch != run.Epoch {
				return fmt.Errorf("CurrentEpoch violated: run %d key %d %s at epoch %d, run at %d", r, k, eff.Status, eff.Epoch, run.Epoch)
			}
		}
	}
	return nil
}
