package mutation

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Passed reports whether the score reaches threshold (a fraction in [0, 1]). A run
// with nothing to score (for example --diff on a change that touched no code) passes.
func (rep *Report) Passed(threshold float64) bool {
	return rep.Scored == 0 || rep.Score >= threshold
}

// WriteSummary prints the figures, the operators, every survivor and timeout with
// its diff, and ends with one summary line.
func (rep *Report) WriteSummary(w io.Writer, name string, threshold float64) {
	rep.writeSetup(w, name)
	rep.writeOperators(w)
	rep.writeCounts(w, threshold)
	rep.writeMutants(w, StatusSurvived, "survivors")
	rep.writeMutants(w, StatusTimedOut, "timed out")
	rep.writeMutants(w, StatusNotViable, "not viable")
	unconfirmed := 0
	for _, m := range rep.Mutants {
		if m.Status == StatusSurvived && m.Mode == "schema" {
			unconfirmed++
		}
	}
	if unconfirmed > 0 {
		fmt.Fprintf(w, "  note: %d survivors were not confirmed alone (-no-confirm): triage figures only\n", unconfirmed)
	}
	verdict := "ok"
	if !rep.Passed(threshold) {
		verdict = fmt.Sprintf("FAIL: below %.1f%%", threshold*100)
	}
	c := rep.Counts
	fmt.Fprintf(w, "mutation %s: %d mutants, %d killed, %d survived, %d timed out, %d not viable, "+
		"%d equivalent, %d suppressed, score %s (threshold %.0f%%), %.0fs on %d workers, %s\n",
		name, len(rep.Mutants), c[StatusKilled], c[StatusSurvived], c[StatusTimedOut],
		c[StatusNotViable], c[StatusEquivalent], c[StatusSuppressed], pct(rep), threshold*100,
		rep.Seconds, rep.Workers, verdict)
}

// writeSetup prints the test command, the schema, the diff base and the timeout.
func (rep *Report) writeSetup(w io.Writer, name string) {
	skip := ""
	if rep.Skip != "" {
		skip = " -skip '" + rep.Skip + "'"
	}
	fmt.Fprintf(w, "mutation %s: test command: go test%s %s\n", name, skip, strings.Join(rep.TestPackages, " "))
	if rep.Schema != "" {
		fmt.Fprintf(w, "  schema: %s\n", rep.Schema)
	}
	if rep.DiffBase != "" {
		fmt.Fprintf(w, "  only lines changed since %s\n", rep.DiffBase)
	}
	fmt.Fprintf(w, "  baseline test binary %.2fs, per-mutant timeout %.1fs, %d workers\n",
		rep.BaselineSeconds, rep.TimeoutSeconds, rep.Workers)
}

// writeOperators prints, per operator that proposed an edit, what generation
// proposed and discarded, and how many mutants ran and were killed.
func (rep *Report) writeOperators(w io.Writer) {
	fmt.Fprintf(w, "  %-14s %9s %9s %9s %9s\n", "operator", "proposed", "discarded", "mutants", "killed")
	killedBy := map[Operator]int{}
	inRun := map[Operator]int{}
	for _, m := range rep.Mutants {
		inRun[m.Operator]++
		if m.Status == StatusKilled {
			killedBy[m.Operator]++
		}
	}
	for _, op := range Operators {
		if rep.Stats.Proposed[op] == 0 {
			continue
		}
		fmt.Fprintf(w, "  %-14s %9d %9d %9d %9d\n", op, rep.Stats.Proposed[op],
			rep.Stats.Discarded[op], inRun[op], killedBy[op])
	}
}

// writeCounts prints the count per outcome, the score and the stale suppressions.
func (rep *Report) writeCounts(w io.Writer, threshold float64) {
	c := rep.Counts
	fmt.Fprintf(w, "  killed      %5d\n", c[StatusKilled])
	fmt.Fprintf(w, "  survived    %5d\n", c[StatusSurvived])
	fmt.Fprintf(w, "  timed out   %5d   (run twice, counted as not killed)\n", c[StatusTimedOut])
	fmt.Fprintf(w, "  not viable  %5d   (did not build; not scored)\n", c[StatusNotViable])
	fmt.Fprintf(w, "  equivalent  %5d   (compiled code identical; not scored)\n", c[StatusEquivalent])
	fmt.Fprintf(w, "  suppressed  %5d   (reviewed, see suppression file; not scored)\n", c[StatusSuppressed])
	fmt.Fprintf(w, "  score       %s = killed / (killed + survived + timed out) = %d/%d, threshold %.1f%%\n",
		pct(rep), c[StatusKilled], rep.Scored, threshold*100)
	for _, id := range rep.StaleSuppressions {
		fmt.Fprintf(w, "  stale suppression (matches no mutant): %s\n", id)
	}
}

// writeMutants lists the mutants of status st under title, each with its diff.
func (rep *Report) writeMutants(w io.Writer, st Status, title string) {
	var ms []*Mutant
	for _, m := range rep.Mutants {
		if m.Status == st {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		return
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].File < ms[j].File })
	fmt.Fprintf(w, "%s (%d):\n", title, len(ms))
	for _, m := range ms {
		fmt.Fprintf(w, "  %s %s\n", m.Position(), m.ID)
		if m.Message != "" && st != StatusSurvived {
			fmt.Fprintf(w, "    %s\n", firstLine(m.Message))
		}
		for _, l := range strings.Split(strings.TrimRight(m.Diff, "\n"), "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
}

func pct(rep *Report) string {
	if rep.Scored == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", rep.Score*100)
}
