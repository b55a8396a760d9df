// Package drift audits model-to-code drift: which functions of model/ and impl/
// implement which action of spec/tla/SoundGate.tla (a //spec:action directive, pinned
// to the action's parsed TLA+), which actions a change touches, and what evidence
// must run again for them. cmd/drift is its command; docs/verify/drift.md says what a
// verdict does and does not establish.
package drift

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/soundgate/soundgate/internal/goast"
)

// Prefix starts a directive: `//spec:action NAME pin=HEX`, one line of the doc
// comment of the function that implements the spec's action NAME.
const Prefix = "//spec:action"

var directiveRE = regexp.MustCompile(`^//spec:action ([A-Za-z_][A-Za-z0-9_]*)(?: pin=([0-9a-f]*))?$`)

// Directive is one //spec:action line.
type Directive struct {
	Action string
	Pin    string // "" when the line has none
	File   string // relative to the module's root, with slashes
	Line   int
	Func   string // the function it documents, "Recv.Name" for a method; "" if none
	Pkg    string // the package's directory, relative to the root
	Bad    string // why the line is not a directive, if it is not
}

// Pos is the directive's file:line.
func (d Directive) Pos() string { return fmt.Sprintf("%s:%d", d.File, d.Line) }

// Roots are the folders whose functions may implement actions.
var Roots = []string{"model", "impl"}

// ScanDirectives reads every non-test Go file under root's Roots and returns the
// directives in file and line order, each with the function it documents.
func ScanDirectives(root string) ([]Directive, error) {
	var out []Directive
	for _, top := range Roots {
		dir := filepath.Join(root, top)
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			continue // nothing implemented there: the standing rules say so
		}
		err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			ds, err := FileDirectives(filepath.ToSlash(rel), src)
			out = append(out, ds...)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out, nil
}

// FileDirectives returns the directives of one Go file (file is its name relative to
// the module's root). A directive outside a function's doc comment, or a second one on
// a function, is returned with Bad set.
func FileDirectives(file string, src []byte) ([]Directive, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	owner := map[*ast.Comment]string{}
	for _, decl := range f.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok && fn.Doc != nil {
			for _, c := range fn.Doc.List {
				owner[c] = FuncName(fn)
			}
		}
	}
	var out []Directive
	seen := map[string]bool{}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if !strings.HasPrefix(c.Text, Prefix) {
				continue
			}
			d := Directive{File: file, Line: fset.Position(c.Pos()).Line, Func: owner[c], Pkg: filepath.ToSlash(filepath.Dir(file))}
			m := directiveRE.FindStringSubmatch(c.Text)
			switch {
			case m == nil:
				d.Bad = fmt.Sprintf("malformed: want %q, got %q", Prefix+" NAME pin=HEX", c.Text)
			case d.Func == "":
				d.Bad = "not in the doc comment of a function"
			case seen[d.Func]:
				d.Bad = fmt.Sprintf("a second directive on %s", d.Func)
			}
			if m != nil {
				d.Action, d.Pin = m[1], m[2]
			}
			seen[d.Func] = seen[d.Func] || d.Func != ""
			out = append(out, d)
		}
	}
	return out, nil
}

// FuncName is how drift names a function: goast.FuncName.
func FuncName(fn *ast.FuncDecl) string { return goast.FuncName(fn) }
