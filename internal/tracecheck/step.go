package tracecheck

import (
	"fmt"

	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/tlacheck"
)

// actionOf is the spec's action a core step takes, and its arguments.
func (c *checker) actionOf(l *line) (string, []tlacheck.Value, error) {
	r := c.runV(l.Run)
	switch l.Op {
	case "open":
		return "Open", []tlacheck.Value{r}, nil
	case "admit":
		return "Admit", []tlacheck.Value{r, c.keyV(l.Run, l.Key), tlacheck.Int(int64(min(l.Epoch, 1<<62))), tlacheck.Bool(l.Gated)}, nil
	case "decide":
		return "Decide", []tlacheck.Value{r, c.keyV(l.Run, l.Key), tlacheck.Str(l.Decision)}, nil
	case "complete":
		return "Complete", []tlacheck.Value{r, c.keyV(l.Run, l.Key), tlacheck.Str(l.Outcome)}, nil
	case "cancel":
		return "Cancel", []tlacheck.Value{r}, nil
	case "fence":
		return "Fence", []tlacheck.Value{r}, nil
	case "timeout":
		return "Timeout", []tlacheck.Value{r}, nil
	case "retire":
		return "Retire", []tlacheck.Value{r}, nil
	case "status":
		return "", nil, nil // reads only
	}
	return "", nil, fmt.Errorf("unknown operation %q", l.Op)
}

// expected is the answer the spec gives to the step in state s, in the trace's words.
func (c *checker) expected(s tlacheck.State, l *line, args []tlacheck.Value) (answer, reason, errCode string, err error) {
	eval := func(op string, args ...tlacheck.Value) string {
		if err != nil {
			return ""
		}
		var v tlacheck.Value
		v, err = c.st.Eval(s, op, args...)
		if err != nil {
			return ""
		}
		return v.AsString()
	}
	split := func(a string) (string, string, string) {
		switch a {
		case "decided", "repeat", "completed", "fenced":
			return a, "", ""
		}
		return "", "", a // an error's code
	}
	status := c.status(s, l.Run)
	switch l.Op {
	case "admit":
		var v tlacheck.Value
		if v, err = c.st.Eval(s, "AdmitAnswer", args...); err != nil {
			return
		}
		a, _ := v.Field("answer")
		w, _ := v.Field("reason")
		if a.AsString() == "error" {
			return "", "", w.AsString(), nil
		}
		return a.AsString(), w.AsString(), "", nil
	case "decide":
		answer, reason, errCode = split(eval("DecideAnswer", args...))
	case "complete":
		answer, reason, errCode = split(eval("CompleteAnswer", args...))
	case "fence":
		answer, reason, errCode = split(eval("FenceAnswer", args...))
	case "open":
		if status == "retired" {
			errCode = "run_retired"
		}
	case "retire":
		finished, ferr := c.st.Eval(s, "Finished", args...)
		switch {
		case ferr != nil:
			err = ferr
		case status == "none", status == "retired": // a step; or answered with its status, nothing to do
		case !finished.AsBool():
			errCode = "not_finished"
		}
	}
	return answer, reason, errCode, err
}

// step replays one core step: its answer must be the spec's, and its view of the
// run the spec's successor's.
func (c *checker) step(l *line) error {
	if !c.started {
		return fmt.Errorf("a step before the trace's first start line")
	}
	c.res.Steps++
	c.answers[l.Seq] = l.TraceAnswer
	c.res.Answers[l.Op+":"+l.Answer+l.Err]++
	action, args, err := c.actionOf(l)
	if err != nil || action == "" {
		return err
	}
	s := c.cur
	if l.Op == "admit" && l.View != nil && l.View.Status == "timed_out" && c.status(s, l.Run) == "active" {
		// the deadline had passed: the core timed the run out first (contract step 2)
		next, err := c.st.Step(s, "Timeout", args[0])
		if err != nil || len(next) != 1 {
			return mismatch(l, "the admit found the deadline passed, and the spec's Timeout gives %d states (%v)", len(next), err)
		}
		s = next[0]
		c.res.Timeouts++
	}
	if limitErrors[l.Err] {
		c.res.Refusals++
		if l.Persist {
			return mismatch(l, "a refusal for a limit (%s) that changed the state", l.Err)
		}
		return nil
	}
	answer, reason, errCode, err := c.expected(s, l, args)
	if err != nil {
		return err
	}
	if answer != l.Answer || reason != l.Reason || errCode != l.Err {
		return mismatch(l, "%s %q: the gate answered %s, the spec %s", l.Op, l.Run, answerText(l.TraceAnswer),
			answerText(node.TraceAnswer{Answer: answer, Reason: reason, Err: errCode}))
	}
	if errCode != "" {
		return c.settle(l, s)
	}
	if l.Op == "retire" && l.Upto && c.status(s, l.Run) != "retired" {
		// the watermark moves up to the run: every id below it never opened is retired
		if s, err = c.retireBelow(l, s); err != nil {
			return err
		}
	}
	next, err := c.st.Step(s, action, args...)
	if err != nil {
		return err
	}
	if len(next) == 0 {
		// A timeout of a run no longer active, a retire of a retired one: the gate
		// answers with the run's status and changes nothing; the spec has no step.
		if !l.Persist && (l.Op == "timeout" || l.Op == "retire" && c.status(s, l.Run) == "retired") {
			return c.settle(l, s)
		}
		return mismatch(l, "%s %q: the gate took the step, the spec's %s is not enabled", l.Op, l.Run, action)
	}
	var firstErr error
	for _, n := range next {
		if err := c.settle(l, n); err == nil {
			return nil
		} else if firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// retireBelow takes the spec's Retire of every run of the trace never opened whose id
// is below l's run (byte order, the core's), in id order: what a Retire with the
// watermark does besides its own run.
func (c *checker) retireBelow(l *line, s tlacheck.State) (tlacheck.State, error) {
	for _, r := range c.d.sorted {
		if r >= l.Run || c.status(s, r) != "none" {
			continue
		}
		next, err := c.st.Step(s, "Retire", c.runV(r))
		if err != nil || len(next) != 1 {
			return s, mismatch(l, "retire %q up to it: the spec's Retire of %q, never opened, gives %d states (%v)", l.Run, r, len(next), err)
		}
		s = next[0]
		c.res.Watermarked++
	}
	return s, nil
}

// settle takes next as the state after step l, if the gate's view of the run and
// whether it persisted agree with it.
func (c *checker) settle(l *line, next tlacheck.State) error {
	if l.View != nil {
		if err := c.sameRun(l, next, l.Run, l.View); err != nil {
			return err
		}
	}
	changed := !c.sameImpl(c.cur, next)
	if changed != l.Persist {
		return mismatch(l, "%s %q: the gate persisted %t, the spec changed the state %t", l.Op, l.Run, l.Persist, changed)
	}
	if l.Persist {
		c.durable[l.LSN] = next
	} else {
		c.res.Stutters++
	}
	c.cur = next
	return nil
}
