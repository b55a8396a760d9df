package model

import (
	"fmt"
	"slices"
	"strconv"
)

// The action names of the spec, in the order of its Next.
const (
	ActOpen     = "Open"
	ActAdmit    = "Admit"
	ActDecide   = "Decide"
	ActComplete = "Complete"
	ActCancel   = "Cancel"
	ActFence    = "Fence"
	ActTimeout  = "Timeout"
	ActRetire   = "Retire"
)

// Actions lists the spec's actions in the order of its Next.
var Actions = []string{ActOpen, ActAdmit, ActDecide, ActComplete, ActCancel, ActFence, ActTimeout, ActRetire}

// Op is one operation: an action with its parameters. Fields an action does not take
// are zero. What an approval says (the core's Note: an admit's description and args
// digest, a decide's reason, the time an approval opened) is left out on purpose: no
// action of the spec reads it, so the model has none, and the conformance suite drives
// the core with notes the model never sees (docs/contract.md, "What an approval says").
type Op struct {
	Action   string
	Run      string
	Key      string // Admit, Decide, Complete
	Epoch    int    // Admit
	Gated    bool   // Admit
	Decision string // Decide: "approve" or "reject"
	Outcome  string // Complete: "ok" or "failed"
	Upto     bool   // Retire: the watermark's, a sequence of steps (RetireUpto), not one
}

// Label is the op as the TLA+ checker labels an edge, e.g. `Admit(r1, k1, 1, TRUE)`,
// `Decide(r1, k2, "reject")`, `Cancel(r1)`.
func (op Op) Label() string {
	switch op.Action {
	case ActAdmit:
		return fmt.Sprintf("Admit(%s, %s, %d, %s)", op.Run, op.Key, op.Epoch, tlaBool(op.Gated))
	case ActDecide:
		return fmt.Sprintf("Decide(%s, %s, %s)", op.Run, op.Key, strconv.Quote(op.Decision))
	case ActComplete:
		return fmt.Sprintf("Complete(%s, %s, %s)", op.Run, op.Key, strconv.Quote(op.Outcome))
	case ActRetire:
		if op.Upto {
			return fmt.Sprintf("RetireUpto(%s)", op.Run)
		}
	}
	return fmt.Sprintf("%s(%s)", op.Action, op.Run)
}

func tlaBool(b bool) string {
	if b {
		return "TRUE"
	}
	return "FALSE"
}

// Ops lists every operation over the spec's parameter domains for c, in the order of
// the spec's Next with each \E enumerated in TLC's canonical order: runs and keys by
// name, epochs 1..MaxEpoch+1, FALSE before TRUE, strings by bytes.
func Ops(c Config) []Op {
	return ops(c, 1, c.MaxEpoch+1)
}

// OpsWide is Ops with the Admit epochs widened by one on each side (0, which is an
// invalid argument, and MaxEpoch+2, which is above every run's epoch): the domain the
// conformance suite drives, so that the error answers are exercised too; and the
// watermark's Retire of each run (RetireUpto), which the core takes as one command.
func OpsWide(c Config) []Op {
	out := ops(c, 0, c.MaxEpoch+2)
	for _, r := range c.Runs {
		out = append(out, Op{Action: ActRetire, Run: r, Upto: true})
	}
	return out
}

func ops(c Config, eLo, eHi int) []Op {
	var out []Op
	for _, r := range c.Runs {
		out = append(out, Op{Action: ActOpen, Run: r})
	}
	for _, r := range c.Runs {
		for _, k := range c.Keys {
			for e := eLo; e <= eHi; e++ {
				for _, g := range []bool{false, true} {
					out = append(out, Op{Action: ActAdmit, Run: r, Key: k, Epoch: e, Gated: g})
				}
			}
		}
	}
	for _, r := range c.Runs {
		for _, k := range c.Keys {
			for _, d := range []string{Approve, Reject} {
				out = append(out, Op{Action: ActDecide, Run: r, Key: k, Decision: d})
			}
		}
	}
	for _, r := range c.Runs {
		for _, k := range c.Keys {
			for _, o := range []string{Failed, OK} {
				out = append(out, Op{Action: ActComplete, Run: r, Key: k, Outcome: o})
			}
		}
	}
	for _, a := range []string{ActCancel, ActFence, ActTimeout, ActRetire} {
		for _, r := range c.Runs {
			out = append(out, Op{Action: a, Run: r})
		}
	}
	return out
}

// Apply answers op in s as the contract does, for any op over c's names, enabled or
// not, and returns the successor (s itself when nothing changed). Fence is answered
// without the spec's epoch bound. It fails only for names outside c or an unknown
// action.
func Apply(c Config, s State, op Op) (Answer, State, error) {
	r := slices.Index(c.Runs, op.Run)
	if r < 0 {
		return Answer{}, s, fmt.Errorf("%w: run %q", ErrDomain, op.Run)
	}
	k := 0
	switch op.Action {
	case ActAdmit, ActDecide, ActComplete:
		if k = slices.Index(c.Keys, op.Key); k < 0 {
			return Answer{}, s, fmt.Errorf("%w: key %q", ErrDomain, op.Key)
		}
	}
	var a Answer
	var t State
	switch op.Action {
	case ActOpen:
		a, t = Open(s, r)
	case ActAdmit:
		a, t = Admit(s, r, k, op.Epoch, op.Gated)
	case ActDecide:
		a, t = Decide(s, r, k, op.Decision)
	case ActComplete:
		a, t = Complete(s, r, k, op.Outcome)
	case ActCancel:
		a, t = Cancel(s, r)
	case ActFence:
		a, t = Fence(s, r)
	case ActTimeout:
		a, t = Timeout(s, r)
	case ActRetire:
		if op.Upto {
			a, t = RetireUpto(c, s, r)
		} else {
			a, t = Retire(s, r)
		}
	default:
		return Answer{}, s, fmt.Errorf("%w: action %q", ErrDomain, op.Action)
	}
	return a, t, nil
}

// Enabled reports whether the spec's Next has a step for op in s: the answer is not
// an error, and for Fence the epoch is below MaxEpoch, for Timeout the run is active,
// for Retire the run is not retired already. RetireUpto is a sequence of steps, never
// one.
func Enabled(c Config, s State, op Op, a Answer) bool {
	if a.IsError() || op.Upto {
		return false
	}
	r := slices.Index(c.Runs, op.Run)
	switch op.Action {
	case ActFence:
		return s.Runs[r].Epoch < c.MaxEpoch
	case ActTimeout:
		return s.Runs[r].Status == RunActive
	case ActRetire:
		return s.Runs[r].Status != RunRetired
	}
	return true
}

// Step is one step of the spec's Next: the successor of s by op, and whether the spec
// has that step at all.
func Step(c Config, s State, op Op) (State, bool) {
	a, t, err := Apply(c, s, op)
	if err != nil || !Enabled(c, s, op, a) {
		return s, false
	}
	return t, true
}
