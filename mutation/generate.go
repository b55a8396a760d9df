package mutation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

// ErrLoad is returned when the target packages cannot be loaded or do not type check.
var ErrLoad = errors.New("soundgate/mutation: cannot load packages")

// Stats counts what generation proposed and what it dropped.
type Stats struct {
	// Proposed counts the edits per operator before type checking.
	Proposed map[Operator]int `json:"proposed"`
	// Discarded counts the edits per operator the type checker rejected: mutants
	// that could never compile and are therefore never run nor counted.
	Discarded map[Operator]int `json:"discarded"`
	// Generated counts the mutants per operator that remain.
	Generated map[Operator]int `json:"generated"`
}

func newStats() Stats {
	return Stats{Proposed: map[Operator]int{}, Discarded: map[Operator]int{}, Generated: map[Operator]int{}}
}

// target is one loaded package with what generation needs.
type target struct {
	pkg     *packages.Package // the package with its in-package test files, if any
	plain   *packages.Package // the package without test files
	modRoot string
}

// load loads patterns (relative to dir) with syntax and types, with tests so that a
// mutant is also checked against the package's own test files.
func load(ctx context.Context, dir string, patterns []string) ([]target, error) {
	cfg := &packages.Config{
		Context: ctx,
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedSyntax | packages.NeedTypes |
			packages.NeedTypesInfo | packages.NeedImports | packages.NeedModule,
		Dir:   dir,
		Tests: true,
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%w while loading the packages", ErrInterrupted)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLoad, err)
	}
	var msgs []string
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			msgs = append(msgs, e.Error())
		}
	})
	if len(msgs) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrLoad, strings.Join(msgs, "; "))
	}
	byPath := map[string]*target{}
	var order []string
	for _, p := range pkgs {
		if strings.HasSuffix(p.PkgPath, "_test") || strings.HasSuffix(p.ID, ".test") {
			continue // external test packages and test mains are not mutated
		}
		t := byPath[p.PkgPath]
		if t == nil {
			t = &target{}
			byPath[p.PkgPath] = t
			order = append(order, p.PkgPath)
		}
		if p.ID == p.PkgPath {
			t.plain = p
		} else {
			t.pkg = p // "path [path.test]": the package compiled with its test files
		}
		if p.Module != nil {
			t.modRoot = p.Module.Dir
		}
	}
	var out []target
	for _, path := range order {
		t := byPath[path]
		if t.plain == nil {
			continue
		}
		if t.pkg == nil {
			t.pkg = t.plain
		}
		if t.modRoot == "" {
			return nil, fmt.Errorf("%w: %s is not in a module", ErrLoad, path)
		}
		out = append(out, *t)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no package matches %v", ErrLoad, patterns)
	}
	return out, nil
}

// generate proposes, type checks and names the mutants of the loaded targets. Type
// checking every mutant of a large package takes a while: ctx ends it.
func generate(ctx context.Context, targets []target, stats *Stats) ([]*Mutant, error) {
	var all []*Mutant
	for _, t := range targets {
		ms, err := generatePackage(ctx, t, stats)
		if err != nil {
			return nil, err
		}
		all = append(all, ms...)
	}
	return all, nil
}

func generatePackage(ctx context.Context, t target, stats *Stats) ([]*Mutant, error) {
	p := t.pkg
	plainFiles := map[string]bool{}
	for _, f := range t.plain.CompiledGoFiles {
		plainFiles[f] = true
	}
	var out []*Mutant
	for i, file := range p.Syntax {
		path := p.CompiledGoFiles[i]
		if !plainFiles[path] || strings.HasSuffix(path, "_test.go") || ast.IsGenerated(file) {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrLoad, err)
		}
		g := &fileGen{fset: p.Fset, info: p.TypesInfo, pkg: p.Types, file: file, src: src}
		edits := g.generate()
		rel, err := filepath.Rel(t.modRoot, path)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrLoad, err)
		}
		rel = filepath.ToSlash(rel)
		seen := map[string]int{}
		for _, e := range edits {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%w while generating mutants", ErrInterrupted)
			}
			stats.Proposed[e.op]++
			m := g.mutant(e, t, path, rel)
			if err := typeCheck(p, i, m.Apply(src)); err != nil {
				if e.alt == "" {
					stats.Discarded[e.op]++
					continue
				}
				e.repl = e.alt
				m = g.mutant(e, t, path, rel)
				if err := typeCheck(p, i, m.Apply(src)); err != nil {
					stats.Discarded[e.op]++
					continue
				}
			}
			seen[m.ID]++
			if n := seen[m.ID]; n > 1 {
				m.ID = fmt.Sprintf("%s~%d", m.ID, n)
			}
			stats.Generated[e.op]++
			out = append(out, m)
		}
	}
	return out, nil
}

// mutant turns an edit into a Mutant with its stable id.
func (g *fileGen) mutant(e edit, t target, abs, rel string) *Mutant {
	start, end := g.off(e.start), g.off(e.end)
	pos := g.fset.Position(e.start)
	ctxStart, ctxEnd := g.off(e.ctx.Pos()), g.off(e.ctx.End())
	if fd, ok := e.ctx.(*ast.FuncDecl); ok && fd.Body != nil {
		ctxEnd = g.off(fd.Body.Lbrace) // the signature: edits in the body do not rename
	}
	ctx := strings.Join(strings.Fields(string(g.src[ctxStart:ctxEnd])), " ")
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d\x00%s\x00%s", e.op, e.fn, ctx, start-ctxStart,
		g.src[start:end], e.repl)
	fn := e.fn
	if fn == "" {
		fn = "_"
	}
	m := &Mutant{
		ID:          fmt.Sprintf("%s:%s:%s:%s", rel, fn, e.op, hex.EncodeToString(h.Sum(nil))[:8]),
		Operator:    e.op,
		Package:     t.plain.PkgPath,
		File:        rel,
		Func:        e.fn,
		Line:        pos.Line,
		Col:         pos.Column,
		EndLine:     g.fset.Position(e.span[1]).Line,
		Original:    string(g.src[start:end]),
		Replacement: e.repl,
		Status:      StatusPending,
		absFile:     abs,
		src:         g.src,
		start:       start,
		end:         end,
		inBody:      e.body,
		spanStart:   g.fset.Position(e.span[0]).Line,
	}
	switch e.hostKind {
	case hostInsert:
		m.hostStart, m.hostEnd, m.hostKind = start, start, hostInsert
	case hostStmt:
		m.hostStart, m.hostEnd, m.hostKind = g.off(e.host.Pos()), g.off(e.host.End()), hostStmt
	case hostExpr:
		if typ, ok := g.spell(g.info.TypeOf(e.host.(ast.Expr))); ok {
			m.hostStart, m.hostEnd, m.hostKind, m.hostType = g.off(e.host.Pos()), g.off(e.host.End()), hostExpr, typ
		}
	}
	return m
}

// typeCheck checks the package with file i replaced by src and returns the first
// error. The mutated file is parsed into the loader's file set, which is safe for
// concurrent use and only grows.
func typeCheck(p *packages.Package, i int, src []byte) error {
	errs := typeCheckFiles(p, map[int][]byte{i: src}, nil, 1)
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// typeCheckFiles checks the package with some files replaced and extra files added
// (name -> source), and returns up to maxErrs errors (parse errors included).
func typeCheckFiles(p *packages.Package, replaced map[int][]byte, extra map[string][]byte, maxErrs int) []error {
	var errs []error
	files := make([]*ast.File, len(p.Syntax))
	copy(files, p.Syntax)
	for i, src := range replaced {
		f, err := parser.ParseFile(p.Fset, p.CompiledGoFiles[i], src, parser.SkipObjectResolution)
		if err != nil {
			return append(errs, err)
		}
		files[i] = f
	}
	for name, src := range extra {
		f, err := parser.ParseFile(p.Fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			return append(errs, err)
		}
		files = append(files, f)
	}
	imports := map[string]*types.Package{}
	for _, ip := range p.Types.Imports() {
		imports[ip.Path()] = ip
	}
	conf := types.Config{
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if ip, ok := imports[path]; ok {
				return ip, nil
			}
			return nil, fmt.Errorf("%w: import %q not loaded", ErrLoad, path)
		}),
		Error: func(err error) {
			if len(errs) < maxErrs {
				errs = append(errs, err)
			}
		},
	}
	if p.Module != nil && p.Module.GoVersion != "" {
		conf.GoVersion = "go" + p.Module.GoVersion
	}
	_, _ = conf.Check(p.PkgPath, p.Fset, files, nil)
	return errs
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// sortMutants orders mutants by file, position and id.
func sortMutants(ms []*Mutant) {
	sort.Slice(ms, func(i, j int) bool {
		a, b := ms[i], ms[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.start != b.start {
			return a.start < b.start
		}
		return a.ID < b.ID
	})
}
