// Command soundgate-escape runs the escape matrix of the sandbox (impl/sandbox/escape)
// with every layer on, then each negative control, then measures the sandbox's
// start-up, and prints one line per channel and control and a summary line last.
//
// It needs root, user namespaces, seccomp and Landlock ABI 6. Where the kernel lacks
// them it says so and exits 0, unless CI=true or SOUNDGATE_REQUIRE_KERNEL=1, where it
// exits 1. Any channel not closed as expected, or a control that catches nothing,
// exits 1.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/soundgate/soundgate/impl/sandbox"
	"github.com/soundgate/soundgate/impl/sandbox/escape"
	"golang.org/x/sys/unix"
)

func main() {
	sandbox.RunStageIfChild()
	escape.RunProbeIfChild()
	os.Exit(run())
}

func errName(e int) string {
	if e == 0 {
		return "success"
	}
	if n := unix.ErrnoName(syscall.Errno(e)); n != "" {
		return n
	}
	return fmt.Sprintf("errno %d", e)
}

func run() int {
	starts := flag.Int("starts", 10, "sandbox starts to time (each runs /bin/true)")
	flag.Parse()
	if code, ok := kernelReady(); !ok {
		return code
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Println("mediation: error:", err)
		return 1
	}
	k := sandbox.ProbeKernel()
	fmt.Printf("kernel: Landlock ABI %d (need %d), seccomp %v, user namespaces %v\n", k.LandlockABI, sandbox.LandlockABIMin, k.Seccomp, k.UserNS)

	rep, err := escape.Run(exe, sandbox.Layers{})
	if err != nil {
		fmt.Println("mediation: error:", err)
		return 1
	}
	fmt.Println("\nescape matrix, every layer on:")
	m := printMatrix(rep)

	fmt.Println("\nnegative controls, one layer off at a time:")
	caughtTotal, failedControls, err := runControls(exe)
	if err != nil {
		fmt.Println("mediation: error:", err)
		return 1
	}

	median, err := timeStarts(*starts)
	if err != nil {
		fmt.Println("mediation: error:", err)
		return 1
	}

	verdict := "ok"
	if m.bad > 0 || m.leaks > 0 || failedControls > 0 {
		verdict = "FAIL"
	}
	fmt.Printf("mediation: %d channels checked, %d blocked as expected, %d allowed doors ok, %d n/a, %d leaks, %d wrong; %d negative controls caught %d leaks or changes (%d failed); start median %v; %s\n",
		len(rep.Results), m.blocked, m.allowed, m.na, m.leaks, m.bad, len(escape.Controls), caughtTotal, failedControls, median.Round(time.Millisecond), verdict)
	if verdict != "ok" {
		return 1
	}
	return 0
}

// kernelReady reports whether the kernel and the user can run the sandbox; when
// not, it says so and returns the exit status (1 where the features are required).
func kernelReady() (int, bool) {
	required := os.Getenv("CI") == "true" || os.Getenv("SOUNDGATE_REQUIRE_KERNEL") == "1"
	err := sandbox.ProbeKernel().Check(sandbox.Layers{})
	if err == nil && os.Getuid() == 0 {
		return 0, true
	}
	if err == nil {
		err = fmt.Errorf("not root")
	}
	fmt.Printf("mediation: NOT CHECKED: %v\n", err)
	if required {
		return 1, false
	}
	return 0, false
}

// tally counts the matrix's results by verdict.
type tally struct{ blocked, allowed, na, bad, leaks int }

// printMatrix prints one line per channel of rep, then the proxy's log, and counts.
func printMatrix(rep *escape.Report) tally {
	var n tally
	for _, r := range rep.Results {
		verdict := "ok"
		switch {
		case r.NA:
			verdict, n.na = "n/a", n.na+1
		case !r.OK:
			verdict, n.bad = "FAIL", n.bad+1
		case r.Channel.Kind == escape.Blocked || r.Channel.Kind == escape.Killed:
			n.blocked++
		default:
			n.allowed++
		}
		if r.Leaked {
			n.leaks++
		}
		want, got := wantGot(r)
		fmt.Printf("  %-4s %-18s want %-40s got %-28s sink %d bytes  %s\n", verdict, r.Channel.Name, want, got, r.SinkBytes, r.Why)
	}
	for _, e := range rep.Events {
		fmt.Printf("  proxy log: %s\n", e)
	}
	return n
}

// wantGot says what channel r.Channel should give and what it gave.
func wantGot(r escape.Result) (want, got string) {
	got = errName(r.Attempt.Errno) + " at " + r.Attempt.Step
	want = errName(int(r.Channel.Want)) + " at " + r.Channel.At
	switch r.Channel.Kind {
	case escape.Killed:
		got, want = fmt.Sprintf("exit status %d", r.Attempt.Errno), fmt.Sprintf("killed by SIGSYS (status %d)", 128+int(syscall.SIGSYS))
		if r.NA {
			got = "not run"
		}
	case escape.Allowed:
		want = "success"
	case escape.Admitted:
		got, want = fmt.Sprintf("HTTP %d", r.Attempt.Status), "HTTP 200, upstream reached, logged admit"
	case escape.Refused:
		got, want = fmt.Sprintf("HTTP %d %q", r.Attempt.Status, r.Attempt.Body), "HTTP 403, upstream not reached, logged denied"
	}
	return want, got
}

// runControls runs every negative control and prints one line each; it returns the
// channels caught in all and the controls that failed.
func runControls(exe string) (caughtTotal, failedControls int, err error) {
	for _, c := range escape.Controls {
		crep, err := escape.Run(exe, c.Disable)
		if err != nil {
			return 0, 0, err
		}
		caught, err := escape.CheckControl(c, crep)
		caughtTotal += len(caught)
		status := "ok"
		if err != nil {
			status, failedControls = "FAIL", failedControls+1
		}
		var leaked []string
		for _, r := range crep.Results {
			if r.Leaked && r.SinkBytes > 0 {
				leaked = append(leaked, fmt.Sprintf("%s (%d bytes reached the host sink)", r.Channel.Name, r.SinkBytes))
			} else if r.Leaked {
				leaked = append(leaked, r.Channel.Name)
			}
		}
		fmt.Printf("  %-4s %-18s caught %d: %s; got past their call with it off: %s\n", status, c.Name, len(caught), strings.Join(caught, " "), strings.Join(leaked, " "))
		if err != nil {
			fmt.Printf("       %v\n", err)
		}
	}
	return caughtTotal, failedControls, nil
}

// timeStarts times n sandbox starts to the exit of /bin/true, prints the figures
// and returns the median.
func timeStarts(n int) (time.Duration, error) {
	var times []time.Duration
	for range n {
		t0 := time.Now()
		sb, err := sandbox.Start(sandbox.Config{Argv: []string{"true"}, Env: []string{"PATH=/usr/bin:/bin"}})
		if err != nil {
			return 0, err
		}
		if code, err := sb.Wait(); code != 0 || err != nil {
			return 0, fmt.Errorf("/bin/true in the sandbox: %d %v", code, err)
		}
		times = append(times, time.Since(t0))
	}
	slices.Sort(times)
	median := times[len(times)/2]
	fmt.Printf("\nsandbox start-up to exit of /bin/true: median %v, min %v, max %v over %d starts (shared machine: noisy)\n",
		median.Round(time.Millisecond), times[0].Round(time.Millisecond), times[len(times)-1].Round(time.Millisecond), len(times))
	return median, nil
}
