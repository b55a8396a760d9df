// Command soundgate-bench drives a running gate with closed-loop load and prints
// admissions per second and latency percentiles: the load generator of
// ci/bench/durable.sh and ci/bench/memory.sh, kept out of the gate's own binary.
package main

import (
	"fmt"
	"os"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the load failed (connection, refusals)
	exitUsage   = 2 // bad flags
)

func main() { os.Exit(benchMain(os.Args[1:])) }

// fail prints the error and returns code.
func fail(code int, format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "soundgate-bench: "+format+"\n", a...)
	return code
}
