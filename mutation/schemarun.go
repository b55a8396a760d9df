package mutation

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// schemaBaselineMax bounds the unmutated run of one schema test binary.
const schemaBaselineMax = 10 * time.Minute

// testBin is one test binary built from the schema overlay.
type testBin struct {
	pkg      string // import path
	dir      string // package directory: the binary runs there, as go test does
	path     string
	skip     string        // -test.skip pattern
	baseline time.Duration // measured run time of the unmutated binary
	timeout  time.Duration
}

var failLine = regexp.MustCompile(`(?m)^--- FAIL: (\S+)`)

// prepareSchema builds the schemata of the targets, the test binaries and their
// baselines. On success r.bins is set and the wrapped mutants have schema ids.
func (r *runner) prepareSchema(ctx context.Context, targets []target, todo []*Mutant) (string, error) {
	byPkg := map[string][]*Mutant{}
	for _, m := range todo {
		byPkg[m.Package] = append(byPkg[m.Package], m)
	}
	next := 0
	entries := map[string]string{}
	var schemas []*packageSchema
	sdir := filepath.Join(r.tmp, "schema")
	if err := os.Mkdir(sdir, 0o755); err != nil {
		return "", err
	}
	for _, t := range targets {
		ms := byPkg[t.plain.PkgPath]
		if len(ms) == 0 {
			continue
		}
		ps, err := buildSchema(t, ms, &next)
		if err != nil {
			return "", err
		}
		schemas = append(schemas, ps)
		for path, content := range ps.overlay() {
			dst := filepath.Join(sdir, fmt.Sprintf("%03d-%s", len(entries), filepath.Base(path)))
			if err := os.WriteFile(dst, content, 0o644); err != nil {
				return "", err
			}
			entries[path] = dst
		}
	}
	desc := describeSchema(schemas)
	if len(entries) == 0 {
		return desc, fmt.Errorf("no mutant could be wrapped")
	}
	js, err := json.Marshal(map[string]map[string]string{"Replace": entries})
	if err != nil {
		return desc, err
	}
	overlay := filepath.Join(sdir, "overlay.json")
	if err := os.WriteFile(overlay, js, 0o644); err != nil {
		return desc, err
	}
	pkgs, err := listTestPackages(ctx, r.cfg.Dir, r.cfg.TestPackages)
	if err != nil {
		return desc, err
	}
	for i, p := range pkgs {
		bin := filepath.Join(sdir, fmt.Sprintf("t%03d.test", i))
		cctx, cancel := context.WithTimeout(ctx, 2*buildAllowance)
		out, err := runGo(cctx, r.cfg.Dir, "test", "-c", "-vet=off", "-ldflags=-s -w",
			"-overlay="+overlay, "-o", bin, p.importPath)
		cancel()
		if err != nil {
			return desc, fmt.Errorf("building the schema tests of %s: %s", p.importPath, clip(string(out)))
		}
		r.bins = append(r.bins, &testBin{pkg: p.importPath, dir: p.dir, path: bin, skip: r.cfg.Skip})
	}
	if len(r.bins) == 0 {
		return desc, fmt.Errorf("%w: no test files in %v", ErrBaseline, r.cfg.TestPackages)
	}
	for _, b := range r.bins {
		began := time.Now()
		res := runBin(ctx, b, 0, schemaBaselineMax)
		b.baseline = time.Since(began)
		if ctx.Err() != nil {
			return desc, ctx.Err()
		}
		if res.failed || res.timedOut {
			return desc, fmt.Errorf("%w: %s (schema build): %s", ErrBaseline, b.pkg, clip(res.failDetail))
		}
		b.timeout = max(r.cfg.TimeoutFloor, time.Duration(float64(b.baseline)*r.cfg.TimeoutFactor))
	}
	return desc, nil
}

type testPkg struct{ importPath, dir string }

// listTestPackages lists the packages matching patterns that have test files.
func listTestPackages(ctx context.Context, dir string, patterns []string) ([]testPkg, error) {
	args := append([]string{"list", "-f",
		"{{.ImportPath}}\t{{.Dir}}\t{{len .TestGoFiles}}\t{{len .XTestGoFiles}}"}, patterns...)
	out, err := runGo(ctx, dir, args...)
	if err != nil {
		return nil, fmt.Errorf("%w: go list: %s", ErrLoad, clip(string(out)))
	}
	var pkgs []testPkg
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 4 {
			continue // a warning such as "matched no packages"
		}
		if f[2] == "0" && f[3] == "0" {
			continue
		}
		pkgs = append(pkgs, testPkg{importPath: f[0], dir: f[1]})
	}
	return pkgs, nil
}

// binResult is what one run of a schema test binary said.
type binResult struct {
	failed        bool
	failedTest    string
	failDetail    string
	timedOut      bool
	timeoutDetail string
}

// runBin runs a schema test binary with mutant id switched on.
func runBin(ctx context.Context, b *testBin, id int, timeout time.Duration) binResult {
	wall := 2*timeout + 30*time.Second
	cctx, cancel := context.WithTimeout(ctx, wall)
	defer cancel()
	args := []string{"-test.count=1", "-test.failfast", "-test.timeout=" + timeout.String()}
	if b.skip != "" {
		args = append(args, "-test.skip="+b.skip)
	}
	cmd := exec.CommandContext(cctx, b.path, args...)
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(), schemaEnv+"="+strconv.Itoa(id))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = killWait
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	err := cmd.Run()
	out := buf.String()
	var res binResult
	if err == nil {
		return res
	}
	res.failed = true
	res.failDetail = out
	switch {
	case strings.Contains(out, timedOutMarker):
		res.timedOut = true
		i := strings.Index(out, timedOutMarker)
		res.timeoutDetail = firstLine(out[i:])
	case cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		res.timedOut = true
		res.timeoutDetail = fmt.Sprintf("test binary killed after %s wall time", wall)
	default:
		if m := failLine.FindStringSubmatch(out); m != nil {
			name := m[1]
			if i := strings.IndexByte(name, '/'); i >= 0 {
				name = name[:i]
			}
			res.failedTest = b.pkg + "." + name
		}
	}
	return res
}

// testSchema runs the schema binaries with m switched on; a timeout is run once more.
func (r *runner) testSchema(ctx context.Context, m *Mutant) {
	m.Mode = "schema"
	began := time.Now()
	defer func() { m.Seconds = time.Since(began).Round(time.Millisecond).Seconds() }()
	for attempt := 1; attempt <= 2; attempt++ {
		m.Runs = attempt
		var res binResult
		for _, b := range r.bins {
			res = runBin(ctx, b, m.schemaID, b.timeout)
			if res.failed || ctx.Err() != nil {
				if res.failed && !res.timedOut && res.failedTest == "" {
					res.failedTest = b.pkg + " (test binary failed)"
				}
				break
			}
		}
		if ctx.Err() != nil {
			return
		}
		switch {
		case res.timedOut:
			m.Status, m.Message = StatusTimedOut, res.timeoutDetail
			continue
		case res.failed:
			m.Status, m.KilledBy, m.Message = StatusKilled, res.failedTest, ""
			if strings.HasSuffix(res.failedTest, "(test binary failed)") {
				m.Message = clip(res.failDetail)
			}
		default:
			m.Status = StatusSurvived
		}
		return
	}
}
