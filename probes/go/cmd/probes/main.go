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
	"strings"
	"time"

	"github.com/soundgate/soundgate/probes/go/frameworks/adk"
	"github.com/soundgate/soundgate/probes/go/frameworks/eino"
	"github.com/soundgate/soundgate/probes/go/frameworks/genkit"
	"github.com/soundgate/soundgate/probes/go/harness"
)

// probeTimeout bounds one probe run.
const probeTimeout = 20 * time.Second

func main() {
	variant := flag.String("variant", "all", "unmodified, mediated or all")
	repeat := flag.Int("repeat", 1, "runs of each probe")
	only := flag.String("only", "", "run only frameworks whose id contains this")
	out := flag.String("out", filepath.Join("..", "results", "raw"), "directory for JSON results")
	quiet := flag.Bool("quiet", false, "print verdict lines only")
	flag.Parse()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	variants := []string{"unmodified", "mediated"}
	if *variant != "all" {
		variants = []string{*variant}
	}
	gateProblem := ""
	if contains(variants, "mediated") {
		gateProblem = harness.GateAvailable()
	}
	frameworks := []harness.Framework{eino.Graph(), eino.ToolsNode(), adk.Confirmation(), genkit.Interrupts()}
	var results []harness.Result
	errors := 0
	for _, fw := range frameworks {
		if *only != "" && !strings.Contains(fw.ID, *only) {
			continue
		}
		for _, v := range variants {
			for _, p := range fw.Probes {
				for rep := 1; rep <= *repeat; rep++ {
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
						if r.Verdict == "ERROR" {
							errors++
						}
					}
					results = append(results, r)
					b, _ := json.MarshalIndent(r, "", "  ")
					_ = os.WriteFile(filepath.Join(*out, fmt.Sprintf("go.%s.%s.r%d.json", id, v, rep)), append(b, '\n'), 0o644)
					print(r, *quiet)
				}
			}
		}
	}
	harness.StopGate()
	if gateProblem != "" {
		fmt.Println("mediated variant UNAVAILABLE: " + gateProblem)
		if os.Getenv("CI") == "true" {
			errors++
		}
	}
	summary := make([]harness.Result, len(results))
	for i, r := range results {
		r.Events = nil
		summary[i] = r
	}
	b, _ := json.MarshalIndent(summary, "", "  ")
	_ = os.WriteFile(filepath.Join(*out, "go.summary.json"), append(b, '\n'), 0o644)
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
	if errors > 0 {
		os.Exit(1)
	}
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

func print(r harness.Result, quiet bool) {
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

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}
