package lincheck

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/soundgate/soundgate/model"
)

// Verdict is the checker's answer for one history.
type Verdict int

// The verdicts.
const (
	// Linearizable: some order of the operations, each placed between its call and
	// its return, is a sequence of model steps with exactly the recorded answers.
	Linearizable Verdict = iota
	// NotLinearizable: no such order exists: the server broke the contract.
	NotLinearizable
	// Inconclusive: the checker ran out of time; the history was not decided.
	Inconclusive
)

func (v Verdict) String() string {
	return [...]string{"linearizable", "NOT linearizable", "inconclusive (checker timeout)"}[v]
}

// Check decides whether ops is linearizable with respect to the model of a gate with
// the given keys per run. timeout 0 means no limit.
func Check(keys []string, ops []porcupine.Operation, timeout time.Duration) (Verdict, porcupine.LinearizationInfo) {
	res, info := porcupine.CheckOperationsVerbose(Model(keys), ops, timeout)
	switch res {
	case porcupine.Ok:
		return Linearizable, info
	case porcupine.Illegal:
		return NotLinearizable, info
	}
	return Inconclusive, info
}

func fails(keys []string, ops []porcupine.Operation, timeout time.Duration) bool {
	v, _ := Check(keys, ops, timeout)
	return v == NotLinearizable
}

// Shrink returns a small sub-history of a non-linearizable history that is still not
// linearizable. Every step keeps only what is sound to drop, so the small history
// fails only if the original does:
//
//  1. runs are independent: keep the smallest run whose own history fails;
//  2. truncate at the earliest time T that still fails: operations called after T go,
//     operations called before T and returning after it become unknown outcomes;
//  3. drop, one at a time, operations whose answer says they changed nothing (a
//     status, an error, a repeat, a denial, a duplicate) while it still fails.
func Shrink(keys []string, ops []porcupine.Operation, timeout time.Duration) []porcupine.Operation {
	best := ops
	for _, part := range partitionByRun(ops) {
		if len(part) < len(best) && fails(keys, part, timeout) {
			best = part
		}
	}
	// 2: truncation, by binary search over the return times (a failing T is kept).
	times := make([]int64, 0, len(best))
	for _, op := range best {
		times = append(times, op.Return)
	}
	slices.Sort(times)
	lo, hi := 0, len(times)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if fails(keys, truncate(best, times[mid]), timeout) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if t := truncate(best, times[hi]); fails(keys, t, timeout) {
		best = t
	}
	// 3: drop operations that changed nothing.
	for i := 0; i < len(best); {
		if !readOnly(best[i]) {
			i++
			continue
		}
		cand := slices.Delete(slices.Clone(best), i, i+1)
		if fails(keys, cand, timeout) {
			best = cand
		} else {
			i++
		}
	}
	return best
}

// truncate keeps the operations called at or before t; those still running at t
// become unknown outcomes that return after every other.
func truncate(ops []porcupine.Operation, t int64) []porcupine.Operation {
	var out []porcupine.Operation
	for _, op := range ops {
		if op.Call > t {
			continue
		}
		if op.Return > t {
			op.Output = Output{Unknown: true, Unbounded: true}
		}
		out = append(out, op)
	}
	closeUnknown(out)
	return out
}

// readOnly reports whether op's recorded answer means it changed nothing, so that
// dropping it only removes a constraint.
func readOnly(op porcupine.Operation) bool {
	in, out := op.Input.(Input), op.Output.(Output)
	switch {
	case out.Unknown:
		return false
	case out.Err != "", out.Repeat, in.Action == ActStatus:
		return true
	case in.Action == model.ActAdmit:
		return out.Admit == model.AnsDenied || out.Admit == model.AnsDuplicate
	case in.Action == model.ActOpen:
		return !out.Created
	}
	return false
}

// Report writes a failing history's evidence into dir: the porcupine visualization
// of the shrunk history (failure-N.html), of the whole one (failure-N-full.html) and
// the shrunk history as text (failure-N.txt). It returns the HTML path of the shrunk
// history.
func Report(dir string, n int, keys []string, full, shrunk []porcupine.Operation, timeout time.Duration) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	m := Model(keys)
	base := filepath.Join(dir, fmt.Sprintf("failure-%d", n))
	_, info := porcupine.CheckOperationsVerbose(m, shrunk, timeout)
	if err := porcupine.VisualizePath(m, info, base+".html"); err != nil {
		return "", err
	}
	_, infoFull := porcupine.CheckOperationsVerbose(m, full, timeout)
	if err := porcupine.VisualizePath(m, infoFull, base+"-full.html"); err != nil {
		return "", err
	}
	f, err := os.Create(base + ".txt")
	if err != nil {
		return "", err
	}
	defer f.Close()
	WriteHistory(f, keys, shrunk)
	return base + ".html", nil
}

// WriteHistory prints ops one per line, by call time: client, call and return (µs
// from the history's start), the request and the answer.
func WriteHistory(w io.Writer, keys []string, ops []porcupine.Operation) {
	sorted := slices.Clone(ops)
	slices.SortFunc(sorted, func(a, b porcupine.Operation) int { return int(a.Call - b.Call) })
	for _, op := range sorted {
		in, out := op.Input.(Input), op.Output.(Output)
		ret := fmt.Sprintf("%9.1f", float64(op.Return)/1e3)
		if out.Unbounded {
			ret = "     open"
		}
		fmt.Fprintf(w, "c%-3d %9.1f %s  %s\n", op.ClientId, float64(op.Call)/1e3, ret, describeOp(keys, in, out))
	}
}
