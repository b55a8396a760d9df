package conformance

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/soundgate/soundgate/model"
)

// Stats counts what a conformance run compared.
type Stats struct {
	mu          sync.Mutex
	States      int64            // distinct model states visited (exhaustive mode)
	Ops         int64            // operations compared (answer and abstract state)
	Divergences int64            // operations where the two sides differed
	Actions     map[string]int64 // per model action
	Answers     map[string]int64 // per answer ("admit", "denied(stale_epoch)", "error(not_pending)", ...)
	Smallest    *Divergence      // the shortest divergence seen (randomized modes)
}

// NewStats returns empty counters.
func NewStats() *Stats { return &Stats{Actions: map[string]int64{}, Answers: map[string]int64{}} }

// Add merges o into s.
func (s *Stats) Add(o *Stats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.States += o.States
	s.Ops += o.Ops
	s.Divergences += o.Divergences
	for k, v := range o.Actions {
		s.Actions[k] += v
	}
	for k, v := range o.Answers {
		s.Answers[k] += v
	}
}

func (s *Stats) count(op model.Op, a model.Answer) {
	s.Ops++
	s.Actions[op.Action]++
	s.Answers[answerLabel(op, a)]++
}

// answerLabel names the kind of answer, for coverage.
func answerLabel(op model.Op, a model.Answer) string {
	switch {
	case a.Err != "":
		return "error(" + a.Err + ")"
	case op.Action == model.ActAdmit && a.Reason != "":
		return "denied(" + a.Reason + ")"
	case op.Action == model.ActAdmit && a.Outcome != "":
		return "duplicate(" + a.Outcome + ")"
	case op.Action == model.ActAdmit:
		return a.Admit
	case a.Repeat:
		return strings.ToLower(op.Action) + "(repeat)"
	case op.Action == model.ActDecide || op.Action == model.ActComplete:
		return strings.ToLower(op.Action) + "(" + op.Decision + op.Outcome + ")"
	case op.Upto:
		return "retire_upto(" + string(a.Status) + ")"
	}
	return strings.ToLower(op.Action) + "(" + string(a.Status) + ")"
}

// RequiredAnswers are the answers every conformance mode must reach at least once.
var RequiredAnswers = []string{
	"admit", "held", "duplicate", "duplicate(ok)", "duplicate(failed)",
	"denied(cancelled)", "denied(timed_out)", "denied(stale_epoch)", "denied(rejected)",
	"decide(approve)", "decide(reject)", "decide(repeat)", "complete(ok)", "complete(failed)", "complete(repeat)",
	"error(unknown_run)", "error(bad_epoch)", "error(not_pending)", "error(not_admitted)", "error(conflict)", "error(run_final)",
	"open(active)", "cancel(cancelled)", "fence(active)", "timeout(timed_out)",
	"denied(retired)", "error(run_retired)", "retire(retired)", "cancel(retired)", "retire_upto(retired)",
}

// Missing returns the actions and answers this run never reached.
func (s *Stats) Missing() []string {
	var out []string
	for _, a := range model.Actions {
		if s.Actions[a] == 0 {
			out = append(out, "action "+a)
		}
	}
	for _, a := range RequiredAnswers {
		if s.Answers[a] == 0 {
			out = append(out, "answer "+a)
		}
	}
	return out
}

// Report renders the counts: one line per action and answer, then a summary line.
func (s *Stats) Report(mode string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "conformance %s: actions:", mode)
	for _, a := range model.Actions {
		fmt.Fprintf(&b, " %s=%d", a, s.Actions[a])
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "conformance %s: answers:", mode)
	for _, k := range slices.Sorted(maps.Keys(s.Answers)) {
		fmt.Fprintf(&b, " %s=%d", k, s.Answers[k])
	}
	b.WriteString("\n")
	missing := "none missing"
	if m := s.Missing(); len(m) > 0 {
		missing = "MISSING " + strings.Join(m, ", ")
	}
	fmt.Fprintf(&b, "conformance %s: %d operations compared, %d divergences, coverage: %s\n", mode, s.Ops, s.Divergences, missing)
	return b.String()
}

// Divergence is a difference between the model and the implementation after a trace.
type Divergence struct {
	Trace          []model.Op
	Model, Impl    model.Answer
	StateDiff      string // empty when the states agree
	ModelState     string
	ImplementState string
}

func (d *Divergence) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "divergence after %d operations:\n", len(d.Trace))
	for i, op := range d.Trace {
		fmt.Fprintf(&b, "  %2d. %s\n", i+1, op.Label())
	}
	if d.Model != d.Impl {
		fmt.Fprintf(&b, "answer: model %s, implementation %s\n", d.Model, d.Impl)
	}
	if d.StateDiff != "" {
		fmt.Fprintf(&b, "state differs: %s\n  model:          %s\n  implementation: %s\n", d.StateDiff, d.ModelState, d.ImplementState)
	}
	return b.String()
}

// compare checks one step: the answers and the states (model history stripped).
func compare(c model.Config, trace []model.Op, mAns model.Answer, mState model.State, iAns model.Answer, iState model.State) *Divergence {
	if mAns == iAns && sameState(mState, iState) {
		return nil
	}
	ms, is := Strip(mState).Text(c), iState.Text(c)
	d := &Divergence{Trace: slices.Clone(trace), Model: mAns, Impl: iAns}
	if ms != is {
		d.StateDiff = firstDiff(ms, is)
		d.ModelState, d.ImplementState = ms, is
	}
	return d
}

// firstDiff points at the first differing part of two state texts.
func firstDiff(a, b string) string {
	fa, fb := strings.Split(a, ", "), strings.Split(b, ", ")
	for i := 0; i < min(len(fa), len(fb)); i++ {
		if fa[i] != fb[i] {
			return fmt.Sprintf("model has %q where the implementation has %q", fa[i], fb[i])
		}
	}
	return "lengths differ"
}
