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
	required := os.Getenv("CI") == "true" || os.Getenv("SOUNDGATE_REQUIRE_KERNEL") == "1"
	if err := sandbox.ProbeKernel().Check(sandbox.Layers{}); err != nil || os.Getuid() != 0 {
		if err == nil {
			err = fmt.Errorf("not root")
		}
		fmt.Printf("mediation: NOT CHECKED: %v\n", err)
		if required {
			return 1
		}
		return 0
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
	var blocked, allowed, na, bad, leaks int
	for _, r := range rep.Results {
		verdict := "ok"
		switch {
		case r.NA:
			verdict, na = "n/a", na+1
		case !r.OK:
			verdict, bad = "FAIL", bad+1
		case r.Channel.Kind == escape.Blocked || r.Channel.Kind == escape.Killed:
			blocked++
		default:
			allowed++
		}
		if r.Leaked {
			leaks++
		}
		got := errName(r.Attempt.Errno) + " at " + r.Attempt.Step
		want := errName(int(r.Channel.Want)) + " at " + r.Channel.At
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
		fmt.Printf("  %-4s %-18s want %-40s got %-28s sink %d bytes  %s\n", verdict, r.Channel.Name, want, got, r.SinkBytes, r.Why)
	}
	for _, e := range rep.Events {
		fmt.Printf("  proxy log: %s\n", e)
	}

	fmt.Println("\nnegative controls, one layer off at a time:")
	caughtTotal, failedControls := 0, 0
	for _, c := range escape.Controls {
		crep, err := escape.Run(exe, c.Disable)
		if err != nil {
			fmt.Println("mediation: error:", err)
			return 1
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

	var times []time.Duration
	for range *starts {
		t0 := time.Now()
		sb, err := sandbox.Start(sandbox.Config{Argv: []string{"true"}, Env: []string{"PATH=/usr/bin:/bin"}})
		if err != nil {
			fmt.Println("mediation: error:", err)
			return 1
		}
		if code, err := sb.Wait(); code != 0 || err != nil {
			fmt.Printf("mediation: error: /bin/true in the sandbox: %d %v\n", code, err)
			return 1
		}
		times = append(times, time.Since(t0))
	}
	slices.Sort(times)
	median := times[len(times)/2]
	fmt.Printf("\nsandbox start-up to exit of /bin/true: median %v, min %v, max %v over %d starts (shared machine: noisy)\n",
		median.Round(time.Millisecond), times[0].Round(time.Millisecond), times[len(times)-1].Round(time.Millisecond), len(times))

	verdict := "ok"
	if bad > 0 || leaks > 0 || failedControls > 0 {
		verdict = "FAIL"
	}
	fmt.Printf("mediation: %d channels checked, %d blocked as expected, %d allowed doors ok, %d n/a, %d leaks, %d wrong; %d negative controls caught %d leaks or changes (%d failed); start median %v; %s\n",
		len(rep.Results), blocked, allowed, na, leaks, bad, len(escape.Controls), caughtTotal, failedControls, median.Round(time.Millisecond), verdict)
	if verdict != "ok" {
		return 1
	}
	return 0
}
