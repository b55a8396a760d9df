// Package scenario runs the contract's plain-text scenarios (testdata/scenarios/*.txt)
// against any implementation of the gate: the core directly, or the real server over
// a socket. A scenario file teaches one rule of the contract; the same file must give
// the same output on every driver, so the files are the contract's executable examples.
//
// The format is github.com/cockroachdb/datadriven's: a command line, "----", the
// expected output, a blank line. Commands:
//
//	open run=R [deadline=MS]            Open, with an optional absolute deadline
//	admit run=R key=K epoch=N [gated]   Admit at the current clock
//	decide run=R key=K approve|reject   Decide
//	complete run=R key=K ok|failed [result=S]
//	cancel run=R | fence run=R
//	status run=R [key=K]                the run, and effect K
//	clock now=MS                        set the gate's clock
//	timeout                             the clock's Timeout of every run whose deadline has passed
//	retire run=R [upto]                 the clock's Retire of R, as once its retention period passed;
//	                                    upto: the watermark moves up to R (ids ordered in time)
//
// Run `go test ./impl/core -run Scenario -rewrite` to regenerate expected outputs after
// a deliberate change of the contract, and review the diff.
package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/soundgate/soundgate/impl/core"
)

// Driver runs commands against one gate implementation.
type Driver interface {
	// Step applies one command and returns the core's form of the reply; a driver that
	// talks to a server converts the wire answer back into a core.Reply.
	Step(c core.Command) core.Reply
	// SetClock sets the gate's clock (milliseconds).
	SetClock(now core.Time)
	// TimeoutDue times out every active run whose deadline is at or before the clock
	// (the spec's Timeout, as the gate's clock takes it), and returns their ids.
	TimeoutDue() []core.RunID
	// Retire takes c, a Retire (its Run and Upto), as the gate's clock does once the
	// run's retention period has passed (the spec's Retire; no request asks for it).
	Retire(c core.Command) core.Reply
}

// Dir is the folder of the scenario files, relative to the repository root.
const Dir = "testdata/scenarios"

// Run runs every scenario file in dir, each with a fresh driver.
func Run(t *testing.T, dir string, newDriver func(t *testing.T) Driver) {
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		d := newDriver(t)
		var now core.Time
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			c, err := parse(td)
			if err != nil {
				td.Fatalf(t, "%v", err)
			}
			switch td.Cmd {
			case "clock":
				var ms int
				td.ScanArgs(t, "now", &ms)
				now = core.Time(ms)
				d.SetClock(now)
				return fmt.Sprintf("now=%d\n", now)
			case "timeout":
				ids := d.TimeoutDue()
				return fmt.Sprintf("timed out %v\n", ids)
			}
			c.Now = now
			if c.Op == core.OpRetire {
				return Render(c, d.Retire(c))
			}
			return Render(c, d.Step(c))
		})
	})
}

func parse(td *datadriven.TestData) (core.Command, error) {
	var c core.Command
	switch td.Cmd {
	case "clock", "timeout":
	default:
		op, ok := core.ParseOp(td.Cmd)
		if !ok || op == core.OpTimeout {
			return c, fmt.Errorf("unknown command %q", td.Cmd)
		}
		c.Op = op
	}
	for _, a := range td.CmdArgs {
		val := ""
		if len(a.Vals) > 0 {
			val = a.Vals[0]
		}
		var err error
		switch a.Key {
		case "run":
			c.Run = core.RunID(val)
		case "key":
			c.Key = core.Key(val)
		case "epoch":
			c.Epoch, err = strconv.ParseUint(val, 10, 64)
		case "gated":
			c.Gated = true
		case "approve":
			c.Decision = core.Approve
		case "reject":
			c.Decision = core.Reject
		case "ok":
			c.Outcome = core.OutcomeOK
		case "failed":
			c.Outcome = core.OutcomeFailed
		case "result":
			c.Result = val
		case "deadline":
			var ms int64
			ms, err = strconv.ParseInt(val, 10, 64)
			c.Deadline = core.Time(ms)
		case "upto":
			c.Upto = true
		case "now":
		default:
			return c, fmt.Errorf("unknown argument %q", a.Key)
		}
		if err != nil {
			return c, fmt.Errorf("argument %s: %v", a.Key, err)
		}
	}
	return c, nil
}

// Render prints a reply the way the scenario files expect it. It uses only what the
// wire carries, so that every driver renders the same text.
func Render(c core.Command, r core.Reply) string {
	if r.Err != nil {
		return "error: " + errorCode(r.Err) + "\n"
	}
	var b strings.Builder
	switch c.Op {
	case core.OpOpen:
		fmt.Fprintf(&b, "run %s %s epoch=%d created=%t\n", r.Open.Run.ID, r.Open.Run.Status, r.Open.Run.Epoch, r.Open.Created)
	case core.OpAdmit:
		a := r.Admit
		fmt.Fprintf(&b, "%s", a.Answer)
		if a.Answer == core.AnswerDenied {
			fmt.Fprintf(&b, " reason=%s", a.Reason)
		}
		if a.Outcome != core.OutcomeNone {
			fmt.Fprintf(&b, " outcome=%s result=%q", a.Outcome, a.Result)
		}
		fmt.Fprintf(&b, " epoch=%d\n", a.Epoch)
	case core.OpDecide:
		fmt.Fprintf(&b, "decided %s repeat=%t\n", r.Decide.Decision, r.Decide.Repeat)
	case core.OpComplete:
		fmt.Fprintf(&b, "completed repeat=%t\n", r.Complete.Repeat)
	case core.OpCancel, core.OpFence, core.OpTimeout, core.OpStatus, core.OpRetire:
		v := r.Run
		fmt.Fprintf(&b, "run %s %s epoch=%d pending=%v", v.ID, v.Status, v.Epoch, v.Pending)
		if v.Deadline != 0 && c.Op == core.OpStatus {
			fmt.Fprintf(&b, " deadline=%d", v.Deadline)
		}
		b.WriteString("\n")
		if c.Op == core.OpStatus && c.Key != "" {
			e := r.Effect
			fmt.Fprintf(&b, "effect %s %s", e.Key, e.Status)
			if e.Status == core.EffectHeld || e.Status == core.EffectReleased {
				fmt.Fprintf(&b, " epoch=%d gated=%t", e.Epoch, e.Gated)
			}
			if e.Approved {
				b.WriteString(" approved")
			}
			if e.Outcome != core.OutcomeNone {
				fmt.Fprintf(&b, " outcome=%s result=%q", e.Outcome, e.Result)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// errorCode returns the contract's name of a typed error, or the error text.
func errorCode(err error) string {
	if code, ok := ErrorCode(err); ok {
		return code
	}
	return err.Error()
}

// ErrorCode returns the contract's name of a typed error: a core error's code, or the
// wire's error type of a client's error (anything with an ErrorCode method).
func ErrorCode(err error) (string, bool) {
	type coded interface{ ErrorCode() string }
	if ce, ok := err.(coded); ok {
		return ce.ErrorCode(), true
	}
	if ce, ok := err.(*core.Error); ok {
		return ce.Code, true
	}
	return "", false
}
