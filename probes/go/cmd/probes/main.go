// Command probes runs the Go barrier probes and writes one JSON result per
// probe run.
//
//	go run ./cmd/probes [-variant unmodified|mediated|all] [-repeat N] [-only NAME] [-out DIR] [-quiet]
//
// Each run prints its verdict, the rule applied and the timestamped event log;
// the verdict comes from harness.Apply, never from the probe.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/soundgate/soundgate/probes/go/frameworks/adk"
	"github.com/soundgate/soundgate/probes/go/frameworks/eino"
	"github.com/soundgate/soundgate/probes/go/frameworks/genkit"
	"github.com/soundgate/soundgate/probes/go/harness"
)

// probeTimeout bounds one probe run.
const probeTimeout = 20 * time.Second

// options are the command's flags.
type options struct {
	variants []string
	repeat   int
	only     string
	out      string
	quiet    bool
}

func parseFlags() options {
	variant := flag.String("variant", "all", "unmodified, mediated or all")
	repeat := flag.Int("repeat", 1, "runs of each probe")
	only := flag.String("only", "", "run only frameworks whose id contains this")
	out := flag.String("out", filepath.Join("..", "results", "raw"), "directory for JSON results")
	quiet := flag.Bool("quiet", false, "print verdict lines only")
	flag.Parse()
	o := options{variants: []string{"unmodified", "mediated"}, repeat: *repeat, only: *only, out: *out, quiet: *quiet}
	if *variant != "all" {
		o.variants = []string{*variant}
	}
	return o
}

func main() {
	o := parseFlags()
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	gateProblem := ""
	if slices.Contains(o.variants, "mediated") {
		gateProblem = harness.GateAvailable()
	}
	results, failed := runAll(o, gateProblem)
	harness.StopGate()
	if gateProblem != "" {
		fmt.Println("mediated variant UNAVAILABLE: " + gateProblem)
		if os.Getenv("CI") == "true" {
			failed++
		}
	}
	writeSummary(o.out, results)
	count := func(v string) int {
		n := 0
		for _, r := range results {
			if r.Verdict == v {
				n++
			}
		}
		return n
	}
	fmt.Printf("go probes: %d runs, %d VIOLATION, %d CLEAN, %d UNAVAILABLE, %d ERROR\n", len(results), count("VIOLATION"), count("CLEAN"), count("UNAVAILABLE"), count("ERROR"))
	if failed > 0 {
		os.Exit(1)
	}
}

// runAll runs every probe of the frameworks o selects, in each variant,
// o.repeat times, writing and printing each result; it returns the results
// and how many of them are ERROR.
func runAll(o options, gateProblem string) ([]harness.Result, int) {
	frameworks := []harness.Framework{eino.Graph(), eino.ToolsNode(), adk.Confirmation(), genkit.Interrupts()}
	var results []harness.Result
	failed := 0
	for _, fw := range frameworks {
		if o.only != "" && !strings.Contains(fw.ID, o.only) {
			continue
		}
		for _, v := range o.variants {
			for _, p := range fw.Probes {
				for rep := 1; rep <= o.repeat; rep++ {
					r := probeResult(fw, p, v, rep, gateProblem)
					if r.Verdict == "ERROR" {
						failed++
					}
					results = append(results, r)
					b, _ := json.MarshalIndent(r, "", "  ")
					_ = os.WriteFile(filepath.Join(o.out, fmt.Sprintf("go.%s.%s.r%d.json", r.ID, v, rep)), append(b, '\n'), 0o644)
					report(r, o.quiet)
				}
			}
		}
	}
	return results, failed
}

// probeResult is the result of repetition rep of probe p in variant v: the
// probe's run, or UNAVAILABLE when it cannot run there.
func probeResult(fw harness.Framework, p harness.Probe, v string, rep int, gateProblem string) harness.Result {
	id := fmt.Sprintf("%s.%s.%s", fw.ID, p.Property, strings.ReplaceAll(p.Case, "/", "-"))
	r := harness.Result{ID: id, Module: fw.ID, Framework: fw.Name, Package: fw.Module, Version: version(fw.Module),
		Primitive: fw.Primitive, Property: p.Property, Case: p.Case, About: p.About, Variant: v, Repetition: rep,
		Rule: harness.Rules[p.Property], Events: []harness.Event{}}
	switch {
	case p.Unavailable != "":
		r.Verdict, r.Reason = "UNAVAILABLE", p.Unavailable
	case v == "mediated" && gateProblem != "":
		r.Verdict, r.Reason = "UNAVAILABLE", gateProblem
	case v == "mediated" && fw.MediatedUnavailable != "":
		r.Verdict, r.Reason = "UNAVAILABLE", fw.MediatedUnavailable
	default:
		runOne(&r, fw, p, v)
	}
	return r
}

// writeSummary writes go.summary.json: every result without its events.
func writeSummary(out string, results []harness.Result) {
	summary := make([]harness.Result, len(results))
	for i, r := range results {
		r.Events = nil
		summary[i] = r
	}
	b, _ := json.MarshalIndent(summary, "", "  ")
	_ = os.WriteFile(filepath.Join(out, "go.summary.json"), append(b, '\n'), 0o644)
}

func runOne(r *harness.Result, fw harness.Framework, p harness.Probe, variant string) {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	var env harness.Env
	if variant == "mediated" {
		m, err := harness.NewMediated(ctx, r.ID, p)
		if err != nil {
			r.Verdict, r.Reason = "ERROR", "gate: "+err.Error()
			return
		}
		defer m.Close()
		env = m
	} else {
		env = harness.NewUnmodified()
	}
	done := make(chan error, 1)
	go func() {
		defer func() {
			if x := recover(); x != nil {
				done <- fmt.Errorf("panic: %v\n%s", x, debug.Stack())
			}
		}()
		done <- p.Run(ctx, env)
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = fmt.Errorf("probe did not finish within %s", probeTimeout)
	}
	r.Events = env.Log().Events()
	if err != nil {
		r.Verdict, r.Reason = "ERROR", err.Error()
		return
	}
	v, err := harness.Apply(p.Property, r.Events)
	if err != nil {
		r.Verdict, r.Reason = "ERROR", err.Error()
		return
	}
	r.Committed = []string{}
	for _, e := range r.Events {
		if e.Kind == "effect" {
			r.Committed = append(r.Committed, e.Key)
		}
	}
	r.Verdict, r.Reason = "CLEAN", v.Reason
	if v.Violation {
		r.Verdict = "VIOLATION"
	}
}

// report prints the verdict line of r and, unless quiet, its rule, reason and event log.
func report(r harness.Result, quiet bool) {
	fmt.Printf("%-11s %-10s %s (run %d)\n", r.Verdict, r.Variant, r.ID, r.Repetition)
	if quiet {
		return
	}
	fmt.Printf("  rule %s: %s\n  why: %s\n", r.Property, r.Rule, r.Reason)
	for _, e := range r.Events {
		b, _ := json.Marshal(e)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		delete(m, "t_ms")
		delete(m, "seq")
		delete(m, "kind")
		rest, _ := json.Marshal(m)
		fmt.Printf("  %10.3f ms  #%2d %-7s %s\n", e.TMs, e.Seq, e.Kind, rest)
	}
}

func version(module string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, d := range bi.Deps {
		if d.Path == module {
			return d.Version
		}
	}
	return "unknown"
}
