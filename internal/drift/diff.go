package drift

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/soundgate/soundgate/tlacheck"
)

// ErrGit reports a git command that failed (a base that does not exist, no repository).
var ErrGit = errors.New("drift: git failed")

// Kind says how a function or operator changed between the base and the working tree.
type Kind string

const (
	Changed Kind = "changed"
	Added   Kind = "added"
	Deleted Kind = "deleted"
)

// FuncChange is a Go function (or a file's package-level declarations, Func "(decls)")
// whose code differs between the base and the working tree. Comments do not count.
type FuncChange struct {
	File, Pkg, Func string
	Kind            Kind
}

// Key names the function across packages: "pkg.Func".
func (c FuncChange) Key() string { return c.Pkg + "." + c.Func }

// Decls stands for a file's declarations other than functions.
const Decls = "(decls)"

// Diff is what changed between a base revision and the working tree.
type Diff struct {
	Base  string
	Files []string     // every changed path, relative to the root
	Funcs []FuncChange // in model/ and impl/, test files left out
	// Ops are the spec's operators whose parsed definitions differ, by kind.
	Ops map[string]Kind
	// OldSpec is the spec at the base (nil if it had none).
	OldSpec *tlacheck.Operators
	// OldSpecSrc is its source.
	OldSpecSrc string
}

// ReadDiff compares root's working tree with base: both sides of every changed file
// are parsed, so that a deleted line counts as much as an added one.
func ReadDiff(root, base string, spec *tlacheck.Operators) (*Diff, error) {
	if _, err := git(root, "rev-parse", "--verify", "--quiet", base+"^{commit}"); err != nil {
		return nil, fmt.Errorf("%w: %q is not a revision here", ErrGit, base)
	}
	out, err := git(root, "diff", "--no-renames", "--name-only", base, "--", ".")
	if err != nil {
		return nil, err
	}
	untracked, err := git(root, "ls-files", "--others", "--exclude-standard", "--", ".") // new files not added yet
	if err != nil {
		return nil, err
	}
	d := &Diff{Base: base, Ops: map[string]Kind{}}
	for _, f := range strings.Split(strings.TrimSpace(string(out)+"\n"+string(untracked)), "\n") {
		if f != "" {
			d.Files = append(d.Files, f)
		}
	}
	for _, f := range d.Files {
		if !isImplGo(f) {
			continue
		}
		old, _ := git(root, "show", base+":"+f) // absent at the base: added
		cur, _ := os.ReadFile(filepath.Join(root, f))
		changes, err := funcChanges(f, old, cur)
		if err != nil {
			return nil, err
		}
		d.Funcs = append(d.Funcs, changes...)
	}
	if old, err := git(root, "show", base+":"+SpecPath); err == nil {
		d.OldSpecSrc = string(old)
		if d.OldSpec, err = tlacheck.ParseOperators(d.OldSpecSrc); err != nil {
			return nil, fmt.Errorf("%s at %s: %v", SpecPath, base, err)
		}
	}
	d.Ops = opChanges(d.OldSpec, spec)
	return d, nil
}

func isImplGo(f string) bool {
	if !strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "_test.go") {
		return false
	}
	for _, r := range Roots {
		if strings.HasPrefix(f, r+"/") {
			return true
		}
	}
	return false
}

// funcChanges compares the functions of two versions of a Go file (nil: absent).
func funcChanges(file string, old, cur []byte) ([]FuncChange, error) {
	a, err := funcTexts(file, old)
	if err != nil {
		return nil, fmt.Errorf("%s at the base: %v", file, err)
	}
	b, err := funcTexts(file, cur)
	if err != nil {
		return nil, err
	}
	pkg := filepath.ToSlash(filepath.Dir(file))
	var out []FuncChange
	for name, text := range b {
		switch prev, ok := a[name]; {
		case !ok:
			out = append(out, FuncChange{file, pkg, name, Added})
		case prev != text:
			out = append(out, FuncChange{file, pkg, name, Changed})
		}
	}
	for name := range a {
		if _, ok := b[name]; !ok {
			out = append(out, FuncChange{file, pkg, name, Deleted})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Func < out[j].Func })
	return out, nil
}

// funcTexts maps each function of a file to a canonical encoding of its syntax tree,
// and Decls to that of the other declarations, so that comments and layout do not
// count.
func funcTexts(file string, src []byte) (map[string]string, error) {
	out := map[string]string{}
	if src == nil {
		return out, nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, 0) // no comments: they do not count
	if err != nil {
		return nil, err
	}
	var decls bytes.Buffer
	for _, decl := range f.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok {
			out[FuncName(fn)] = goCanon(fn)
			continue
		}
		if g, ok := decl.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			continue // imports follow the code that uses them
		}
		decls.WriteString(goCanon(decl))
	}
	if decls.Len() > 0 {
		out[Decls] = decls.String()
	}
	return out, nil
}

var (
	goPos      = reflect.TypeOf(token.NoPos)
	goComments = reflect.TypeOf((*ast.CommentGroup)(nil))
	goObject   = reflect.TypeOf((*ast.Object)(nil))
	goScope    = reflect.TypeOf((*ast.Scope)(nil))
)

// goCanon encodes a Go syntax tree: node types and fields in order, lengths before
// contents, without positions, comments or the parser's (cyclic) objects.
func goCanon(n any) string {
	var b []byte
	var enc func(reflect.Value)
	str := func(s string) { b = append(strconv.AppendInt(b, int64(len(s)), 10), ':'); b = append(b, s...) }
	enc = func(v reflect.Value) {
		switch t := v.Type(); {
		case t == goPos, t == goComments, t == goObject, t == goScope:
			return
		}
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer:
			if v.IsNil() {
				str("nil")
				return
			}
			enc(v.Elem())
		case reflect.Struct:
			str(v.Type().Name())
			for i := 0; i < v.NumField(); i++ {
				enc(v.Field(i))
			}
		case reflect.Slice:
			str(strconv.Itoa(v.Len()))
			for i := 0; i < v.Len(); i++ {
				enc(v.Index(i))
			}
		case reflect.String:
			str(v.String())
		case reflect.Bool:
			str(strconv.FormatBool(v.Bool()))
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			str(strconv.FormatInt(v.Int(), 10))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			str(strconv.FormatUint(v.Uint(), 10))
		default:
			panic(fmt.Sprintf("drift: no canonical encoding of %s", v.Type()))
		}
	}
	enc(reflect.ValueOf(n))
	return string(b)
}

// opChanges compares the spec's operators at the base and now.
func opChanges(old, cur *tlacheck.Operators) map[string]Kind {
	out := map[string]Kind{}
	if old == nil {
		old = &tlacheck.Operators{}
	}
	for name, def := range cur.Defs {
		switch prev, ok := old.Defs[name]; {
		case !ok:
			out[name] = Added
		case prev != def:
			out[name] = Changed
		}
	}
	for name := range old.Defs {
		if _, ok := cur.Defs[name]; !ok {
			out[name] = Deleted
		}
	}
	return out
}

// TouchedBySpec returns the actions (of either side) whose definition, or one it
// reaches on either side, changed.
func (d *Diff) TouchedBySpec(cur *tlacheck.Operators) map[string]bool {
	out := map[string]bool{}
	for _, ops := range []*tlacheck.Operators{d.OldSpec, cur} {
		if ops == nil {
			continue
		}
		for _, a := range ops.Actions {
			for _, n := range ops.Closure(a) {
				if d.Ops[n] != "" {
					out[a] = true
				}
			}
		}
	}
	return out
}

func git(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: git %s: %v: %s", ErrGit, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
