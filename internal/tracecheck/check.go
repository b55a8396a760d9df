package tracecheck

import (
	"fmt"
	"strings"

	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/tlacheck"
)

// Result is what a validation read and found.
type Result struct {
	Lines      int // lines read (torn ones not counted)
	Steps      int // steps replayed against the spec
	Stutters   int // of them, steps the spec takes as no change (a replay, a repeat, an error it names)
	Timeouts   int // timeouts an admit took first, replayed as the spec's Timeout
	Refusals   int // steps refused for a limit the spec does not have (nothing changed)
	Deliveries int // answers handed back, each checked against its step
	Recoveries int // starts after the first, each checked against the durable prefix
	Torn       int // lines cut short by a crash and dropped
	// Watermarked counts the ids never opened that a Retire with the watermark
	// retired, each replayed as the spec's Retire.
	Watermarked int
	Runs, Keys  int // the domain: runs, and keys of the run with the most
	Mismatch    *Mismatch
	// Answers counts the steps by operation and answer ("admit:held",
	// "open:run_retired", "fence:fenced", "cancel:"): what the trace exercised.
	Answers map[string]int
}

// Mismatch is where the trace leaves the spec.
type Mismatch struct {
	Line int
	What string
}

func (m *Mismatch) Error() string { return fmt.Sprintf("trace line %d: %s", m.Line, m.What) }

// Summary is one line of figures.
func (r *Result) Summary() string {
	mismatches := 0
	if r.Mismatch != nil {
		mismatches = 1
	}
	return fmt.Sprintf("%d lines, %d steps replayed (%d stutters, %d timeouts taken by an admit, %d limit refusals, %d never-opened ids retired by a watermark), %d answers checked, %d recoveries crossed, %d torn lines, %d runs, up to %d keys a run; mismatches %d",
		r.Lines, r.Steps, r.Stutters, r.Timeouts, r.Refusals, r.Watermarked, r.Deliveries, r.Recoveries, r.Torn, r.Runs, r.Keys, mismatches)
}

// limitErrors are the core's refusals the spec has no action for: the core's limits.
// A step refused so changes nothing, and the spec stutters.
var limitErrors = map[string]bool{
	"too_many_runs": true, "too_many_keys": true, "too_many_pending": true, "too_many_retired": true,
	"run_too_long": true, "key_too_long": true, "result_too_long": true, "state_full": true, "invalid_argument": true,
}

// checker walks a trace through the spec.
type checker struct {
	st      *tlacheck.Stepper
	d       *domain
	res     *Result
	cur     tlacheck.State
	init    tlacheck.State
	durable map[uint64]tlacheck.State // the state after each persisted step, by its record
	answers map[uint64]node.TraceAnswer
	started bool
}

// Check validates a trace (its whole text) against the spec's source.
func Check(specSrc, trace string) (*Result, error) {
	lines, torn, err := parse(trace)
	if err != nil {
		return nil, err
	}
	d := newDomain(lines)
	spec, err := tlacheck.LoadSource(specSrc, d.config())
	if err != nil {
		return nil, fmt.Errorf("the spec over the trace's domain: %v", err)
	}
	st := spec.Stepper()
	inits, err := st.Init()
	if err != nil || len(inits) != 1 {
		return nil, fmt.Errorf("the spec's initial states: %d, %v", len(inits), err)
	}
	c := &checker{st: st, d: d, init: inits[0], cur: inits[0],
		res: &Result{Torn: torn, Runs: len(d.runs), Keys: d.maxKeys, Answers: map[string]int{}}}
	for _, l := range lines {
		c.res.Lines++
		var err error
		switch l.kind() {
		case "recovered":
			err = c.recovered(l)
		case "deliver":
			err = c.deliver(l)
		default:
			err = c.step(l)
		}
		if m, ok := err.(*Mismatch); ok {
			c.res.Mismatch = m
			return c.res, nil
		}
		if err != nil {
			return nil, fmt.Errorf("trace line %d: %v", l.num, err)
		}
	}
	return c.res, nil
}

func mismatch(l *line, format string, args ...any) error {
	return &Mismatch{Line: l.num, What: fmt.Sprintf(format, args...)}
}

// recovered starts a process: the first must start on an empty log; a later one must
// find the state the trace's durable prefix built, every run as the line says.
func (c *checker) recovered(l *line) error {
	if !c.started {
		c.started = true
		if *l.Recovered != 0 || len(l.Runs) > 0 {
			return fmt.Errorf("the trace starts on a log with %d records and %d runs: trace a gate from an empty data directory", *l.Recovered, len(l.Runs))
		}
		c.durable = map[uint64]tlacheck.State{0: c.init}
		c.answers = map[uint64]node.TraceAnswer{}
		return nil
	}
	c.res.Recoveries++
	s, ok := c.durable[*l.Recovered]
	if !ok {
		return mismatch(l, "a start replayed up to record %d, which no persisted step of the trace wrote", *l.Recovered)
	}
	for r := range c.d.runs {
		v, listed := l.Runs[r]
		if !listed {
			status := c.status(s, r)
			if status != "none" && status != "retired" {
				return mismatch(l, "after the start, run %q is missing; the spec has it %s", r, status)
			}
			continue
		}
		v.All = true
		if err := c.sameRun(l, s, r, &v); err != nil {
			return err
		}
	}
	for lsn := range c.durable { // the records after it were lost with the process
		if lsn > *l.Recovered {
			delete(c.durable, lsn)
		}
	}
	c.cur = s
	c.answers = map[uint64]node.TraceAnswer{}
	return nil
}

// deliver checks an answer handed back against its step's.
func (c *checker) deliver(l *line) error {
	c.res.Deliveries++
	want, ok := c.answers[*l.Deliver]
	if !ok {
		return mismatch(l, "an answer handed back for step %d, which this process did not take", *l.Deliver)
	}
	if want != l.TraceAnswer {
		return mismatch(l, "the answer handed back for step %d is %s, the step's was %s", *l.Deliver, answerText(l.TraceAnswer), answerText(want))
	}
	return nil
}

func answerText(a node.TraceAnswer) string {
	switch {
	case a.Err != "":
		return "error " + a.Err
	case a.Reason != "":
		return a.Answer + "(" + a.Reason + ")"
	case a.Answer == "":
		return "(no answer)"
	}
	return a.Answer
}

func (c *checker) runV(r string) tlacheck.Value {
	return tlacheck.ModelValue(fmt.Sprintf("r%d", c.d.runs[r]))
}

func (c *checker) keyV(r, k string) tlacheck.Value {
	return tlacheck.ModelValue(fmt.Sprintf("k%d", c.d.keys[r][k]))
}

// at is var[args...] in s.
func (c *checker) at(s tlacheck.State, name string, args ...tlacheck.Value) tlacheck.Value {
	v, _ := c.st.Var(s, name)
	for _, a := range args {
		v, _ = v.Apply(a)
	}
	return v
}

func (c *checker) status(s tlacheck.State, r string) string {
	return c.at(s, "runStatus", c.runV(r)).AsString()
}

// implVars are the spec's variables the implementation has (not its history).
var implVars = []string{"runStatus", "runEpoch", "pending", "effStatus", "effEpoch", "gated", "approved", "outcome"}

func (c *checker) sameImpl(a, b tlacheck.State) bool {
	for _, v := range implVars {
		x, _ := c.st.Var(a, v)
		y, _ := c.st.Var(b, v)
		if !tlacheck.Equal(x, y) {
			return false
		}
	}
	return true
}

// sameRun checks run r of s against the view v: status, epoch, pending, and the
// effects it lists (with All, every other key of the run must be absent).
func (c *checker) sameRun(l *line, s tlacheck.State, r string, v *node.TraceView) error {
	rv := c.runV(r)
	var diffs []string
	check := func(what, spec, impl string) {
		if spec != impl {
			diffs = append(diffs, fmt.Sprintf("%s: spec %s, gate %s", what, spec, impl))
		}
	}
	check("status", c.at(s, "runStatus", rv).String(), fmt.Sprintf("%q", v.Status))
	check("epoch", c.at(s, "runEpoch", rv).String(), fmt.Sprint(v.Epoch))
	pend := make([]tlacheck.Value, len(v.Pending))
	for i, k := range v.Pending {
		pend[i] = c.keyV(r, k)
	}
	check("pending", c.at(s, "pending", rv).String(), tlacheck.SetOf(pend...).String())
	for _, k := range sortedKeys(c.d.keys[r]) { // sorted: the same trace, the same message
		n := c.d.keys[r][k]
		e, listed := v.Effects[k]
		if !listed && !v.All {
			continue
		}
		if !listed {
			e = node.TraceEffect{Status: "absent", Outcome: "none"}
		}
		kv := tlacheck.ModelValue(fmt.Sprintf("k%d", n))
		check(k+" status", c.at(s, "effStatus", rv, kv).String(), fmt.Sprintf("%q", e.Status))
		check(k+" epoch", c.at(s, "effEpoch", rv, kv).String(), fmt.Sprint(e.Epoch))
		check(k+" gated", c.at(s, "gated", rv, kv).String(), tlacheck.Bool(e.Gated).String())
		check(k+" approved", c.at(s, "approved", rv, kv).String(), tlacheck.Bool(e.Approved).String())
		check(k+" outcome", c.at(s, "outcome", rv, kv).String(), fmt.Sprintf("%q", e.Outcome))
	}
	if len(diffs) > 0 {
		return mismatch(l, "run %q after %s: %s", r, l.kind(), strings.Join(diffs, "; "))
	}
	return nil
}

// Add adds the counts of o to r (a total over traces): the runs are summed, the keys
// of a run the most, a mismatch the first.
func (r *Result) Add(o *Result) {
	r.Lines += o.Lines
	r.Steps += o.Steps
	r.Stutters += o.Stutters
	r.Timeouts += o.Timeouts
	r.Refusals += o.Refusals
	r.Deliveries += o.Deliveries
	r.Recoveries += o.Recoveries
	r.Torn += o.Torn
	r.Watermarked += o.Watermarked
	r.Runs, r.Keys = r.Runs+o.Runs, max(r.Keys, o.Keys)
	if r.Mismatch == nil {
		r.Mismatch = o.Mismatch
	}
	if r.Answers == nil {
		r.Answers = map[string]int{}
	}
	for k, n := range o.Answers {
		r.Answers[k] += n
	}
}
