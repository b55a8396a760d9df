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

// runFuzz runs each target of ./fuzz for fuzztime, in turn, and prints the
// executions go reported for it, then one summary line. A failing target stops the
// run (go saved the input under fuzz/testdata/fuzz/<target>/: commit it as a
// regression seed).
func runFuzz(targets []string, fuzztime, logDir string) int {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "lincheck:", err)
		return 2
	}
	start := time.Now()
	var total int64
	for i, t := range targets {
		cmd := exec.Command("go", "test", "-run=^$", "-fuzz=^"+t+"$", "-fuzztime="+fuzztime,
			"-fuzzminimizetime="+fuzzMinimizeTime, "./fuzz/")
		out, err := cmd.CombinedOutput()
		logFile := filepath.Join(logDir, t+".log")
		os.WriteFile(logFile, out, 0o644)
		if err != nil {
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			fmt.Println(strings.Join(lines[max(0, len(lines)-30):], "\n"))
			fmt.Printf("fuzz %s: FAILED (%v); log %s; the input is saved under fuzz/testdata/fuzz/%s/\n", t, err, logFile, t)
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
	fmt.Printf("lincheck fuzz %s: %d targets, %d execs, %s each, %.0fs, 0 failures, ok\n",
		strings.Join(targets, ","), len(targets), total, fuzztime, time.Since(start).Seconds())
	return 0
}
