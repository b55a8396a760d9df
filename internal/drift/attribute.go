package drift

import (
	"fmt"
	"go/ast"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/callgraph"
	"golang.org/x/tools/go/callgraph/cha"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

// Reach maps each function of model/ and impl/ ("pkg.Func", as FuncChange.Key) to the
// actions it takes part in: those whose implementations reach it in the call graph
// (an implementation reaches itself), and, for a function of a package in
// ImplementedIn, those whose implementations it reaches (the core's door, Step, takes
// part in every action). The shell's callers of the core are not attributed: their
// changes are the server's (Classify).
type Reach map[string]map[string]bool

func (r Reach) add(k, action string) {
	if r[k] == nil {
		r[k] = map[string]bool{}
	}
	r[k][action] = true
}

// Attribute builds the call graph of root's model/ and impl/ packages (class
// hierarchy analysis: an interface call reaches every method that could answer it,
// so attribution errs towards more actions, never fewer) and returns what each
// directive's function reaches within them.
func Attribute(root string, ds []Directive) (Reach, error) {
	cfg := &packages.Config{Dir: root, Mode: packages.LoadAllSyntax}
	var patterns []string
	for _, r := range Roots {
		patterns = append(patterns, "./"+r+"/...")
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, err
	}
	if packages.PrintErrors(pkgs) > 0 {
		return nil, fmt.Errorf("drift: the packages of %s do not load", strings.Join(patterns, " "))
	}
	prog, _ := ssautil.AllPackages(pkgs, ssa.InstantiateGenerics)
	prog.Build()
	graph := cha.CallGraph(prog)
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	keyOf := func(fn *ssa.Function) string { return funcKey(prog, fn, absRoot) }
	impl := map[string][]string{} // key -> actions
	for _, d := range ds {
		if d.Bad == "" {
			impl[d.Pkg+"."+d.Func] = append(impl[d.Pkg+"."+d.Func], d.Action)
		}
	}
	reach := Reach{}
	for fn, node := range graph.Nodes {
		if fn == nil {
			continue
		}
		actions := impl[keyOf(fn)]
		if len(actions) == 0 {
			continue
		}
		for _, a := range actions {
			walk(node, keyOf, false, func(k string) { reach.add(k, a) })
			walk(node, keyOf, true, func(k string) { reach.add(k, a) })
		}
	}
	return reach, nil
}

// walk calls visit with the key of every function of the module's roots that start
// reaches (callers instead when up, and then only in ImplementedIn's packages), start
// included, and does not go through functions outside them.
func walk(start *callgraph.Node, keyOf func(*ssa.Function) string, up bool, visit func(string)) {
	seen := map[*callgraph.Node]bool{start: true}
	queue := []*callgraph.Node{start}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		k := keyOf(n.Func)
		if k == "" || up && !inImplementedIn(k) {
			continue
		}
		visit(k)
		edges := n.Out
		if up {
			edges = n.In
		}
		for _, e := range edges {
			next := e.Callee
			if up {
				next = e.Caller
			}
			if !seen[next] {
				seen[next] = true
				queue = append(queue, next)
			}
		}
	}
}

// inImplementedIn reports whether the function key k is in one of ImplementedIn's
// packages.
func inImplementedIn(k string) bool {
	for _, p := range ImplementedIn {
		if strings.HasPrefix(k, p+".") && !strings.Contains(strings.TrimPrefix(k, p+"."), "/") {
			return true
		}
	}
	return false
}

// funcKey is "pkgdir.Func" of a function declared in root's model/ or impl/ (a
// closure counts as the function it is written in), "" for any other.
func funcKey(prog *ssa.Program, fn *ssa.Function, root string) string {
	for fn.Parent() != nil {
		fn = fn.Parent()
	}
	if fn.Origin() != nil {
		fn = fn.Origin()
	}
	decl, ok := fn.Syntax().(*ast.FuncDecl)
	if !ok {
		return ""
	}
	file := prog.Fset.Position(decl.Pos()).Filename
	rel, err := filepath.Rel(root, file)
	if err != nil || strings.HasPrefix(rel, "..") || strings.HasSuffix(rel, "_test.go") {
		return ""
	}
	rel = filepath.ToSlash(rel)
	if !isImplGo(rel) {
		return ""
	}
	return filepath.ToSlash(filepath.Dir(rel)) + "." + FuncName(decl)
}
