package mutation

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Named limits and defaults, with their units.
const (
	// DefaultTimeoutFactor multiplies the measured run time of the test binary.
	DefaultTimeoutFactor = 10.0
	// DefaultTimeoutFloor is the least timeout a mutant's test binary gets.
	DefaultTimeoutFloor = 10 * time.Second
	// buildAllowance bounds what the go command may spend around the test binary
	// (building the mutant and its tests) before the whole run is killed.
	buildAllowance = 3 * time.Minute
	// killWait is how long a cancelled go command gets to exit before it is killed.
	killWait = 5 * time.Second
	// messageBytesMax bounds a stored compiler or timeout message.
	messageBytesMax = 2000
)

// Errors of a run.
var (
	// ErrBaseline is returned when the tests fail (or do not run) on the unmutated code:
	// a score against a red suite would mean nothing.
	ErrBaseline = errors.New("soundgate/mutation: tests fail without mutation")
	// ErrInterrupted is returned when the run was cancelled (SIGINT); the working tree
	// is untouched and the temporary directory removed.
	ErrInterrupted = errors.New("soundgate/mutation: interrupted")
	// ErrConfig is returned for an invalid configuration.
	ErrConfig = errors.New("soundgate/mutation: bad configuration")
)

// Config says what to mutate and how to test it.
type Config struct {
	// Dir is the directory the go command runs in (inside the module).
	Dir string
	// Packages are the package patterns to mutate, relative to Dir.
	Packages []string
	// TestPackages are the package patterns whose tests are run for each mutant.
	TestPackages []string
	// Skip, when set, is a go test -skip pattern: tests that cannot observe a mutant
	// (for example a test that builds the original tree in a subprocess) and only
	// cost time.
	Skip string
	// Workers is the number of mutants tested in parallel (default: number of CPUs).
	Workers int
	// TimeoutFactor and TimeoutFloor derive the per-mutant timeout of the test binary:
	// max(TimeoutFloor, TimeoutFactor × baseline run time of the test binary).
	TimeoutFactor float64
	TimeoutFloor  time.Duration
	// Suppress maps mutant ids to their reviewed reasons; those mutants are not run.
	Suppress map[string]string
	// DiffBase, when set, keeps only mutants on lines changed since this git revision.
	DiffBase string
	// Operators, when set, keeps only these operators.
	Operators []Operator
	// Only, when set, keeps only the mutants with these ids (for re-checking one).
	Only []string
	// Progress receives one line per finished mutant (nil: quiet).
	Progress io.Writer
	// ListOnly generates and filters the mutants but runs nothing.
	ListOnly bool
	// NoSchemata runs every mutant with its own go test -overlay build instead of
	// switching mutants at run time in one schema test binary (see schema.go).
	NoSchemata bool
	// NoConfirm reports schema survivors without re-running them alone (and so without
	// the equivalence check): a quick triage run, never the gate's figure.
	NoConfirm bool
}

// Report is the result of a run; its JSON form is the machine-readable report.
type Report struct {
	Packages     []string `json:"packages"`
	TestPackages []string `json:"test_packages"`
	Skip         string   `json:"skip,omitempty"`
	DiffBase     string   `json:"diff_base,omitempty"`
	Workers      int      `json:"workers"`
	// BaselineSeconds is the measured run time of the unmutated test binary (the
	// slowest package's), the base of TimeoutSeconds.
	BaselineSeconds float64 `json:"baseline_seconds"`
	TimeoutSeconds  float64 `json:"timeout_seconds"`
	Seconds         float64 `json:"seconds"`
	Stats           Stats   `json:"generation"`
	// Schema describes the mutant schemata (how many mutants were wrapped), or why
	// none was used.
	Schema string `json:"schema"`
	// Counts per status, and Score = killed / (killed + survived + timed out).
	Counts map[Status]int `json:"counts"`
	Score  float64        `json:"score"`
	// Scored is the denominator of Score.
	Scored int `json:"scored"`
	// StaleSuppressions are ids in the suppression file that match no mutant.
	StaleSuppressions []string  `json:"stale_suppressions,omitempty"`
	Mutants           []*Mutant `json:"mutants"`
}

// Run generates the mutants of cfg.Packages, runs cfg.TestPackages' tests on each one
// and classifies them. It never writes inside the module: mutated files live in a
// temporary directory that is removed when Run returns, also when ctx is cancelled.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	began := time.Now()
	// git diff runs in the tree itself: the copy has no history.
	diffDir, diffRoot := cfg.Dir, ""
	if cfg.DiffBase != "" {
		if diffRoot, err = moduleRoot(cfg.Dir); err != nil {
			return nil, err
		}
	}
	var tmp string
	if !cfg.ListOnly {
		if tmp, err = os.MkdirTemp("", "soundgate-mutation-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		if cfg.Dir, err = workCopy(ctx, cfg.Dir, filepath.Join(tmp, "src")); err != nil {
			return nil, err
		}
	}
	rep := newReport(cfg)
	targets, err := load(ctx, cfg.Dir, cfg.Packages)
	if err != nil {
		return nil, err
	}
	ms, err := generate(ctx, targets, &rep.Stats)
	if err != nil {
		return nil, err
	}
	rep.StaleSuppressions = staleSuppressions(ms, cfg.Suppress)
	if ms, err = filter(ms, cfg, diffDir, diffRoot); err != nil {
		return nil, err
	}
	sortMutants(ms)
	describe(ms, cfg.Suppress)
	rep.Mutants = ms
	if cfg.ListOnly {
		rep.finish(began)
		return rep, nil
	}

	r := &runner{cfg: cfg, tmp: tmp, archives: map[string][]byte{}}
	todo := pending(ms)
	if err := r.chooseMode(ctx, rep, targets, todo); err != nil {
		return nil, err
	}
	if err := r.setTimeout(ctx, rep); err != nil {
		return nil, err
	}
	if done := r.runAll(ctx, todo); ctx.Err() != nil {
		return nil, fmt.Errorf("%w after %d of %d mutants", ErrInterrupted, done, len(todo))
	}
	rep.finish(began)
	return rep, nil
}

// withDefaults checks cfg, fills in its defaults and makes Dir absolute.
func (cfg Config) withDefaults() (Config, error) {
	if len(cfg.Packages) == 0 || len(cfg.TestPackages) == 0 {
		return cfg, fmt.Errorf("%w: packages to mutate and to test are both required", ErrConfig)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.NumCPU()
	}
	if cfg.TimeoutFactor <= 0 {
		cfg.TimeoutFactor = DefaultTimeoutFactor
	}
	if cfg.TimeoutFloor <= 0 {
		cfg.TimeoutFloor = DefaultTimeoutFloor
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return cfg, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	cfg.Dir = dir
	return cfg, nil
}

// timeoutFor derives a test binary's timeout from its unmutated run time.
func (cfg Config) timeoutFor(baseline time.Duration) time.Duration {
	return max(cfg.TimeoutFloor, time.Duration(float64(baseline)*cfg.TimeoutFactor))
}

func newReport(cfg Config) *Report {
	return &Report{
		Packages: cfg.Packages, TestPackages: cfg.TestPackages, Skip: cfg.Skip, DiffBase: cfg.DiffBase,
		Workers: cfg.Workers, Counts: map[Status]int{}, Stats: newStats(),
	}
}

// staleSuppressions returns, sorted, the suppressed ids that match no mutant of ms.
// One suppression file serves several packages: an entry of a package that is not
// mutated in this run is not stale.
func staleSuppressions(ms []*Mutant, suppress map[string]string) []string {
	ids := map[string]bool{}
	dirs := map[string]bool{} // the mutated packages' directories, as ids name them
	for _, m := range ms {
		ids[m.ID] = true
		dirs[idDir(m.ID)] = true
	}
	var stale []string
	for id := range suppress {
		if !ids[id] && dirs[idDir(id)] {
			stale = append(stale, id)
		}
	}
	sort.Strings(stale)
	return stale
}

// describe sets each mutant's diff, and marks the suppressed ones with their reason.
func describe(ms []*Mutant, suppress map[string]string) {
	for _, m := range ms {
		m.Diff = unifiedDiff(m, m.src)
		if reason, ok := suppress[m.ID]; ok {
			m.Status = StatusSuppressed
			m.Message = reason
		}
	}
}

// pending returns the mutants still to run.
func pending(ms []*Mutant) []*Mutant {
	var todo []*Mutant
	for _, m := range ms {
		if m.Status == StatusPending {
			todo = append(todo, m)
		}
	}
	return todo
}

// chooseMode builds the schema for todo or, when it cannot be used, records why and
// leaves every mutant to its own build. Only a red unmutated suite is an error.
func (r *runner) chooseMode(ctx context.Context, rep *Report, targets []target, todo []*Mutant) error {
	if r.cfg.NoSchemata {
		rep.Schema = "off: every mutant has its own go test -overlay run"
		return nil
	}
	if len(todo) == 0 {
		return nil
	}
	desc, err := r.prepareSchema(ctx, targets, todo)
	if ctx.Err() != nil {
		return fmt.Errorf("%w while building the schema", ErrInterrupted)
	}
	if errors.Is(err, ErrBaseline) && !strings.Contains(err.Error(), "schema build") {
		return err
	}
	if err != nil {
		rep.Schema = "not used (" + err.Error() + "); every mutant runs alone"
		r.bins = nil
		for _, m := range todo {
			m.schemaID = 0
		}
		return nil
	}
	rep.Schema = desc
	return nil
}

// setTimeout sets the per-mutant timeout from the schema binaries' baselines, or
// from one unmutated go test run when there is no schema.
func (r *runner) setTimeout(ctx context.Context, rep *Report) error {
	if r.bins != nil {
		for _, b := range r.bins {
			rep.BaselineSeconds = max(rep.BaselineSeconds, b.baseline.Seconds())
			r.timeout = max(r.timeout, b.timeout)
		}
	} else {
		baseline, err := measureBaseline(ctx, r.cfg)
		if err != nil {
			if ctx.Err() != nil {
				return ErrInterrupted
			}
			return err
		}
		rep.BaselineSeconds = baseline.Seconds()
		r.timeout = r.cfg.timeoutFor(baseline)
	}
	rep.TimeoutSeconds = r.timeout.Round(time.Millisecond).Seconds()
	return nil
}

// runAll tests todo on cfg.Workers workers and returns how many finished; it stops
// feeding mutants when ctx ends.
func (r *runner) runAll(ctx context.Context, todo []*Mutant) int {
	jobs := make(chan *Mutant)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for w := 0; w < r.cfg.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range jobs {
				r.testMutant(ctx, m)
				if ctx.Err() != nil {
					continue
				}
				mu.Lock()
				done++
				if r.cfg.Progress != nil {
					fmt.Fprintf(r.cfg.Progress, "[%d/%d] %-10s %-7s %.1fs %s%s\n", done, len(todo), m.Status,
						m.Mode, m.Seconds, m.ID, progressDetail(m))
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, m := range todo {
		select {
		case jobs <- m:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	return done
}

// testMutant runs m in the schema when it is wrapped there, else in its own build.
func (r *runner) testMutant(ctx context.Context, m *Mutant) {
	if m.schemaID <= 0 || r.bins == nil {
		r.test(ctx, m)
		return
	}
	r.testSchema(ctx, m)
	if m.Status == StatusSurvived && ctx.Err() == nil && !r.cfg.NoConfirm {
		// Confirm with the mutant's own build: a schema never makes a survivor.
		r.test(ctx, m)
	}
}

// idDir returns the directory of the file a mutant id names ("impl/core" for
// "impl/core/gate.go:Gate.Admit:boundary:3fa21b9c").
func idDir(id string) string {
	file, _, _ := strings.Cut(id, ":")
	return path.Dir(file)
}

func progressDetail(m *Mutant) string {
	switch m.Status {
	case StatusKilled:
		return " by " + m.KilledBy
	case StatusNotViable, StatusTimedOut:
		return ": " + firstLine(m.Message)
	}
	return ""
}

func (rep *Report) finish(began time.Time) {
	rep.Counts = map[Status]int{}
	for _, m := range rep.Mutants {
		rep.Counts[m.Status]++
	}
	k, s, t := rep.Counts[StatusKilled], rep.Counts[StatusSurvived], rep.Counts[StatusTimedOut]
	rep.Scored = k + s + t
	if rep.Scored > 0 {
		rep.Score = float64(k) / float64(rep.Scored)
	}
	rep.Seconds = time.Since(began).Round(time.Millisecond).Seconds()
}

// filter applies --diff (git diff in diffDir, paths relative to the module root
// diffRoot), the operator list and the id list.
func filter(ms []*Mutant, cfg Config, diffDir, diffRoot string) ([]*Mutant, error) {
	var changed map[string][]lineRange
	if cfg.DiffBase != "" {
		var err error
		changed, err = changedLines(diffDir, cfg.DiffBase, diffRoot)
		if err != nil {
			return nil, err
		}
	}
	ops := map[Operator]bool{}
	for _, o := range cfg.Operators {
		ops[o] = true
	}
	only := map[string]bool{}
	for _, id := range cfg.Only {
		only[id] = true
	}
	var out []*Mutant
	for _, m := range ms {
		if len(ops) > 0 && !ops[m.Operator] {
			continue
		}
		if len(only) > 0 && !only[m.ID] {
			continue
		}
		if changed != nil && !touches(changed[m.File], m.spanStart, m.EndLine) {
			continue
		}
		out = append(out, m)
	}
	return out, nil
}

// runner holds what the workers share.
type runner struct {
	cfg     Config
	tmp     string
	timeout time.Duration
	bins    []*testBin // schema test binaries; nil when every mutant runs alone

	mu       sync.Mutex
	seq      int
	archives map[string][]byte // package -> object code of the original
}

// test runs the tests on one mutant and sets its outcome.
func (r *runner) test(ctx context.Context, m *Mutant) {
	m.Mode = "overlay"
	began := time.Now()
	defer func() {
		m.duration = time.Since(began)
		m.Seconds = m.duration.Round(time.Millisecond).Seconds()
	}()
	overlay, err := r.writeOverlay(m)
	if err != nil {
		m.Status, m.Message = StatusNotViable, "writing the overlay: "+err.Error()
		return
	}
	for attempt := 1; attempt <= 2; attempt++ {
		m.Runs = attempt
		res := r.goTest(ctx, overlay)
		if ctx.Err() != nil {
			return
		}
		switch {
		case res.buildFailed:
			m.Status, m.Message = StatusNotViable, clip(res.buildOutput)
		case res.failedTest != "":
			m.Status, m.KilledBy, m.Message = StatusKilled, res.failedTest, ""
		case res.timedOut:
			m.Status, m.Message = StatusTimedOut, clip(res.timeoutDetail)
			continue // a timeout is run once more before it counts
		case res.failed:
			m.Status, m.KilledBy = StatusKilled, res.failedPackage
			m.Message = clip(res.failDetail)
		default:
			m.Status = StatusSurvived
		}
		break
	}
	if m.Status == StatusSurvived && m.inBody {
		if same, err := r.sameObject(ctx, m, overlay); err == nil && same {
			m.Status = StatusEquivalent
			m.Message = "compiled package identical to the original"
		}
	}
}

func (r *runner) writeOverlay(m *Mutant) (string, error) {
	r.mu.Lock()
	r.seq++
	n := r.seq
	r.mu.Unlock()
	d := filepath.Join(r.tmp, fmt.Sprintf("m%05d", n))
	if err := os.Mkdir(d, 0o755); err != nil {
		return "", err
	}
	mut := filepath.Join(d, filepath.Base(m.absFile))
	if err := os.WriteFile(mut, m.Apply(m.src), 0o644); err != nil {
		return "", err
	}
	ov := filepath.Join(d, "overlay.json")
	return ov, writeOverlayFile(ov, map[string]string{m.absFile: mut})
}

// writeOverlayFile writes a go build -overlay file that replaces each original path
// by its mutated copy.
func writeOverlayFile(path string, replace map[string]string) error {
	js, err := json.Marshal(map[string]map[string]string{"Replace": replace})
	if err != nil {
		return err
	}
	return os.WriteFile(path, js, 0o644)
}

// testResult is what one go test run said.
type testResult struct {
	buildFailed   bool
	buildOutput   string
	failedTest    string // "pkg.TestName" of the first failed test
	failedPackage string
	failDetail    string
	failed        bool
	timedOut      bool
	timeoutDetail string
	elapsed       map[string]float64 // package -> test binary seconds
}

// testEvent is one line of `go test -json` (cmd/test2json), with build events.
type testEvent struct {
	Action      string
	Package     string
	ImportPath  string
	Test        string
	Output      string
	Elapsed     float64
	FailedBuild string
}

// timedOutMarker is what the testing package prints when -timeout expires.
const timedOutMarker = "panic: test timed out after"

// goTest runs the test command, with overlay if not empty, and reads its JSON events.
func (r *runner) goTest(ctx context.Context, overlay string) testResult {
	args := []string{"test", "-count=1", "-vet=off", "-failfast", "-json", "-ldflags=-s -w",
		fmt.Sprintf("-timeout=%s", r.timeout)}
	if overlay != "" {
		args = append(args, "-overlay="+overlay)
	}
	if r.cfg.Skip != "" {
		args = append(args, "-skip="+r.cfg.Skip)
	}
	args = append(args, r.cfg.TestPackages...)
	wall := 2*r.timeout + buildAllowance
	if overlay == "" {
		wall = 4 * buildAllowance
	}
	cctx, cancel := context.WithTimeout(ctx, wall)
	defer cancel()
	out, _ := runGo(cctx, r.cfg.Dir, args...)
	res := parseTestJSON(out)
	if cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		res.timedOut = true
		res.timeoutDetail = fmt.Sprintf("go test killed after %s wall time", wall)
	}
	return res
}

func parseTestJSON(out []byte) testResult {
	res := testResult{elapsed: map[string]float64{}}
	var build, detail strings.Builder
	failedPkgs := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Bytes()
		var ev testEvent
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			if len(line) > 0 {
				build.Write(line) // the go command's own diagnostics
				build.WriteByte('\n')
			}
			continue
		}
		switch ev.Action {
		case "build-output":
			build.WriteString(ev.Output)
		case "build-fail":
			res.buildFailed = true
		case "output":
			if strings.Contains(ev.Output, timedOutMarker) {
				res.timedOut = true
				res.timeoutDetail = strings.TrimSpace(ev.Output)
			}
			if failedPkgs[ev.Package] || ev.Test != "" || detail.Len() < messageBytesMax {
				if !strings.HasPrefix(ev.Output, "=== ") {
					detail.WriteString(ev.Output)
				}
			}
		case "fail":
			if ev.FailedBuild != "" {
				res.buildFailed = true
				continue
			}
			if ev.Test != "" {
				if res.failedTest == "" && !res.timedOut {
					res.failedTest = ev.Package + "." + topLevelTest(ev.Test)
				}
				continue
			}
			res.failed = true
			failedPkgs[ev.Package] = true
			if res.failedPackage == "" {
				res.failedPackage = ev.Package
			}
		case "pass":
			if ev.Test == "" {
				res.elapsed[ev.Package] = ev.Elapsed
			}
		}
	}
	res.buildOutput = build.String()
	res.failDetail = detail.String()
	if res.timedOut {
		// The test running when the timer fired is reported failed; that is the
		// timeout, not a kill.
		res.failedTest = ""
	}
	if res.buildFailed {
		res.failedTest = ""
	}
	return res
}

// topLevelTest returns the top-level test of a test or subtest name ("TestA/b").
func topLevelTest(name string) string {
	if i := strings.IndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return name
}

// runGo runs the go command in dir.
func runGo(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	return runGroup(cmd)
}

// runGroup runs cmd (made with exec.CommandContext) in its own process group, so that
// cancelling kills the processes it started too, and returns its combined output.
func runGroup(cmd *exec.Cmd) ([]byte, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = killWait
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	err := cmd.Run()
	return buf.Bytes(), err
}

// measureBaseline runs the tests once unmutated; they must pass. It returns the run
// time of the slowest test binary as test2json measured it (the build is excluded).
func measureBaseline(ctx context.Context, cfg Config) (time.Duration, error) {
	r := &runner{cfg: cfg, timeout: 10 * time.Minute}
	res := r.goTest(ctx, "")
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	if res.buildFailed || res.failed || res.failedTest != "" || res.timedOut || len(res.elapsed) == 0 {
		msg := res.buildOutput + res.failDetail
		if len(res.elapsed) == 0 && msg == "" {
			msg = "no test package ran"
		}
		return 0, fmt.Errorf("%w: %s", ErrBaseline, clip(msg))
	}
	var slowest float64
	for _, s := range res.elapsed {
		slowest = max(slowest, s)
	}
	return time.Duration(slowest * float64(time.Second)), nil
}

// sameObject builds the mutated package alone and compares its object code with
// the original's.
func (r *runner) sameObject(ctx context.Context, m *Mutant, overlay string) (bool, error) {
	r.mu.Lock()
	orig, ok := r.archives[m.Package]
	r.mu.Unlock()
	if !ok {
		a, err := r.buildArchive(ctx, m.Package, "", "orig-"+strings.ReplaceAll(m.Package, "/", "_"))
		if err != nil {
			return false, err
		}
		orig = a
		r.mu.Lock()
		r.archives[m.Package] = a
		r.mu.Unlock()
	}
	mut, err := r.buildArchive(ctx, m.Package, overlay, filepath.Base(filepath.Dir(overlay)))
	if err != nil {
		return false, err
	}
	return bytes.Equal(orig, mut), nil
}

func (r *runner) buildArchive(ctx context.Context, pkg, overlay, name string) ([]byte, error) {
	out := filepath.Join(r.tmp, name+".a")
	args := []string{"build", "-o", out}
	if overlay != "" {
		args = append(args, "-overlay="+overlay)
	}
	args = append(args, pkg)
	cctx, cancel := context.WithTimeout(ctx, buildAllowance)
	defer cancel()
	if msg, err := runGo(cctx, r.cfg.Dir, args...); err != nil {
		return nil, fmt.Errorf("%w: go build: %s", ErrArchive, clip(string(msg)))
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	return objectCode(b)
}

// clip bounds a message to about messageBytesMax bytes. It keeps the beginning (a
// compiler's first errors) and, above all, the end, where a test that prints progress
// reports why it failed.
func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= messageBytesMax {
		return s
	}
	head, tail := s[:messageBytesMax/4], s[len(s)-messageBytesMax*3/4:]
	return fmt.Sprintf("%s\n… (%d bytes left out) …\n%s", head, len(s)-len(head)-len(tail), tail)
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return s
}
