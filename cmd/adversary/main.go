// Command adversary attacks a real `soundgate serve` as an agent (or a process with
// no token) would, class by class, and prints one summary line: the probes tried,
// the escalations (a probe got what its role may not have) and the state changes (a
// probe changed what it must not), both 0 for a pass, and the operator's cancel
// latency while an agent floods the gate. Each class then runs against a build with
// its defence turned off (build tag adversary_weak_<defence>): that negative control
// must find at least one escalation or state change, or the class proves nothing.
//
//	go run ./cmd/adversary [-controls=false] [-work DIR]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/soundgate/soundgate/impl/server/servertest"
)

// class is one kind of attack; weak names the build tag whose build lacks the
// defence it attacks.
type class struct {
	name, weak string
	run        func(ctx context.Context, e *env) outcome
}

var classes = []class{
	{"flood-agent", "adversary_weak_reserve", floodAgent},
	{"flood-anonymous", "adversary_weak_admin", floodAnonymous},
	{"slow-hello", "adversary_weak_hello", slowHello},
	{"roles-file", "adversary_weak_roles", rolesFile},
	{"takeover", "adversary_weak_socket", takeover},
	{"display", "adversary_weak_display", display},
	{"quota", "adversary_weak_quota", quota},
	{"idle-agent", "adversary_weak_idle", idleAgent},
}

// outcome is what one class found.
type outcome struct {
	probes, escalations, stateChanges int
	notes                             []string        // what went wrong, for the report
	cancels                           []time.Duration // flood-agent: the operator's cancels
}

func (o *outcome) escalation(format string, a ...any) {
	o.escalations++
	o.notes = append(o.notes, fmt.Sprintf(format, a...))
}

func (o *outcome) stateChange(format string, a ...any) {
	o.stateChanges++
	o.notes = append(o.notes, fmt.Sprintf(format, a...))
}

// env is where a class runs: a binary and a fresh directory.
type env struct {
	bin, dir string
}

func main() {
	controls := flag.Bool("controls", true, "also run each class against its weakened build (the negative controls)")
	work := flag.String("work", "", "directory for the binaries and the gates (default: a temporary one, removed)")
	flag.Parse()
	os.Exit(run(*controls, *work))
}

func run(controls bool, work string) int {
	ctx := context.Background()
	if work == "" {
		dir, err := os.MkdirTemp("", "adversary")
		if err != nil {
			fmt.Fprintln(os.Stderr, "adversary:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		work = dir
	}
	began := time.Now()
	bin, err := servertest.Build(ctx, work)
	if err != nil {
		fmt.Fprintln(os.Stderr, "adversary:", err)
		return 1
	}
	total, failed := outcome{}, false
	var perClass []string
	for i, c := range classes {
		fmt.Fprintf(os.Stderr, "adversary: [%d/%d] %s\n", i+1, len(classes), c.name)
		o := c.run(ctx, &env{bin: bin, dir: mkdir(work, c.name)})
		perClass = append(perClass, fmt.Sprintf("%s %d", c.name, o.probes))
		total.probes += o.probes
		total.escalations += o.escalations
		total.stateChanges += o.stateChanges
		total.cancels = append(total.cancels, o.cancels...)
		for _, n := range o.notes {
			fmt.Fprintf(os.Stderr, "adversary: %s: %s\n", c.name, n)
			failed = true
		}
	}
	line := fmt.Sprintf("adversary: %d classes, %d probes (%s), escalations %d, state changes %d; operator cancel under an agent flood %s",
		len(classes), total.probes, strings.Join(perClass, ", "), total.escalations, total.stateChanges, latencies(total.cancels))
	if controls {
		caught, summary := runControls(ctx, work)
		line += fmt.Sprintf("; negative controls: %d of %d caught (%s)", caught, len(classes), summary)
		failed = failed || caught != len(classes)
	}
	line += fmt.Sprintf("; %.0fs", time.Since(began).Seconds())
	if failed {
		fmt.Println(line + "; FAILED")
		return 1
	}
	fmt.Println(line + "; ok")
	return 0
}

// runControls runs each class against its weakened build; a control is caught when
// the class finds an escalation or a state change there.
func runControls(ctx context.Context, work string) (caught int, summary string) {
	var parts []string
	for i, c := range classes {
		fmt.Fprintf(os.Stderr, "adversary: control [%d/%d] %s on %s\n", i+1, len(classes), c.name, c.weak)
		bin, err := servertest.Build(ctx, work, c.weak)
		if err != nil {
			fmt.Fprintln(os.Stderr, "adversary:", err)
			parts = append(parts, c.name+" not built")
			continue
		}
		o := c.run(ctx, &env{bin: bin, dir: mkdir(work, "control-"+c.name)})
		found := o.escalations + o.stateChanges
		if found > 0 {
			caught++
		} else {
			fmt.Fprintf(os.Stderr, "adversary: control %s found nothing on %s\n", c.name, c.weak)
		}
		parts = append(parts, fmt.Sprintf("%s %d", c.name, found))
	}
	return caught, strings.Join(parts, ", ")
}

func mkdir(parent, name string) string {
	dir := filepath.Join(parent, name)
	os.MkdirAll(dir, 0o700)
	return dir
}

// latencies prints p50/p99 and how many of the calls succeeded.
func latencies(ds []time.Duration) string {
	if len(ds) == 0 {
		return "n/a"
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	q := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return fmt.Sprintf("p50 %.2f ms p99 %.2f ms (%d cancels)", ms(q(0.5)), ms(q(0.99)), len(s))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
