package mutation

import (
	"bytes"
	"errors"
	"fmt"
	"go/scanner"
	"go/types"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Mutant schemata: instead of building one test binary per mutant, every mutant
// whose code can be wrapped is compiled into one binary per test package, switched on
// at run time by the environment variable schemaEnv:
//
//	a < b        becomes  func() bool { if soundgateMutantOn(7) { return a >= b }; return a < b }()
//	s += x       becomes  if soundgateMutantOn(8) { } else { s += x }
//	{ body }     becomes  { if soundgateMutantOn(9) { return 0, nil }; body }
//
// Only one switch is on per run, so a variant never needs its nested mutants, and the
// original branch holds them. The schema goes through the same type checker as each
// mutant; a wrapped node it rejects (a literal where a constant is required, a type
// the file cannot name) is left unwrapped and its mutants are run one by one with
// their own go test -overlay. A schema survivor is always confirmed by that
// one-by-one run, so a wrapper can speed up kills but never fake a survivor.

// schemaEnv is the environment variable that selects the active mutant (0: none).
const schemaEnv = "SOUNDGATE_MUTANT"

// schemaFileName is the helper file the overlay adds to each mutated package.
const schemaFileName = "zz_soundgate_mutant_schema.go"

// schemaCheckRoundsMax bounds the reject-and-recheck rounds of one package.
const schemaCheckRoundsMax = 30

// errSchema marks a schema error that could not be attributed to a wrapped node.
var errSchema = errors.New("soundgate/mutation: schema does not type check")

func schemaHelper(pkgName string, forCheck bool) []byte {
	if forCheck {
		// The type checker sees the same declarations without the imports, which the
		// loader did not load for this package.
		return []byte("package " + pkgName + "\n\nvar soundgateMutantID int\n\n" +
			"func soundgateMutantOn(id int) bool { return id == soundgateMutantID }\n")
	}
	return []byte("package " + pkgName + "\n\nimport (\n\tsoundgateOS \"os\"\n\tsoundgateStrconv \"strconv\"\n)\n\n" +
		"var soundgateMutantID, _ = soundgateStrconv.Atoi(soundgateOS.Getenv(\"" + schemaEnv + "\"))\n\n" +
		"func soundgateMutantOn(id int) bool { return id == soundgateMutantID }\n")
}

// snode is a wrapped expression or statement (or an insertion point) of one file.
type snode struct {
	start, end int
	kind       hostKind
	typ        string
	muts       []*Mutant
	kids       []*snode
	rejected   bool
	outStart   int // range of the node's rendering in the schema file
	outEnd     int
}

// schemaFile is the schema of one source file.
type schemaFile struct {
	index int // position in the package's CompiledGoFiles
	path  string
	src   []byte
	roots []*snode
	all   []*snode
}

// newSchemaFile groups the file's wrappable mutants into nested nodes.
func newSchemaFile(index int, path string, src []byte, ms []*Mutant) *schemaFile {
	f := &schemaFile{index: index, path: path, src: src}
	byKey := map[[3]int]*snode{}
	for _, m := range ms {
		if m.hostKind == hostNone {
			continue
		}
		k := [3]int{m.hostStart, m.hostEnd, int(m.hostKind)}
		n := byKey[k]
		if n == nil {
			n = &snode{start: m.hostStart, end: m.hostEnd, kind: m.hostKind, typ: m.hostType}
			byKey[k] = n
			f.all = append(f.all, n)
		}
		n.muts = append(n.muts, m)
	}
	sort.Slice(f.all, func(i, j int) bool {
		a, b := f.all[i], f.all[j]
		if a.start != b.start {
			return a.start < b.start
		}
		if a.end != b.end {
			return a.end > b.end
		}
		return a.kind == hostStmt && b.kind != hostStmt // a statement wraps its expression
	})
	var stack []*snode
	for _, n := range f.all {
		for len(stack) > 0 {
			top := stack[len(stack)-1]
			if n.start >= top.start && n.end <= top.end && !(n.start == top.end && n.start != top.start) {
				break
			}
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			f.roots = append(f.roots, n)
		} else {
			top := stack[len(stack)-1]
			top.kids = append(top.kids, n)
		}
		stack = append(stack, n)
	}
	return f
}

// render writes the schema file with every node that is not rejected wrapped.
func (f *schemaFile) render() []byte {
	var out bytes.Buffer
	f.renderRange(&out, 0, len(f.src), f.roots)
	return out.Bytes()
}

func (f *schemaFile) renderRange(out *bytes.Buffer, start, end int, kids []*snode) {
	pos := start
	for _, n := range kids {
		out.Write(f.src[pos:n.start])
		n.outStart = out.Len()
		f.renderNode(out, n)
		n.outEnd = out.Len()
		pos = n.end
	}
	out.Write(f.src[pos:end])
}

func (f *schemaFile) variant(n *snode, m *Mutant) string {
	return string(f.src[n.start:m.start]) + m.Replacement + string(f.src[m.end:n.end])
}

func (f *schemaFile) renderNode(out *bytes.Buffer, n *snode) {
	if n.rejected {
		f.renderRange(out, n.start, n.end, n.kids)
		return
	}
	switch n.kind {
	case hostInsert:
		for _, m := range n.muts {
			fmt.Fprintf(out, " if soundgateMutantOn(%d) {%s };", m.schemaID, m.Replacement)
		}
		f.renderRange(out, n.start, n.end, n.kids)
	case hostExpr:
		fmt.Fprintf(out, "func() %s { ", n.typ)
		for _, m := range n.muts {
			fmt.Fprintf(out, "if soundgateMutantOn(%d) { return %s }; ", m.schemaID, f.variant(n, m))
		}
		out.WriteString("return ")
		f.renderRange(out, n.start, n.end, n.kids)
		out.WriteString(" }()")
	case hostStmt:
		for _, m := range n.muts {
			fmt.Fprintf(out, "if soundgateMutantOn(%d) { %s } else ", m.schemaID, f.variant(n, m))
		}
		out.WriteString("{ ")
		f.renderRange(out, n.start, n.end, n.kids)
		out.WriteString(" }")
	}
}

// innermost returns the innermost wrapped node whose rendering holds offset off.
func (f *schemaFile) innermost(off int) *snode {
	var best *snode
	var walk func([]*snode)
	walk = func(ns []*snode) {
		for _, n := range ns {
			if off < n.outStart || off >= n.outEnd {
				continue
			}
			if !n.rejected {
				best = n
			}
			walk(n.kids)
		}
	}
	walk(f.roots)
	return best
}

// nextOnLine returns the wrapped node that starts first at or after off on the same
// line of the rendering out. The type checker reports some errors at the start of the
// expression that holds a wrapped node rather than inside it: in -(func() int {...}()),
// an untyped constant's wrapper given its default type, the error is at the minus.
func (f *schemaFile) nextOnLine(off int, out []byte) *snode {
	var best *snode
	for _, n := range f.all {
		if n.rejected || n.outStart < off || n.outStart > len(out) {
			continue
		}
		if bytes.IndexByte(out[off:n.outStart], '\n') >= 0 {
			continue
		}
		if best == nil || n.outStart < best.outStart || (n.outStart == best.outStart && n.outEnd < best.outEnd) {
			best = n
		}
	}
	return best
}

// packageSchema is the schema of one package: its files and the overlay entries.
type packageSchema struct {
	pkg   *packages.Package
	files []*schemaFile
	// Rejected counts the wrapped nodes the type checker refused.
	rejected int
}

// buildSchema numbers the package's wrappable mutants from *next and type checks the
// schema, unwrapping each node an error points into until the package checks.
func buildSchema(t target, ms []*Mutant, next *int) (*packageSchema, error) {
	ps, err := newPackageSchema(t.pkg, ms, next)
	if err != nil {
		return nil, err
	}
	ps.check()
	for _, f := range ps.files {
		for _, n := range f.all {
			if n.rejected {
				for _, m := range n.muts {
					m.schemaID = 0
				}
			}
		}
	}
	return ps, nil
}

// newPackageSchema groups the wrappable mutants of p by file, numbering them from
// *next in file order.
func newPackageSchema(p *packages.Package, ms []*Mutant, next *int) (*packageSchema, error) {
	byFile := map[string][]*Mutant{}
	for _, m := range ms {
		if m.hostKind != hostNone {
			byFile[m.absFile] = append(byFile[m.absFile], m)
		}
	}
	ps := &packageSchema{pkg: p}
	for i, path := range p.CompiledGoFiles {
		fm := byFile[path]
		if len(fm) == 0 {
			continue
		}
		for _, m := range fm {
			*next++
			m.schemaID = *next
		}
		ps.files = append(ps.files, newSchemaFile(i, path, fm[0].src, fm))
	}
	return ps, nil
}

// check type checks the rendered schema and rejects the nodes its errors point into,
// round after round, until it checks. An error no node can be blamed for rejects
// every node: then all the package's mutants run one by one.
func (ps *packageSchema) check() {
	p := ps.pkg
	helper := map[string][]byte{
		filepath.Join(filepath.Dir(p.CompiledGoFiles[0]), schemaFileName): schemaHelper(p.Types.Name(), true),
	}
	for round := 0; round < schemaCheckRoundsMax; round++ {
		rendered := map[int][]byte{}
		for _, f := range ps.files {
			rendered[f.index] = f.render()
		}
		errs := typeCheckFiles(p, rendered, helper, 100)
		if len(errs) == 0 {
			break
		}
		if !ps.rejectAt(errs, rendered) {
			ps.rejectAll()
			if round > 0 {
				break
			}
		}
	}
}

// rejectAt rejects the wrapped node each error points into (or, failing that, the
// next one on its line) and reports whether it rejected any.
func (ps *packageSchema) rejectAt(errs []error, rendered map[int][]byte) bool {
	byPath := map[string]*schemaFile{}
	for _, f := range ps.files {
		byPath[f.path] = f
	}
	progress := false
	for _, err := range errs {
		for _, pos := range errorPositions(err) {
			f := byPath[pos.file]
			if f == nil {
				continue
			}
			n := f.innermost(pos.off)
			if n == nil {
				n = f.nextOnLine(pos.off, rendered[f.index])
			}
			if n != nil {
				n.rejected = true
				ps.rejected++
				progress = true
			}
		}
	}
	return progress
}

// rejectAll rejects every node that is still wrapped.
func (ps *packageSchema) rejectAll() {
	for _, f := range ps.files {
		for _, n := range f.all {
			if !n.rejected {
				n.rejected = true
				ps.rejected++
			}
		}
	}
}

type errPos struct {
	file string
	off  int
}

func errorPositions(err error) []errPos {
	var te types.Error
	if errors.As(err, &te) {
		p := te.Fset.Position(te.Pos)
		return []errPos{{p.Filename, p.Offset}}
	}
	var el scanner.ErrorList
	if errors.As(err, &el) {
		var out []errPos
		for _, e := range el {
			out = append(out, errPos{e.Pos.Filename, e.Pos.Offset})
		}
		return out
	}
	return nil
}

// overlay returns the overlay entries (original path -> schema content) of the
// package: the rendered files and the helper.
func (ps *packageSchema) overlay() map[string][]byte {
	out := map[string][]byte{}
	any := false
	for _, f := range ps.files {
		out[f.path] = f.render()
		for _, n := range f.all {
			if !n.rejected {
				any = true
			}
		}
	}
	if !any {
		return nil
	}
	dir := filepath.Dir(ps.pkg.CompiledGoFiles[0])
	out[filepath.Join(dir, schemaFileName)] = schemaHelper(ps.pkg.Types.Name(), false)
	return out
}

// wrapped counts the mutants the schema switches.
func (ps *packageSchema) wrapped() int {
	n := 0
	for _, f := range ps.files {
		for _, s := range f.all {
			if !s.rejected {
				n += len(s.muts)
			}
		}
	}
	return n
}

func describeSchema(ps []*packageSchema) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, fmt.Sprintf("%s: %d mutants wrapped, %d nodes unwrapped", p.pkg.PkgPath, p.wrapped(), p.rejected))
	}
	return strings.Join(parts, "; ")
}
