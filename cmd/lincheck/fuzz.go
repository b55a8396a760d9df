package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// fuzzMinimizeTime bounds go's minimization of each new interesting input: the
// default (60s) stalls the slower targets for minutes, during which go counts no
// executions.
const fuzzMinimizeTime = "100x"

var (
	execsRe   = regexp.MustCompile(`execs: (\d+)`)
	elapsedRe = regexp.MustCompile(`elapsed: ([0-9hms.]+)`)
)

// fuzzBudget is one target of -fuzz and what it may spend: its own budget when the
// flag named one (Target=100000x), else -fuzztime.
type fuzzBudget struct{ target, budget string }

// parseFuzzTargets reads -fuzz: comma-separated targets, each optionally with its own
// budget after '='. A count (Nx) is the budget make verify uses: see deadlineRace.
func parseFuzzTargets(list, fuzztime string) ([]fuzzBudget, error) {
	var out []fuzzBudget
	for _, item := range strings.Split(list, ",") {
		t, b, own := strings.Cut(strings.TrimSpace(item), "=")
		if !strings.HasPrefix(t, "Fuzz") {
			return nil, fmt.Errorf("-fuzz: %q is not a fuzz target (Fuzz..., optionally =budget)", item)
		}
		if !own {
			b = fuzztime
		}
		if b == "" {
			return nil, fmt.Errorf("-fuzz: %q has an empty budget", item)
		}
		out = append(out, fuzzBudget{t, b})
	}
	return out, nil
}

// deadlineRace reports whether a failed run's output is go 1.26's coordinator race
// rather than a finding: with a duration budget, the coordinator can report the
// end of its own deadline as a failure, "context deadline exceeded", with no input
// saved (golang/go#75804, fixed in go 1.27). It stays a failure (nothing says the
// run was otherwise clean); the message only tells the reader what it was and that
// a count budget (Nx), which has no deadline, avoids it.
func deadlineRace(out []byte, budget string) bool {
	return !strings.HasSuffix(budget, "x") &&
		bytes.Contains(out, []byte("\n    context deadline exceeded\n")) &&
		!bytes.Contains(out, []byte("Failing input written to"))
}

// runFuzz runs each target of ./fuzz for its budget, in turn, and prints the
// executions go reported for it, then one summary line. A failing target stops the
// run (go saved the input under fuzz/testdata/fuzz/<target>/: commit it as a
// regression seed).
func runFuzz(targets []fuzzBudget, logDir string) int {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "lincheck:", err)
		return 2
	}
	start := time.Now()
	var total int64
	var names, budgets []string
	for i, tb := range targets {
		t := tb.target
		names = append(names, t)
		budgets = append(budgets, t+"="+tb.budget)
		cmd := exec.Command("go", "test", "-run=^$", "-fuzz=^"+t+"$", "-fuzztime="+tb.budget,
			"-fuzzminimizetime="+fuzzMinimizeTime, "./fuzz/")
		out, err := cmd.CombinedOutput()
		logFile := filepath.Join(logDir, t+".log")
		os.WriteFile(logFile, out, 0o644)
		if err != nil {
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			fmt.Println(strings.Join(lines[max(0, len(lines)-30):], "\n"))
			if deadlineRace(out, tb.budget) {
				fmt.Printf("fuzz %s: FAILED at the end of its %s budget with no input saved: go 1.26's fuzz coordinator race (golang/go#75804), not a finding; a count budget (Nx) has no deadline and avoids it\n", t, tb.budget)
			} else {
				fmt.Printf("fuzz %s: FAILED (%v); log %s; the input is saved under fuzz/testdata/fuzz/%s/\n", t, err, logFile, t)
			}
			fmt.Printf("lincheck fuzz: FAILED in %s after %d targets passed\n", t, i)
			return 1
		}
		m := execsRe.FindAllSubmatch(out, -1)
		if len(m) == 0 || !bytes.Contains(out, []byte("fuzz: elapsed")) {
			fmt.Printf("fuzz %s: go printed no execution count (did it fuzz?); log %s\n", t, logFile)
			return 1
		}
		n, _ := strconv.ParseInt(string(m[len(m)-1][1]), 10, 64)
		el := elapsedRe.FindAllSubmatch(out, -1)
		elapsed := "?"
		if len(el) > 0 {
			elapsed = string(el[len(el)-1][1])
		}
		fmt.Printf("fuzz %s: %d execs in %s (as go reported), ok\n", t, n, elapsed)
		total += n
	}
	fmt.Printf("lincheck fuzz %s: %d targets, %d execs, budgets %s, %.0fs, 0 failures, ok\n",
		strings.Join(names, ","), len(targets), total, strings.Join(budgets, " "), time.Since(start).Seconds())
	return 0
}
