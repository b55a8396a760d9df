// Package impl_test holds the house to docs/architecture.md: what each package of
// impl/ may import, and that only impl/node steps the core.
package impl_test

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/packages"
)

const module = "github.com/soundgate/soundgate/"

// rule is one row of the import rules of docs/architecture.md.
type rule struct {
	module, elsewhere, forbidden []string
}

// importRules reads the table under "## Import rules" of docs/architecture.md.
func importRules(t *testing.T) map[string]rule {
	t.Helper()
	f, err := os.Open("../docs/architecture.md")
	require.NoError(t, err)
	defer f.Close()
	rules := map[string]rule{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "## ") {
			in = line == "## Import rules"
			continue
		}
		if !in || !strings.HasPrefix(line, "| impl/") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		require.Len(t, cells, 4, "docs/architecture.md: a row of the import rules has four cells: %s", line)
		list := func(s string) []string {
			s = strings.TrimSpace(s)
			if strings.HasPrefix(s, "(") {
				return nil // (nothing), (none)
			}
			var out []string
			for _, x := range strings.Split(s, ",") {
				out = append(out, strings.TrimSpace(x))
			}
			return out
		}
		name := strings.TrimSpace(cells[0])
		_, dup := rules[name]
		require.False(t, dup, "docs/architecture.md names %s twice", name)
		rules[name] = rule{module: list(cells[1]), elsewhere: list(cells[2]), forbidden: list(cells[3])}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, rules, "docs/architecture.md has no import rules")
	return rules
}

// TestImportRules: every package of impl/ imports only what docs/architecture.md
// allows it, and every package of impl/ has a row there.
func TestImportRules(t *testing.T) {
	rules := importRules(t)
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports, Dir: ".."}, "./impl/...")
	require.NoError(t, err)
	require.Greater(t, len(pkgs), 10)
	for _, p := range pkgs {
		name := strings.TrimPrefix(p.PkgPath, module)
		if len(p.GoFiles) == 0 {
			continue // tests only (this package)
		}
		for _, e := range p.Errors {
			t.Errorf("%s: %v", name, e)
		}
		r, ok := rules[name]
		if !ok {
			t.Errorf("%s has no row in the import rules of docs/architecture.md", name)
			continue
		}
		for imp := range p.Imports {
			if err := r.check(imp); err != nil {
				t.Errorf("%s imports %s: %v (docs/architecture.md)", name, imp, err)
			}
		}
		delete(rules, name)
	}
	for name := range rules {
		t.Errorf("docs/architecture.md has a row for %s, which is not a package", name)
	}
}

func (r rule) check(imp string) error {
	switch {
	case strings.HasPrefix(imp, module):
		if !slices.Contains(r.module, strings.TrimPrefix(imp, module)) {
			return fmt.Errorf("not among %v", r.module)
		}
	case strings.Contains(strings.Split(imp, "/")[0], "."):
		if !slices.Contains(r.elsewhere, imp) {
			return fmt.Errorf("not among %v", r.elsewhere)
		}
	case slices.Contains(r.forbidden, imp):
		return fmt.Errorf("forbidden")
	}
	return nil
}

// stepCallersAllowed are the packages that may call core.Gate.Step: the node (the
// one door, and the replay of the log) and the core's own tests.
var stepCallersAllowed = []string{"impl/node", "impl/core", "impl/core_test"}

// TestOnlyTheNodeStepsTheCore: no package of the module, tests included, calls
// core.Gate.Step but impl/node and the core's own tests.
func TestOnlyTheNodeStepsTheCore(t *testing.T) {
	found := stepCallers(t, nil, "./...")
	for _, f := range found {
		t.Errorf("%s calls core.Gate.Step: only impl/node may (docs/architecture.md)", f)
	}
}

// TestStepCallersAreFound: the check of TestOnlyTheNodeStepsTheCore finds a call, a
// method value and a method expression of Step in a package that may not have them.
func TestStepCallersAreFound(t *testing.T) {
	dir, err := filepath.Abs("../conformance")
	require.NoError(t, err)
	fixture := filepath.Join(dir, "zz_step_fixture_test.go")
	overlay := map[string][]byte{fixture: []byte(`package conformance

import "github.com/soundgate/soundgate/impl/core"

func stepFixture(g *core.Gate) {
	g.Step(core.Command{})
	step := g.Step
	_ = step
	_ = (*core.Gate).Step
}
`)}
	found := stepCallers(t, overlay, "./conformance")
	var inFixture int
	for _, f := range found {
		if strings.Contains(f, "zz_step_fixture_test.go") {
			inFixture++
		}
	}
	require.Equal(t, 3, inFixture, "the fixture's uses of Step, found: %v", found)
}

// stepCallers loads the packages of patterns (tests included) and returns the
// positions where a package not in stepCallersAllowed uses core.Gate.Step.
func stepCallers(t *testing.T, overlay map[string][]byte, patterns ...string) []string {
	t.Helper()
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedSyntax |
		packages.NeedImports | packages.NeedDeps, Dir: "..", Tests: true, Overlay: overlay}
	pkgs, err := packages.Load(cfg, patterns...)
	require.NoError(t, err)
	var found []string
	seen := map[string]bool{}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if !strings.HasPrefix(p.PkgPath, module) || slices.Contains(stepCallersAllowed, strings.TrimPrefix(p.PkgPath, module)) {
			return
		}
		for _, e := range p.Errors {
			t.Errorf("%s: %v", p.ID, e)
		}
		for _, file := range p.Syntax {
			ast.Inspect(file, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok || !isStep(p.TypesInfo.Uses[sel.Sel]) {
					return true
				}
				pos := p.Fset.Position(sel.Sel.Pos()).String()
				if !seen[pos] {
					seen[pos] = true
					found = append(found, pos)
				}
				return true
			})
		}
	})
	return found
}

// isStep reports whether obj is the method Step of impl/core's Gate.
func isStep(obj types.Object) bool {
	fn, ok := obj.(*types.Func)
	if !ok || fn.Name() != "Step" || fn.Pkg() == nil || fn.Pkg().Path() != module+"impl/core" {
		return false
	}
	recv := fn.Type().(*types.Signature).Recv()
	return recv != nil && strings.HasSuffix(types.TypeString(recv.Type(), nil), "impl/core.Gate")
}

// TestRuleCheck: a rule refuses a module package it does not list, a package from
// elsewhere it does not list, and a forbidden package of the standard library.
func TestRuleCheck(t *testing.T) {
	r := rule{module: []string{"impl/core"}, elsewhere: []string{"golang.org/x/sys/unix"}, forbidden: []string{"net"}}
	for imp, ok := range map[string]bool{
		module + "impl/core": true, module + "impl/wal": false, "golang.org/x/sys/unix": true,
		"github.com/other/pkg": false, "net": false, "net/http": true, "fmt": true,
	} {
		require.Equal(t, ok, r.check(imp) == nil, "%s", imp)
	}
}
