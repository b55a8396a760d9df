package smt

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/soundgate/soundgate/tlacheck"
)

// The TLAPS proof text (spec/tlaps/SoundGateProofs.tla) and the obligations are tied
// by a structured comment on each numbered top-level step of a theorem, the line
// right after the step's statement:
//
//	<1>1. ASSUME NEW r \in Runs, Open(r) PROVE IndInv'
//	      \* smt: Open__TypeOK, Open__RunShape, ...
//
// (a list that ends in a comma goes on on the next \* line). The list is one of:
//
//	A__C, ...      the obligations that discharge the step
//	stuttering     the step is CASE UNCHANGED v with v every variable: IndInv' is
//	               IndInv with the variables renamed to themselves, no obligation
//	theorem T      the step's statement is T's statement, T a theorem tied here
//
// CheckProof holds the text against the obligations of the generator: every step
// has a list; every name is an obligation; an obligation's group is the theorem's
// (Init => ... takes init obligations, IndInv /\ [Next]_v => IndInv' step ones,
// IndInv => ... safety ones); an action step (ASSUME NEW ..., A(args) PROVE C')
// takes only A's obligations; the conclusions named are exactly the names the
// step's claim expands to (Structure: NoOrphanHold, PendingExact, CurrentEpoch); and
// every obligation is named by exactly one step. Unnumbered steps (SUFFICES, USE,
// QED) assemble the numbered ones and are not tied; LEMMAs are helpers of the TLAPS
// text, which no obligation uses, and are listed as not tied.

// ProofStep is one numbered top-level step of a theorem and what discharges it.
type ProofStep struct {
	Theorem     string // the theorem's name
	Label       string // <1>k
	Line        int
	Claim       string   // the statement, whitespace collapsed
	By          string   // "obligations", "stuttering", "theorem" or "" (no annotation)
	Obligations []string // By == "obligations"
	Cites       string   // By == "theorem"
}

// ProofMap is the result of CheckProof.
type ProofMap struct {
	File        string
	Theorems    []string // in file order
	Lemmas      []string // not tied to obligations (helpers of the TLAPS text)
	Steps       []ProofStep
	Obligations int      // the generator's proof obligations
	Unmapped    []string // obligations no step names
	Problems    []string // each names the step (or obligation) it is about
}

// OK reports whether every step is discharged and every obligation has a step.
func (m *ProofMap) OK() bool { return len(m.Problems) == 0 }

// Count returns the steps discharged by obligations, the stuttering steps and the
// steps that cite a theorem.
func (m *ProofMap) Count() (byObligations, stuttering, cited int) {
	for _, st := range m.Steps {
		switch st.By {
		case "obligations":
			byObligations++
		case "stuttering":
			stuttering++
		case "theorem":
			cited++
		}
	}
	return
}

// Tied is the number of steps whose annotation passed every check.
func (m *ProofMap) Tied() int {
	bad := map[string]bool{}
	for _, p := range m.Problems {
		for _, st := range m.Steps {
			if strings.HasPrefix(p, st.ref()+" ") {
				bad[st.ref()] = true
			}
		}
	}
	n := 0
	for _, st := range m.Steps {
		if st.By != "" && !bad[st.ref()] {
			n++
		}
	}
	return n
}

// Figure is the mapping's line for the log.
func (m *ProofMap) Figure() string {
	ob, stut, cited := m.Count()
	named := 0
	for _, st := range m.Steps {
		named += len(st.Obligations)
	}
	lem := "none"
	if len(m.Lemmas) > 0 {
		lem = strings.Join(m.Lemmas, ", ")
	}
	status := "each discharged"
	if !m.OK() {
		status = fmt.Sprintf("FAILED: %d problems, each printed above", len(m.Problems))
	}
	return fmt.Sprintf("proof steps: %d numbered steps in %d theorems of %s (%s), %s: %d by obligations (%d named), %d stuttering case (CASE UNCHANGED of every variable: no obligation, by design), %d by a cited theorem; steps not discharged %d, obligations without a step %d of %d; lemmas not tied (helpers of the TLAPS text): %s",
		len(m.Steps), len(m.Theorems), m.File, strings.Join(m.Theorems, ", "), status, ob, named, stut, cited, len(m.Steps)-m.Tied(), len(m.Unmapped), m.Obligations, lem)
}

func (st *ProofStep) ref() string { return st.Theorem + " " + st.Label }

// proofTheorem is one THEOREM or LEMMA of the proof text.
type proofTheorem struct {
	name, stmt string
	lemma      bool
	line       int
	group      string // init, step, safety; "" for a statement of another form
	target     string // the right side: the names the steps must cover
	steps      []int  // indexes into ProofMap.Steps
}

var (
	reTheorem   = regexp.MustCompile(`^(THEOREM|LEMMA)\s+([A-Za-z_][A-Za-z0-9_]*)\s*==\s*(.*)$`)
	reUnnamed   = regexp.MustCompile(`^(THEOREM|LEMMA)\b`)
	reStep      = regexp.MustCompile(`^\s*<1>([0-9]+)\.\s*(.*)$`)
	reName      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	reApply     = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?$`)
	reNew       = regexp.MustCompile(`^NEW\s+([A-Za-z_][A-Za-z0-9_]*)\s*\\in\s+(.+)$`)
	reAnnot     = regexp.MustCompile(`^\\\*\s*smt:(.*)$`)
	reSpace     = regexp.MustCompile(`\s+`)
	stopPrefix  = []string{`\*`, "(*", "BY", "OBVIOUS", "PROOF", "<", "QED"}
	proofGroups = map[string]string{"init": "the Init theorem (Init => ...)", "step": "the inductive step theorem (IndInv /\\ [Next]_v => IndInv')", "safety": "the theorem IndInv => ..."}
)

func collapse(s string) string { return strings.TrimSpace(reSpace.ReplaceAllString(s, " ")) }

// stops reports whether a line (trimmed) ends a statement: a comment, a proof, a
// sub-step, or a blank line.
func stops(t string) bool {
	if t == "" {
		return true
	}
	for _, p := range stopPrefix {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// CheckProof reads the proof text src (file names it in problems) and ties its steps
// to obs, the obligations Spec.Obligations generated (those expected unsat).
func CheckProof(file, src string, s *Spec, obs []*Obligation) *ProofMap {
	m := &ProofMap{File: file}
	byName := map[string]*Obligation{}
	var names []string
	for _, o := range obs {
		if o.Expect == "unsat" {
			byName[o.Name] = o
			names = append(names, o.Name)
		}
	}
	m.Obligations = len(names)
	problem := func(format string, args ...any) { m.Problems = append(m.Problems, fmt.Sprintf(format, args...)) }

	lines := strings.Split(src, "\n")
	var ths []*proofTheorem
	var cur *proofTheorem
	attached := map[int]bool{} // annotation lines that follow a step's statement
	for i := 0; i < len(lines); i++ {
		ln := lines[i]
		if ln != "" && ln[0] != ' ' && ln[0] != '\t' {
			cur = nil // a line at column 1 ends a theorem's proof
			if mt := reTheorem.FindStringSubmatch(ln); mt != nil {
				th := &proofTheorem{name: mt[2], lemma: mt[1] == "LEMMA", line: i + 1}
				stmt := mt[3]
				for i+1 < len(lines) && !stops(strings.TrimSpace(lines[i+1])) && lines[i+1][0] == ' ' {
					i++
					stmt += " " + lines[i]
				}
				th.stmt = collapse(stmt)
				ths = append(ths, th)
				cur = th
				continue
			}
			if reUnnamed.MatchString(ln) {
				problem("%s:%d: an unnamed %s: name it (THEOREM Name == ...) so that its steps can be tied and reported", file, i+1, strings.Fields(ln)[0])
			}
			continue
		}
		ms := reStep.FindStringSubmatch(ln)
		if ms == nil || cur == nil {
			if ms != nil {
				problem("%s:%d: a step <1>%s outside a THEOREM", file, i+1, ms[1])
			}
			continue
		}
		st := ProofStep{Theorem: cur.name, Label: "<1>" + ms[1], Line: i + 1}
		claim := ms[2]
		for i+1 < len(lines) && !stops(strings.TrimSpace(lines[i+1])) {
			i++
			claim += " " + lines[i]
		}
		st.Claim = collapse(claim)
		var annot []string
		for i+1 < len(lines) {
			next := strings.TrimSpace(lines[i+1])
			if ma := reAnnot.FindStringSubmatch(next); ma != nil {
				annot = append(annot, ma[1])
			} else if n := len(annot); n > 0 && strings.HasSuffix(strings.TrimSpace(annot[n-1]), ",") && strings.HasPrefix(next, `\*`) {
				annot = append(annot, strings.TrimPrefix(next, `\*`)) // a list ending in a comma goes on
			} else {
				break
			}
			i++
			attached[i] = true
		}
		if annot != nil {
			parseAnnotation(&st, strings.Join(annot, " "))
		}
		cur.steps = append(cur.steps, len(m.Steps))
		m.Steps = append(m.Steps, st)
	}
	for i, ln := range lines {
		if reAnnot.MatchString(strings.TrimSpace(ln)) && !attached[i] {
			problem("%s:%d: a \\* smt: annotation that is not on the line after a <1>k step's statement: it ties nothing", file, i+1)
		}
	}

	theorems := map[string]*proofTheorem{}
	for _, th := range ths {
		if theorems[th.name] != nil {
			problem("%s:%d: %s is defined twice", file, th.line, th.name)
		}
		theorems[th.name] = th
		if th.lemma {
			m.Lemmas = append(m.Lemmas, th.name)
			for _, k := range th.steps {
				problem("%s (line %d): a numbered step of a LEMMA: lemmas are not tied to obligations; make it a THEOREM", m.Steps[k].ref(), m.Steps[k].Line)
			}
			continue
		}
		m.Theorems = append(m.Theorems, th.name)
		s.classify(th)
		if len(th.steps) == 0 {
			problem("%s (line %d): a theorem with no <1>k step: nothing in it can be tied to obligations", th.name, th.line)
		}
	}

	namedBy := map[string][]string{}
	for _, th := range ths {
		if th.lemma {
			continue
		}
		covered := map[string]bool{}
		for _, k := range th.steps {
			st := &m.Steps[k]
			for _, c := range s.checkStep(m, th, st, byName, theorems, problem) {
				covered[c] = true
			}
			for _, n := range st.Obligations {
				if byName[n] != nil {
					namedBy[n] = append(namedBy[n], st.ref())
				}
			}
		}
		if th.group == "init" || th.group == "safety" {
			want, err := s.expand(th.target)
			if err != nil {
				problem("%s (line %d): its conclusion \"%s\": %v", th.name, th.line, th.target, err)
				continue
			}
			for _, c := range want {
				if !covered[c] {
					problem("%s (line %d): the theorem concludes %s, which no step claims", th.name, th.line, c)
				}
			}
		}
	}
	for _, n := range names {
		switch refs := namedBy[n]; {
		case len(refs) == 0:
			m.Unmapped = append(m.Unmapped, n)
			problem("obligation %s (%s) has no step in %s", n, byName[n].Claim, file)
		case len(refs) > 1:
			problem("obligation %s is named by %d steps (%s): each obligation discharges one step", n, len(refs), strings.Join(refs, ", "))
		}
	}
	return m
}

// parseAnnotation reads the list of a \* smt: annotation into st.
func parseAnnotation(st *ProofStep, text string) {
	text = collapse(text)
	switch {
	case text == "stuttering":
		st.By = "stuttering"
	case strings.HasPrefix(text, "theorem "):
		st.By, st.Cites = "theorem", strings.TrimSpace(strings.TrimPrefix(text, "theorem "))
	default:
		st.By = "obligations"
		for _, p := range strings.Split(text, ",") {
			if p = strings.TrimSpace(p); p != "" {
				st.Obligations = append(st.Obligations, p)
			}
		}
	}
}

// classify sets th's group from its statement.
func (s *Spec) classify(th *proofTheorem) {
	o := s.o
	step := regexp.MustCompile(`^` + regexp.QuoteMeta(o.IndInv) + ` /\\ \[` + regexp.QuoteMeta(o.Next) + `\]_[A-Za-z_][A-Za-z0-9_]* => ` + regexp.QuoteMeta(o.IndInv) + `'$`)
	switch {
	case strings.HasPrefix(th.stmt, o.Init+" => "):
		th.group, th.target = "init", strings.TrimPrefix(th.stmt, o.Init+" => ")
	case step.MatchString(th.stmt):
		th.group, th.target = "step", o.IndInv
	case strings.HasPrefix(th.stmt, o.IndInv+" => ") && !strings.Contains(th.stmt, "'"):
		th.group, th.target = "safety", strings.TrimPrefix(th.stmt, o.IndInv+" => ")
	}
}

// expand is the conjuncts a claim written as a conjunction of the spec's names
// stands for, split as the obligations split them (Structure: NoOrphanHold, ...).
func (s *Spec) expand(claim string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, p := range strings.Split(claim, `/\`) {
		p = strings.TrimSpace(p)
		if !reName.MatchString(p) {
			return nil, fmt.Errorf("\"%s\" is not a name: a step tied to obligations claims a conjunction of the spec's names", p)
		}
		d := s.tr.defs[p]
		if d == nil || len(d.Params) > 0 {
			return nil, fmt.Errorf("%s is not a definition of %s without parameters", p, s.Module)
		}
		for _, c := range s.names(p, nil) {
			if !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c.Name)
			}
		}
	}
	return out, nil
}

// checkStep checks one step against its theorem and returns the conjuncts it
// claims (for the theorem's coverage).
func (s *Spec) checkStep(m *ProofMap, th *proofTheorem, st *ProofStep, byName map[string]*Obligation, theorems map[string]*proofTheorem, problem func(string, ...any)) []string {
	at := fmt.Sprintf("%s (line %d)", st.ref(), st.Line)
	switch st.By {
	case "":
		problem("%s: no obligation discharges it (no \\* smt: line after its statement \"%s\")", at, st.Claim)
		return nil
	case "theorem":
		c := theorems[st.Cites]
		switch {
		case c == nil:
			problem("%s: cites theorem %s, which the proof text does not have", at, st.Cites)
		case c.lemma:
			problem("%s: cites %s, a LEMMA, which is not tied to obligations", at, st.Cites)
		case c == th:
			problem("%s: cites its own theorem", at)
		case c.group == "":
			problem("%s: cites %s, whose statement is not of a form tied to obligations (Init => ..., %s /\\ [%s]_v => %s', %s => ...)", at, st.Cites, s.o.IndInv, s.o.Next, s.o.IndInv, s.o.IndInv)
		case c.stmt != st.Claim:
			problem("%s: claims \"%s\" but cites %s, which states \"%s\"", at, st.Claim, st.Cites, c.stmt)
		}
		return nil
	case "stuttering":
		if th.group != "step" {
			problem("%s: marked stuttering, but %s is not the inductive step theorem", at, th.name)
			return nil
		}
		s.checkStutter(at, st, problem)
		return nil
	}
	// By == "obligations"
	if th.group == "" {
		problem("%s: names obligations, but the statement of %s (\"%s\") is of no form the obligations are grouped by: its steps can only cite theorems", at, th.name, th.stmt)
		return nil
	}
	claim, action := st.Claim, ""
	if th.group == "step" {
		var ok bool
		claim, action, ok = s.actionClaim(at, st.Claim, problem)
		if !ok {
			return nil
		}
	}
	want, err := s.expand(claim)
	if err != nil {
		problem("%s: its claim \"%s\": %v", at, claim, err)
		return nil
	}
	got := map[string]bool{}
	for _, n := range st.Obligations {
		o := byName[n]
		switch {
		case o == nil:
			problem("%s: names %s, which is no obligation of the generator (%s)", at, n, s.File)
			continue
		case o.Group != th.group:
			problem("%s: names %s, %s %s obligation (%s), but %s is %s", at, n, article(o.Group), o.Group, o.Claim, th.name, proofGroups[th.group])
			continue
		case th.group == "step" && o.Action.Name != action:
			problem("%s: names %s, an obligation of action %s, but the step assumes %s", at, n, o.Action.Name, action)
			continue
		}
		got[o.Conclusion] = true
	}
	wantSet := map[string]bool{}
	for _, c := range want {
		wantSet[c] = true
		if !got[c] {
			problem("%s: claims %s, which none of the obligations it names concludes", at, c)
		}
	}
	var extra []string
	for c := range got {
		if !wantSet[c] {
			extra = append(extra, c)
		}
	}
	sort.Strings(extra)
	for _, c := range extra {
		problem("%s: names an obligation concluding %s, which its claim \"%s\" does not include", at, c, claim)
	}
	return want
}

// actionClaim reads ASSUME NEW x \in S, ..., A(x, ...) PROVE C' and checks it
// against action A of Next: the same parameters, drawn from the same sets, passed
// in the same order. It returns C and A.
func (s *Spec) actionClaim(at, claim string, problem func(string, ...any)) (string, string, bool) {
	if !strings.HasPrefix(claim, "ASSUME ") || !strings.Contains(claim, " PROVE ") {
		problem("%s: a step of the inductive step theorem tied to obligations claims ASSUME NEW ..., A(...) PROVE %s' for an action A; this one claims \"%s\"", at, s.o.IndInv, claim)
		return "", "", false
	}
	i := strings.LastIndex(claim, " PROVE ")
	hyps, concl := strings.TrimPrefix(claim[:i], "ASSUME "), strings.TrimSpace(claim[i+len(" PROVE "):])
	if !strings.HasSuffix(concl, "'") {
		problem("%s: proves \"%s\", which is not primed: a step obligation concludes C'", at, concl)
		return "", "", false
	}
	concl = strings.TrimSpace(strings.TrimSuffix(concl, "'"))
	if strings.HasPrefix(concl, "(") && strings.HasSuffix(concl, ")") {
		concl = strings.TrimSpace(concl[1 : len(concl)-1])
	}
	news := map[string]string{}
	var newOrder []string
	var apps [][]string
	for _, h := range splitTop(hyps) {
		if mn := reNew.FindStringSubmatch(h); mn != nil {
			news[mn[1]] = strings.TrimSpace(mn[2])
			newOrder = append(newOrder, mn[1])
			continue
		}
		if ma := reApply.FindStringSubmatch(h); ma != nil && s.Action(ma[1]) != nil {
			apps = append(apps, ma[1:])
			continue
		}
		problem("%s: the hypothesis \"%s\" is neither NEW x \\in S nor an action of %s", at, h, s.o.Next)
		return "", "", false
	}
	if len(apps) != 1 {
		problem("%s: assumes %d actions of %s; a step tied to obligations assumes exactly one", at, len(apps), s.o.Next)
		return "", "", false
	}
	a := s.Action(apps[0][0])
	var args []string
	if strings.TrimSpace(apps[0][1]) != "" {
		for _, x := range splitTop(apps[0][1]) {
			args = append(args, strings.TrimSpace(x))
		}
	}
	if strings.Join(args, ",") != strings.Join(a.Args, ",") {
		problem("%s: assumes %s(%s), but %s calls %s(%s)", at, a.Name, strings.Join(args, ", "), s.o.Next, a.Name, strings.Join(a.Args, ", "))
		return "", "", false
	}
	var params []string
	for _, p := range a.Params {
		params = append(params, p.Name)
		set := "?"
		if p.setNode != nil && p.setNode.Kind == tlacheck.NIdent {
			set = p.setNode.Name
		}
		if got, ok := news[p.Name]; !ok {
			problem("%s: %s's parameter %s is not declared NEW %s \\in %s", at, a.Name, p.Name, p.Name, set)
			return "", "", false
		} else if got != set {
			problem("%s: declares NEW %s \\in %s, but %s draws %s from %s", at, p.Name, got, s.o.Next, p.Name, set)
			return "", "", false
		}
	}
	if len(newOrder) != len(params) {
		problem("%s: declares NEW %s, but %s's parameters are %s", at, strings.Join(newOrder, ", "), a.Name, strings.Join(params, ", "))
		return "", "", false
	}
	return concl, a.Name, true
}

// checkStutter checks that a stuttering step is CASE UNCHANGED v with v every
// variable of the spec.
func (s *Spec) checkStutter(at string, st *ProofStep, problem func(string, ...any)) {
	arg, ok := strings.CutPrefix(st.Claim, "CASE UNCHANGED ")
	if !ok || !reName.MatchString(arg) {
		problem("%s: marked stuttering, but its claim \"%s\" is not CASE UNCHANGED v (v a name)", at, st.Claim)
		return
	}
	var vs []string
	err := s.protect(func() { vs = s.tr.unchanged(&tlacheck.Node{Kind: tlacheck.NIdent, Name: arg}, nil) })
	if err != nil {
		problem("%s: marked stuttering, but UNCHANGED %s: %v", at, arg, err)
		return
	}
	have := map[string]bool{}
	for _, v := range vs {
		have[v] = true
	}
	var missing []string
	for _, v := range s.Vars {
		if !have[v] {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		problem("%s: marked stuttering, but UNCHANGED %s leaves %s free: only a step that changes no variable keeps IndInv with no obligation", at, arg, strings.Join(missing, ", "))
	}
}

func article(w string) string {
	if strings.ContainsRune("aeiou", rune(w[0])) {
		return "an"
	}
	return "a"
}

// splitTop splits s on the commas outside parentheses and brackets.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}
