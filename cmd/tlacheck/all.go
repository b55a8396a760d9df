package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/soundgate/soundgate/tlacheck"
)

// expectRE finds a config's expected outcome: a comment "\* tlacheck-expect: deadlock".
var expectRE = regexp.MustCompile(`tlacheck-expect:\s*(ok|deadlock|violation)`)

// tlcTimeout bounds one run of the real TLC in the cross-check.
const tlcTimeout = 2 * time.Hour

type cfgRun struct {
	name, tlaPath, cfgPath string
	expect                 string
}

// configPattern is the glob of the configs -all checks: every one, or the quick ones.
func configPattern(quick bool) string {
	if quick {
		return "*_quick.cfg"
	}
	return "*.cfg"
}

// findConfigs lists dir/*.cfg (or only *_quick.cfg), each with its module: the cfg
// name up to the first '_' names the .tla file.
func findConfigs(dir string, quick bool) ([]cfgRun, error) {
	paths, err := filepath.Glob(filepath.Join(dir, configPattern(quick)))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []cfgRun
	for _, p := range paths {
		base := strings.TrimSuffix(filepath.Base(p), ".cfg")
		mod := base
		if i := strings.IndexByte(base, '_'); i > 0 {
			mod = base[:i]
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		expect := "ok"
		if m := expectRE.FindSubmatch(src); m != nil {
			expect = string(m[1])
		}
		out = append(out, cfgRun{name: base, tlaPath: filepath.Join(dir, mod+".tla"), cfgPath: p, expect: expect})
	}
	return out, nil
}

// runAll checks every config of dir, prints per-config figures and ends with one
// summary line. With TLA2TOOLS_JAR set and java on PATH it also runs TLC on each
// config and compares generated/distinct/depth.
func runAll(dir string, quick bool, progress time.Duration, fingerprintBytes int64, stdout io.Writer) int {
	runs, err := findConfigs(dir, quick)
	if err != nil {
		fmt.Fprintf(stdout, "tla %s: error: %v\n", dir, err)
		return exitUsage
	}
	what := configPattern(quick)
	if len(runs) == 0 {
		fmt.Fprintf(stdout, "tla %s: NO CONFIGS: %s/%s matches nothing, nothing was model-checked\n", dir, dir, what)
		if os.Getenv("CI") == "true" {
			return exitUsage
		}
		return exitOK
	}
	java, jar, compare := tlcTools()
	failed := 0
	var parts []string
	var tlcParts []string
	for _, r := range runs {
		res, part, ok := checkConfig(r, progress, fingerprintBytes, stdout)
		parts = append(parts, part)
		if !ok {
			failed++
		}
		if res != nil && compare {
			line, ok := compareTLC(java, jar, r, res, stdout)
			tlcParts = append(tlcParts, line)
			if !ok {
				failed++
			}
		}
	}
	tlcNote := "TLC comparison SKIPPED (set TLA2TOOLS_JAR to a tla2tools.jar and put java on PATH to run it)"
	if compare {
		tlcNote = "TLC comparison: " + strings.Join(tlcParts, "; ")
	} else {
		fmt.Fprintln(stdout, "**********************************************************************")
		fmt.Fprintln(stdout, "* "+tlcNote)
		fmt.Fprintln(stdout, "**********************************************************************")
	}
	verdict := "ok"
	if failed > 0 {
		verdict = fmt.Sprintf("%d FAILED", failed)
	}
	fmt.Fprintf(stdout, "tla %s (generated/distinct/depth): %s; %s; %s\n", filepath.Join(dir, what), strings.Join(parts, ", "), tlcNote, verdict)
	if failed > 0 {
		return exitSafety
	}
	return exitOK
}

// tlcTools returns java and the tla2tools.jar of TLA2TOOLS_JAR; ok is false when
// either is missing, and then TLC is not run.
func tlcTools() (java, jar string, ok bool) {
	jar = os.Getenv("TLA2TOOLS_JAR")
	java, err := exec.LookPath("java")
	if jar == "" || err != nil {
		return "", "", false
	}
	if _, err := os.Stat(jar); err != nil {
		return "", "", false
	}
	return java, jar, true
}

// outcomeNames are the outcomes as a config's tlacheck-expect line spells them.
var outcomeNames = map[tlacheck.Outcome]string{tlacheck.OK: "ok", tlacheck.Deadlock: "deadlock", tlacheck.InvariantViolated: "violation"}

// checkConfig model-checks one config and prints its figures. It returns the result
// (nil when the spec did not load or check), the config's part of the summary line,
// and whether the outcome is the expected one.
func checkConfig(r cfgRun, progress time.Duration, fingerprintBytes int64, stdout io.Writer) (*tlacheck.Result, string, bool) {
	fmt.Fprintf(stdout, "== %s (%s)\n", r.name, r.cfgPath)
	start := time.Now()
	spec, err := tlacheck.Load(r.tlaPath, r.cfgPath)
	var res *tlacheck.Result
	if err == nil {
		res, err = spec.Check(tlacheck.Options{Progress: stdout, ProgressEvery: progress, FingerprintBytes: fingerprintBytes})
	}
	if err != nil {
		fmt.Fprintf(stdout, "tla %s: error (exit %d): %v\n", r.name, exitCode(err), err)
		return nil, r.name + " error", false
	}
	got := outcomeNames[res.Outcome]
	printFailure(stdout, res)
	secs := time.Since(start).Seconds()
	status, ok := got, true
	if got != r.expect {
		status, ok = fmt.Sprintf("FAILED (%s, expected %s)", got, r.expect), false
	} else if got != "ok" {
		status = "expected " + got
	}
	if res.Outcome == tlacheck.InvariantViolated {
		status += " of " + res.Invariant
	}
	rate := float64(res.Distinct) / max(res.Duration.Seconds(), 1e-9)
	fmt.Fprintf(stdout, "tla %s: %d generated, %d distinct, depth %d, %.1fs (%.0f distinct/s), %s, %s\n",
		r.name, res.Generated, res.Distinct, res.Depth, secs, rate, modeOf(res), status)
	return res, fmt.Sprintf("%s %d/%d/%d %.1fs %s %s", r.name, res.Generated, res.Distinct, res.Depth, secs, modeOf(res), status), ok
}

var (
	tlcGenRE   = regexp.MustCompile(`(?m)^([\d,]+) states generated, ([\d,]+) distinct states found`)
	tlcDepthRE = regexp.MustCompile(`depth of the complete state graph search is (\d+)`)
)

// compareTLC runs TLC with one worker in a scratch directory on copies of the files
// and compares its figures with res.
func compareTLC(java, jar string, r cfgRun, res *tlacheck.Result, stdout io.Writer) (string, bool) {
	tmp, err := os.MkdirTemp("", "tlc-compare-")
	if err != nil {
		return r.name + " TLC error: " + err.Error(), false
	}
	defer os.RemoveAll(tmp)
	for _, p := range []string{r.tlaPath, r.cfgPath} {
		b, err := os.ReadFile(p)
		if err != nil {
			return r.name + " TLC error: " + err.Error(), false
		}
		if err := os.WriteFile(filepath.Join(tmp, filepath.Base(p)), b, 0o644); err != nil {
			return r.name + " TLC error: " + err.Error(), false
		}
	}
	cmd := exec.Command(java, "-XX:+UseParallelGC", "-cp", jar, "tlc2.TLC", "-workers", "1",
		"-config", filepath.Base(r.cfgPath), filepath.Base(r.tlaPath))
	cmd.Dir = tmp
	start := time.Now()
	timer := time.AfterFunc(tlcTimeout, func() { _ = cmd.Process.Kill() })
	out, _ := cmd.CombinedOutput()
	timer.Stop()
	secs := time.Since(start).Seconds()
	g := tlcGenRE.FindSubmatch(out)
	d := tlcDepthRE.FindSubmatch(out)
	if g == nil || d == nil {
		fmt.Fprintf(stdout, "TLC output without figures:\n%s\n", out)
		return r.name + " TLC printed no figures", false
	}
	num := func(b []byte) int64 {
		n, _ := strconv.ParseInt(strings.ReplaceAll(string(b), ",", ""), 10, 64)
		return n
	}
	tg, td, tdepth := num(g[1]), num(g[2]), num(d[1])
	ok := tg == res.Generated && td == res.Distinct && tdepth == int64(res.Depth)
	verdict := "equal"
	if !ok {
		verdict = "DIFFERENT"
	}
	fmt.Fprintf(stdout, "TLC %s: %d generated, %d distinct, depth %d, %.1fs: %s\n", r.name, tg, td, tdepth, secs, verdict)
	return fmt.Sprintf("%s TLC %d/%d/%d %s", r.name, tg, td, tdepth, verdict), ok
}
