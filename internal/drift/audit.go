package drift

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/soundgate/soundgate/tlacheck"
)

// Verdict of an action, of a change, of the audit.
type Verdict string

const (
	OK     Verdict = "ok"     // nothing to say: what changed was rechecked and holds
	Review Verdict = "review" // holds, but a reviewer must look (exit 3 under -strict)
	Drift  Verdict = "drift"  // the spec and the code disagree, or a rule is broken (exit 1)
	// Unchecked: evidence the change calls for could not run here, and nothing else
	// found drift: no verdict (exit 2).
	Unchecked Verdict = "unchecked"
)

func worse(a, b Verdict) Verdict {
	rank := map[Verdict]int{OK: 0, Review: 1, Drift: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// ShellPackages are the gate's shell around the core: a change there is the server's
// (the wire, the node, the log), seen by wire conformance and trace validation.
var ShellPackages = []string{"impl/server", "impl/node", "impl/wal", "impl/proto"}

// Row is one touched action.
type Row struct {
	Action string `json:"action"`
	// What changed of it: its spec operators (or one they reach), model or core
	// functions that take part in it.
	Spec  bool `json:"spec"`
	Model bool `json:"model"`
	Core  bool `json:"core"`
	// SpecBehaviour: its edges on BehaviourConfig differ from the base's.
	SpecBehaviour bool     `json:"spec_behaviour"`
	Acked         string   `json:"acked,omitempty"` // the Drift-Ack reason, if any
	Evidence      []string `json:"evidence"`
	Verdict       Verdict  `json:"verdict"`
	Why           []string `json:"why,omitempty"`
}

// Report is an audit's result.
type Report struct {
	Base      string       `json:"base,omitempty"`
	Files     int          `json:"files_changed"`
	Standing  []Finding    `json:"standing"`
	Rows      []Row        `json:"actions"`
	Shell     []FuncChange `json:"shell_changes"`
	Unmapped  []FuncChange `json:"unmapped_changes"`
	Checks    []string     `json:"checks_changed"` // files of the checks themselves
	Results   []Result     `json:"evidence"`
	Notes     []string     `json:"notes"`
	Verdict   Verdict      `json:"verdict"`
	ExitCode  int          `json:"exit_code"`
	directive []Directive
}

// Options of an audit.
type Options struct {
	Root, Base string
	Strict     bool
	Acks       string    // text holding Drift-Ack lines besides the commits' (a PR's body)
	LogDir     string    // the evidence's logs
	Progress   io.Writer // what runs, as it runs
}

var ackRE = regexp.MustCompile(`(?m)^Drift-Ack:\s*([A-Za-z_][A-Za-z0-9_]*)\s*[:-]\s*(\S.*)$`)

// Audit checks the standing rules and, with a base, what the change since it touches.
func Audit(o Options) (*Report, error) {
	ops, err := LoadSpec(o.Root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", SpecPath, err)
	}
	ds, err := ScanDirectives(o.Root)
	if err != nil {
		return nil, err
	}
	rep := &Report{Base: o.Base, Standing: Standing(ops, ds), Verdict: OK, directive: ds}
	if o.Base == "" {
		if len(rep.Standing) > 0 {
			rep.Verdict = Drift
		}
		rep.ExitCode = exitOf(rep.Verdict, o.Strict)
		return rep, nil
	}
	d, err := ReadDiff(o.Root, o.Base, ops)
	if err != nil {
		return nil, err
	}
	rep.Files = len(d.Files)
	reach, err := Attribute(o.Root, ds)
	if err != nil {
		return nil, err
	}
	rows := rep.touch(d, ops, reach)
	behaviour := map[string]bool{}
	if len(d.Ops) > 0 {
		if d.OldSpec == nil {
			rep.Notes = append(rep.Notes, "the base has no spec: every action counts as changed")
			for _, a := range ops.Actions {
				behaviour[a] = true
			}
		} else if behaviour, err = BehaviourChanged(o.Root, d.OldSpecSrc, ops); err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("the spec's behaviour could not be compared (every action counts as changed): %v", err))
		}
	}
	acks, err := readAcks(o)
	if err != nil {
		return nil, err
	}
	rep.runEvidence(o, d, rows, ops.Actions)
	rep.judge(rows, behaviour, acks)
	rep.ExitCode = exitOf(rep.Verdict, o.Strict)
	for _, r := range rep.Results {
		if r.Missing && rep.Verdict != Drift { // no verdict rests on a check that did not run
			rep.Notes = append(rep.Notes, fmt.Sprintf("evidence %s %s: no verdict", r.Name, r.Last))
			rep.Verdict, rep.ExitCode = Unchecked, 2
		}
	}
	return rep, nil
}

// touch builds a row per action the change touches, and sorts the other changes into
// the shell's and the unmapped.
func (rep *Report) touch(d *Diff, ops *tlacheck.Operators, reach Reach) map[string]*Row {
	rows := map[string]*Row{}
	row := func(a string) *Row {
		if rows[a] == nil {
			rows[a] = &Row{Action: a}
		}
		return rows[a]
	}
	for a := range d.TouchedBySpec(ops) {
		row(a).Spec = true
	}
	for _, c := range d.Funcs {
		actions := reach[c.Key()]
		switch {
		case len(actions) > 0 && (c.Pkg == "model" || strings.HasPrefix(c.Pkg, "model/")):
			for a := range actions {
				row(a).Model = true
			}
		case len(actions) > 0 && inImplementedIn(c.Key()):
			for a := range actions {
				row(a).Core = true
			}
		case inShell(c.Pkg):
			rep.Shell = append(rep.Shell, c)
		default:
			rep.Unmapped = append(rep.Unmapped, c)
		}
	}
	return rows
}

func inShell(pkg string) bool {
	for _, p := range ShellPackages {
		if pkg == p || strings.HasPrefix(pkg, p+"/") {
			return true
		}
	}
	return false
}

// runEvidence runs what the touched actions and the shell's changes call for, each
// check once.
func (rep *Report) runEvidence(o Options, d *Diff, rows map[string]*Row, actions []string) {
	var spec, model, core bool
	for _, r := range rows {
		spec, model, core = spec || r.Spec, model || r.Model, core || r.Core
	}
	coreLines := false
	for _, c := range d.Funcs {
		coreLines = coreLines || c.Pkg == "impl/core"
	}
	checks := rep.checksChanged(d.Files)
	var evs []Evidence
	if spec || model || core || checks["graphs"] {
		evs = append(evs, EvGraphs)
	}
	if spec || checks["broken"] {
		evs = append(evs, EvBroken)
	}
	if spec || model || core || checks["conformance"] {
		var touched []string // the spec's actions now: a deleted one has nothing to draw
		for _, a := range actions {
			if rows[a] != nil {
				touched = append(touched, a)
			}
		}
		evs = append(evs, EvConformance(touched))
	}
	if coreLines {
		evs = append(evs, EvMutation(o.Base))
	}
	if len(rep.Shell) > 0 || checks["wire"] {
		evs = append(evs, EvWire)
	}
	if len(rep.Shell) > 0 || checks["trace"] {
		evs = append(evs, EvTrace)
	}
	for _, e := range evs {
		rep.Results = append(rep.Results, e.Run(o.Root, o.LogDir, o.Progress))
	}
	for _, r := range rows {
		for _, res := range rep.Results {
			if res.Name != "wire" && res.Name != "trace" {
				r.Evidence = append(r.Evidence, res.Name)
			}
		}
		rep.Rows = append(rep.Rows, *r)
	}
	sort.Slice(rep.Rows, func(i, j int) bool { return rep.Rows[i].Action < rep.Rows[j].Action })
}

// CheckPaths are the folders and files of the checks themselves, each with the
// evidence that must run again when it changes: a weakened check is drift too.
var CheckPaths = []struct {
	Prefix   string
	Evidence []string
}{
	{"tlacheck/", []string{"graphs", "broken"}},
	{"spec/tla/broken/", []string{"broken"}},
	{"spec/tla/SoundGate_", []string{"graphs"}}, // the configurations
	{"model/", []string{"graphs"}},              // its tests (its code is attributed)
	{"conformance/", []string{"conformance", "wire"}},
	{"internal/tracecheck/", []string{"trace"}},
}

// checksChanged returns the evidence whose checks the change touched, and records the
// files in the report.
func (rep *Report) checksChanged(files []string) map[string]bool {
	out := map[string]bool{}
	for _, f := range files {
		for _, c := range CheckPaths {
			if strings.HasPrefix(f, c.Prefix) && (c.Prefix != "model/" || strings.HasSuffix(f, "_test.go")) {
				rep.Checks = append(rep.Checks, f)
				for _, e := range c.Evidence {
					out[e] = true
				}
				break
			}
		}
	}
	return out
}

// judge gives each row, and the audit, its verdict.
func (rep *Report) judge(rows map[string]*Row, behaviour map[string]bool, acks map[string]string) {
	failed := map[string]bool{}
	for _, res := range rep.Results {
		if !res.Passed && !res.Missing {
			failed[res.Name] = true
			rep.Verdict = Drift
		}
	}
	standing := map[string]Verdict{} // action -> the worst of its standing findings
	for _, f := range rep.Standing {
		v := Drift
		if f.Rule == RuleStale && rows[f.Action] != nil && rows[f.Action].Spec && !behaviour[f.Action] {
			v = Review // pins stale on a refactor of the action's text
		}
		standing[f.Action] = worse(standing[f.Action], v)
		rep.Verdict = worse(rep.Verdict, v)
	}
	for i := range rep.Rows {
		r := &rep.Rows[i]
		r.SpecBehaviour = r.Spec && behaviour[r.Action]
		r.Acked = acks[r.Action]
		r.Verdict = worse(OK, standing[r.Action])
		if standing[r.Action] != "" {
			r.Why = append(r.Why, "a standing rule is broken (above)")
		}
		for _, e := range r.Evidence {
			if failed[e] {
				r.Verdict, r.Why = Drift, append(r.Why, e+" failed")
			}
		}
		if r.Spec && !r.SpecBehaviour {
			r.Why = append(r.Why, "the spec's text changed, its edges on "+filepath.Base(BehaviourConfig)+" did not (a refactor)")
		}
		if !r.Spec && (r.Model || r.Core) && r.Acked == "" {
			r.Verdict = worse(r.Verdict, Review)
			r.Why = append(r.Why, "the implementation changed and the spec did not: a Drift-Ack line naming "+r.Action+" says why")
		}
		rep.Verdict = worse(rep.Verdict, r.Verdict)
	}
	if len(rep.Unmapped) > 0 {
		rep.Verdict = worse(rep.Verdict, Review)
	}
}

func readAcks(o Options) (map[string]string, error) {
	msgs, err := git(o.Root, "log", "--format=%B", o.Base+"..HEAD")
	if err != nil {
		return nil, err
	}
	acks := map[string]string{}
	for _, m := range ackRE.FindAllStringSubmatch(string(msgs)+"\n"+o.Acks, -1) {
		acks[m[1]] = strings.TrimSpace(m[2])
	}
	return acks, nil
}

// exitOf is the command's exit status for a verdict.
func exitOf(v Verdict, strict bool) int {
	switch {
	case v == Drift:
		return 1
	case v == Review && strict:
		return 3
	}
	return 0
}
