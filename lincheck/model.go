package lincheck

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/soundgate/soundgate/model"
)

// Input is one request of a history: an action of the contract on one run (and, for
// Admit, Decide, Complete and Status, one key of that run). Keys are indices into the
// history's key names; the run is a name, and the history is partitioned by it.
type Input struct {
	Action   string // model.ActOpen ... model.ActFence, or ActStatus
	Run      string
	Key      int    // index into Keys; Admit, Decide, Complete, Status
	Epoch    int    // Admit
	Gated    bool   // Admit
	Decision string // Decide: model.Approve or model.Reject
	Outcome  string // Complete: model.OK or model.Failed
}

// ActStatus is the read-only status request. The spec has no such action; its answer
// is read from the model's state.
const ActStatus = "Status"

// Output is what the server answered, reduced to the fields the contract fixes. A
// request whose answer never arrived (the client timed out, or the server was killed
// while it was in flight) has Unknown set and no answer field: the model lets it take
// effect or not.
type Output struct {
	Unknown bool
	// Unbounded marks an unknown outcome that may still take effect after its
	// recorded return (the client timed out; the server may not have read it yet).
	// Its return is moved past the end of the history. Without it, an unknown
	// outcome took effect before its recorded return or never: the connection broke
	// because the server was killed, and a dead server changes nothing.
	Unbounded bool
	Err       string // the contract's error name (data.type on the wire), or ""

	Admit   string // Admit: admit, held, duplicate, denied
	Reason  string // Admit: the denial reason
	Outcome string // Admit: a completed duplicate's outcome; Status: the effect's outcome
	Repeat  bool   // Decide, Complete
	Created bool   // Open
	Status  string // Open, Cancel, Status: the run's status
	Epoch   int    // Open, Admit, Cancel, Fence, Status: the run's epoch after the request

	Pending   uint64 // Status: bit k set when key k's approval is open
	EffStatus string // Status: the effect's status
	EffEpoch  int    // Status: the epoch a held or released effect was asked at
	EffGated  bool   // Status
	EffApprv  bool   // Status: approved
}

// KeysMax bounds the keys per run of a history: the model is meant to be small, and
// the key names k0..k9 then sort by bytes as model.Config asks.
const KeysMax = 10

// state is the model's state of one partition (one run), with a canonical key for
// porcupine's memoization.
type state struct {
	s   model.State
	key string
}

func newState(s model.State) state {
	var b strings.Builder
	r := s.Runs[0]
	fmt.Fprintf(&b, "%s@%d;", r.Status, r.Epoch)
	for k, e := range r.Effects {
		fmt.Fprintf(&b, "%s,%d,%t,%t,%s,%t|", e.Status, e.Epoch, e.Gated, e.Approved, e.Outcome, r.Pending[k])
	}
	return state{s: s, key: b.String()}
}

// Expect computes, from the model alone, the answer the contract gives to in when the
// run is in state s (a model.State of one run, index 0), and the state after it. It
// wraps model's action functions (model.Open, model.Admit, ...): there is no second
// model here, only the mapping of a model.Answer onto the wire's fields.
func Expect(s model.State, in Input) (Output, model.State) {
	run := s.Runs[0]
	switch in.Action {
	case model.ActOpen:
		a, t := model.Open(s, 0)
		return Output{Status: string(a.Status), Epoch: a.Epoch, Created: run.Status == model.RunNone}, t
	case model.ActAdmit:
		a, t := model.Admit(s, 0, in.Key, in.Epoch, in.Gated)
		if a.IsError() {
			return Output{Err: a.Err}, t
		}
		return Output{Admit: a.Admit, Reason: a.Reason, Outcome: a.Outcome, Epoch: t.Runs[0].Epoch}, t
	case model.ActDecide:
		a, t := model.Decide(s, 0, in.Key, in.Decision)
		if a.IsError() {
			return Output{Err: a.Err}, t
		}
		return Output{Repeat: a.Repeat}, t
	case model.ActComplete:
		a, t := model.Complete(s, 0, in.Key, in.Outcome)
		if a.IsError() {
			return Output{Err: a.Err}, t
		}
		return Output{Repeat: a.Repeat}, t
	case model.ActCancel:
		a, t := model.Cancel(s, 0)
		return Output{Status: string(a.Status), Epoch: a.Epoch}, t
	case model.ActFence:
		a, t := model.Fence(s, 0)
		if a.IsError() {
			return Output{Err: a.Err}, t
		}
		return Output{Epoch: a.Epoch}, t
	case ActStatus:
		if run.Status == model.RunNone {
			return Output{Err: model.ErrUnknownRun}, s
		}
		o := Output{Status: string(run.Status), Epoch: run.Epoch}
		for k, p := range run.Pending {
			if p {
				o.Pending |= 1 << k
			}
		}
		e := run.Effects[in.Key]
		o.EffStatus, o.EffEpoch, o.EffGated, o.EffApprv = string(e.Status), e.Epoch, e.Gated, e.Approved
		if e.Outcome != model.NoOutcome {
			o.Outcome = e.Outcome
		}
		return o, s
	}
	panic(fmt.Sprintf("lincheck: unknown action %q", in.Action))
}

// Model returns the porcupine model of a gate whose runs each have len(keys) keys,
// partitioned by run. Its Step is Expect: an operation is legal in a state when the
// server's answer equals the model's. An operation with an unknown outcome is legal
// in every state and leads to two: the model's successor (it took effect) and the
// state itself (it did not). Porcupine places it anywhere between its call and its
// return, so it took effect then, or never.
func Model(keys []string) porcupine.Model {
	cfg := model.Config{Runs: []string{"r"}, Keys: keys}
	nm := porcupine.NondeterministicModel{
		Partition: partitionByRun,
		Init:      func() []interface{} { return []interface{}{newState(model.Init(cfg))} },
		Step: func(st, in, out interface{}) []interface{} {
			s := st.(state)
			exp, t := Expect(s.s, in.(Input))
			o := out.(Output)
			next := s
			if &t.Runs[0] != &s.s.Runs[0] { // the model returns s itself when nothing changed
				next = newState(t)
			}
			switch {
			case o.Unknown && next.key != s.key:
				return []interface{}{next, s}
			case o.Unknown:
				return []interface{}{s}
			case o != exp:
				return nil
			}
			return []interface{}{next}
		},
		Equal: func(a, b interface{}) bool { return a.(state).key == b.(state).key },
		Hash: func(st interface{}) uint64 {
			h := fnv.New64a()
			h.Write([]byte(st.(state).key))
			return h.Sum64()
		},
		DescribeOperation: func(in, out interface{}) string {
			return describeOp(keys, in.(Input), out.(Output))
		},
		DescribeState: func(st interface{}) string { return describeState(keys, st.(state).s) },
	}
	return nm.ToModel()
}

// partitionByRun splits a history into one sub-history per run: runs share nothing.
func partitionByRun(h []porcupine.Operation) [][]porcupine.Operation {
	idx := map[string]int{}
	var out [][]porcupine.Operation
	for _, op := range h {
		r := op.Input.(Input).Run
		i, ok := idx[r]
		if !ok {
			i = len(out)
			idx[r] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], op)
	}
	return out
}

// describeOp renders one operation as the visualization shows it.
func describeOp(keys []string, in Input, out Output) string {
	var b strings.Builder
	key := func() string { return keys[in.Key] }
	switch in.Action {
	case model.ActAdmit:
		fmt.Fprintf(&b, "admit(%s,%s,e%d,gated=%t)", in.Run, key(), in.Epoch, in.Gated)
	case model.ActDecide:
		fmt.Fprintf(&b, "decide(%s,%s,%s)", in.Run, key(), in.Decision)
	case model.ActComplete:
		fmt.Fprintf(&b, "complete(%s,%s,%s)", in.Run, key(), in.Outcome)
	case ActStatus:
		fmt.Fprintf(&b, "status(%s,%s)", in.Run, key())
	default:
		fmt.Fprintf(&b, "%s(%s)", strings.ToLower(in.Action), in.Run)
	}
	b.WriteString(" -> ")
	b.WriteString(describeOut(keys, in, out))
	return b.String()
}

func describeOut(keys []string, in Input, o Output) string {
	switch {
	case o.Unbounded:
		return "?? (unknown outcome: client timeout)"
	case o.Unknown:
		return "?? (unknown outcome: connection lost)"
	case o.Err != "":
		return "error(" + o.Err + ")"
	}
	switch in.Action {
	case model.ActOpen:
		return fmt.Sprintf("%s@%d created=%t", o.Status, o.Epoch, o.Created)
	case model.ActAdmit:
		s := o.Admit
		if o.Reason != "" {
			s += "(" + o.Reason + ")"
		}
		if o.Outcome != "" {
			s += "(" + o.Outcome + ")"
		}
		return fmt.Sprintf("%s epoch=%d", s, o.Epoch)
	case model.ActDecide, model.ActComplete:
		if o.Repeat {
			return "repeat"
		}
		return "ok"
	case model.ActCancel:
		return fmt.Sprintf("%s@%d", o.Status, o.Epoch)
	case model.ActFence:
		return fmt.Sprintf("epoch=%d", o.Epoch)
	case ActStatus:
		var pend []string
		for k := range keys {
			if o.Pending&(1<<k) != 0 {
				pend = append(pend, keys[k])
			}
		}
		return fmt.Sprintf("%s@%d pending=%v %s:%s e%d g=%t a=%t %s", o.Status, o.Epoch, pend,
			keys[in.Key], o.EffStatus, o.EffEpoch, o.EffGated, o.EffApprv, o.Outcome)
	}
	return fmt.Sprintf("%+v", o)
}

func describeState(keys []string, s model.State) string {
	r := s.Runs[0]
	var b strings.Builder
	fmt.Fprintf(&b, "%s@%d", r.Status, r.Epoch)
	for k, e := range r.Effects {
		if e.Status == model.EffAbsent && !r.Pending[k] {
			continue
		}
		fmt.Fprintf(&b, " %s:%s", keys[k], e.Status)
		if e.Epoch != 0 {
			fmt.Fprintf(&b, "/e%d", e.Epoch)
		}
		if e.Gated {
			b.WriteString("/gated")
		}
		if e.Approved {
			b.WriteString("/approved")
		}
		if e.Outcome != model.NoOutcome {
			b.WriteString("/" + e.Outcome)
		}
		if r.Pending[k] {
			b.WriteString("/pending")
		}
	}
	return b.String()
}

// KeyNames returns the n key names of every run of a history: k0, k1, ...
func KeyNames(n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = fmt.Sprintf("k%d", i)
	}
	return ks
}
