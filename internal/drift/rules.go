package drift

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/soundgate/soundgate/tlacheck"
)

// SpecPath is the spec whose actions the directives name, relative to the root.
const SpecPath = "spec/tla/SoundGate.tla"

// ImplementedIn are the packages in which every action of Next must have an
// implementation.
var ImplementedIn = []string{"model", "impl/core"}

// Rule names a standing rule: each holds whatever a change is.
type Rule string

const (
	RuleMalformed     Rule = "malformed"     // a directive that cannot be read or documents no function
	RuleNamesNothing  Rule = "names-nothing" // a directive naming no action of Next
	RuleStale         Rule = "stale-pin"     // a pin other than the action's
	RuleUnimplemented Rule = "unimplemented" // an action of Next without an implementation in a package
)

// Finding is one broken standing rule.
type Finding struct {
	Rule   Rule
	Action string
	Pos    string // file:line, or the package for RuleUnimplemented
	Msg    string
}

func (f Finding) String() string { return fmt.Sprintf("%s: %s: %s", f.Pos, f.Rule, f.Msg) }

// LoadSpec parses root's spec into its operators.
func LoadSpec(root string) (*tlacheck.Operators, error) {
	src, err := os.ReadFile(filepath.Join(root, SpecPath))
	if err != nil {
		return nil, err
	}
	return tlacheck.ParseOperators(string(src))
}

// Standing checks the standing rules over the directives ds against the spec ops.
func Standing(ops *tlacheck.Operators, ds []Directive) []Finding {
	var out []Finding
	isAction := map[string]bool{}
	for _, a := range ops.Actions {
		isAction[a] = true
	}
	implemented := map[string]map[string]bool{} // package -> action
	for _, d := range ds {
		switch {
		case d.Bad != "":
			out = append(out, Finding{RuleMalformed, d.Action, d.Pos(), d.Bad})
		case !isAction[d.Action]:
			out = append(out, Finding{RuleNamesNothing, d.Action, d.Pos(),
				fmt.Sprintf("%s names %q, which is not an action of Next (%s)", d.Func, d.Action, strings.Join(ops.Actions, ", "))})
		case d.Pin != ops.Pin(d.Action):
			msg := fmt.Sprintf("%s: pin=%s, the spec's %s is pin=%s (its definition or one it reaches changed: review %s, then `drift -fix`)",
				d.Func, d.Pin, d.Action, ops.Pin(d.Action), d.Func)
			if d.Pin == "" {
				msg = fmt.Sprintf("%s: no pin; the spec's %s is pin=%s (`drift -fix` writes it)", d.Func, d.Action, ops.Pin(d.Action))
			}
			out = append(out, Finding{RuleStale, d.Action, d.Pos(), msg})
		}
		if d.Bad == "" && isAction[d.Action] {
			if implemented[d.Pkg] == nil {
				implemented[d.Pkg] = map[string]bool{}
			}
			implemented[d.Pkg][d.Action] = true
		}
	}
	for _, pkg := range ImplementedIn {
		for _, a := range ops.Actions {
			if !implemented[pkg][a] {
				out = append(out, Finding{RuleUnimplemented, a, pkg,
					fmt.Sprintf("no function of %s carries %s %s", pkg, Prefix, a)})
			}
		}
	}
	return out
}

// Fix rewrites, under root, the pin of every directive whose action exists and whose
// pin differs from the spec's, and returns the positions it rewrote.
func Fix(root string, ops *tlacheck.Operators, ds []Directive) ([]string, error) {
	byFile := map[string][]Directive{}
	for _, d := range ds {
		if d.Bad == "" && ops.Pin(d.Action) != "" && d.Pin != ops.Pin(d.Action) {
			byFile[d.File] = append(byFile[d.File], d)
		}
	}
	var done []string
	files := make([]string, 0, len(byFile))
	for f := range byFile {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, file := range files {
		path := filepath.Join(root, file)
		src, err := os.ReadFile(path)
		if err != nil {
			return done, err
		}
		lines := bytes.Split(src, []byte("\n"))
		for _, d := range byFile[file] {
			i := d.Line - 1
			if i >= len(lines) || !bytes.HasPrefix(bytes.TrimSpace(lines[i]), []byte(Prefix)) {
				return done, fmt.Errorf("%s: the directive moved while being fixed", d.Pos())
			}
			indent := lines[i][:len(lines[i])-len(bytes.TrimLeft(lines[i], " \t"))]
			lines[i] = []byte(fmt.Sprintf("%s%s %s pin=%s", indent, Prefix, d.Action, ops.Pin(d.Action)))
			done = append(done, d.Pos())
		}
		info, err := os.Stat(path)
		if err != nil {
			return done, err
		}
		if err := os.WriteFile(path, bytes.Join(lines, []byte("\n")), info.Mode()); err != nil {
			return done, err
		}
	}
	return done, nil
}
