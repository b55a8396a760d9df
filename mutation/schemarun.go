package mutation

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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
	sdir := filepath.Join(r.tmp, "schema")
	if err := os.Mkdir(sdir, 0o755); err != nil {
		return "", err
	}
	schemas, entries, err := writeSchemata(targets, todo, sdir)
	if err != nil {
		return "", err
	}
	desc := describeSchema(schemas)
	if len(entries) == 0 {
		return desc, fmt.Errorf("no mutant could be wrapped")
	}
	overlay := filepath.Join(sdir, "overlay.json")
	if err := writeOverlayFile(overlay, entries); err != nil {
		return desc, err
	}
	if err := r.buildSchemaBins(ctx, sdir, overlay); err != nil {
		return desc, err
	}
	return desc, r.measureSchemaBaselines(ctx)
}

// writeSchemata builds the schema of each target that has mutants in todo, writes
// its files into sdir and returns the schemata and the overlay entries (original
// path -> schema file).
func writeSchemata(targets []target, todo []*Mutant, sdir string) ([]*packageSchema, map[string]string, error) {
	byPkg := map[string][]*Mutant{}
	for _, m := range todo {
		byPkg[m.Package] = append(byPkg[m.Package], m)
	}
	next := 0
	entries := map[string]string{}
	var schemas []*packageSchema
	for _, t := range targets {
		ms := byPkg[t.plain.PkgPath]
		if len(ms) == 0 {
			continue
		}
		ps, err := buildSchema(t, ms, &next)
		if err != nil {
			return nil, nil, err
		}
		schemas = append(schemas, ps)
		for path, content := range ps.overlay() {
			dst := filepath.Join(sdir, fmt.Sprintf("%03d-%s", len(entries), filepath.Base(path)))
			if err := os.WriteFile(dst, content, 0o644); err != nil {
				return nil, nil, err
			}
			entries[path] = dst
		}
	}
	return schemas, entries, nil
}

// buildSchemaBins compiles, with the schema overlay, one test binary into sdir per
// test package that has test files, and sets r.bins.
func (r *runner) buildSchemaBins(ctx context.Context, sdir, overlay string) error {
	pkgs, err := listTestPackages(ctx, r.cfg.Dir, r.cfg.TestPackages)
	if err != nil {
		return err
	}
	for i, p := range pkgs {
		bin := filepath.Join(sdir, fmt.Sprintf("t%03d.test", i))
		cctx, cancel := context.WithTimeout(ctx, 2*buildAllowance)
		out, err := runGo(cctx, r.cfg.Dir, "test", "-c", "-vet=off", "-ldflags=-s -w",
			"-overlay="+overlay, "-o", bin, p.importPath)
		cancel()
		if err != nil {
			return fmt.Errorf("building the schema tests of %s: %s", p.importPath, clip(string(out)))
		}
		r.bins = append(r.bins, &testBin{pkg: p.importPath, dir: p.dir, path: bin, skip: r.cfg.Skip})
	}
	if len(r.bins) == 0 {
		return fmt.Errorf("%w: no test files in %v", ErrBaseline, r.cfg.TestPackages)
	}
	return nil
}

// measureSchemaBaselines runs each schema binary with no mutant on; it must pass. Its
// run time sets the binary's timeout.
func (r *runner) measureSchemaBaselines(ctx context.Context) error {
	for _, b := range r.bins {
		began := time.Now()
		res := runBin(ctx, b, 0, schemaBaselineMax)
		b.baseline = time.Since(began)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if res.failed || res.timedOut {
			return fmt.Errorf("%w: %s (schema build): %s", ErrBaseline, b.pkg, clip(res.failDetail))
		}
		b.timeout = r.cfg.timeoutFor(b.baseline)
	}
	return nil
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
	raw, err := runGroup(cmd)
	out := string(raw)
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
			res.failedTest = b.pkg + "." + topLevelTest(m[1])
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
