package node

import (
	"encoding/json"
	"errors"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/wal"
)

// Trace lines (Config.Trace): one JSON object per line, written with one Write each
// under the node's lock, in the order the core took the steps: what trace validation
// (internal/tracecheck) replays against the spec. Three kinds:
//
//   - a step: every command the core took, its reply, the log position it rests on,
//     and the view of its run after it;
//   - a delivery: the answer handed back for a step (seq), as the caller gets it;
//   - a recovery: the log position a start replayed up to, and every run it holds.
type (
	traceStep struct {
		Seq      uint64     `json:"seq"`
		LSN      uint64     `json:"lsn"`
		Op       string     `json:"op"`
		Run      string     `json:"run"`
		Key      string     `json:"key,omitempty"`
		Epoch    uint64     `json:"epoch,omitempty"`
		Gated    bool       `json:"gated,omitempty"`
		Decision string     `json:"decision,omitempty"`
		Outcome  string     `json:"outcome,omitempty"`
		Upto     bool       `json:"upto,omitempty"`
		Persist  bool       `json:"persist,omitempty"`
		View     *TraceView `json:"view,omitempty"`
		TraceAnswer
	}
	traceDelivery struct {
		Deliver uint64 `json:"deliver"`
		TraceAnswer
	}
	traceRecovery struct {
		Recovered uint64               `json:"recovered"`
		Runs      map[string]TraceView `json:"runs"`
	}
)

// TraceAnswer is a reply as a trace line says it: the core's error code, or the
// answer of the operation (admit: admit, held, duplicate or denied with its reason;
// decide: decided or repeat; complete: completed or repeat; fence: fenced; the others
// say nothing beyond their run's view).
type TraceAnswer struct {
	Answer string `json:"answer,omitempty"`
	Reason string `json:"reason,omitempty"`
	Err    string `json:"err,omitempty"`
}

// TraceView is a run after a step: its status, epoch and pending keys, and its
// effects, all of them (All) or only the step's key.
type TraceView struct {
	Status  string                 `json:"status"`
	Epoch   uint64                 `json:"epoch"`
	Pending []string               `json:"pending,omitempty"`
	Effects map[string]TraceEffect `json:"effects,omitempty"`
	All     bool                   `json:"all,omitempty"`
}

// TraceEffect is an effect in a TraceView; Outcome is "none" until it completes.
type TraceEffect struct {
	Status   string `json:"status"`
	Epoch    uint64 `json:"epoch,omitempty"`
	Gated    bool   `json:"gated,omitempty"`
	Approved bool   `json:"approved,omitempty"`
	Outcome  string `json:"outcome"`
}

func traceOutcome(o core.Outcome) string {
	if o == core.OutcomeNone {
		return "none"
	}
	return o.String()
}

// traceAnswerOf is a reply in a trace's words.
func traceAnswerOf(op core.Op, rep core.Reply, err error) TraceAnswer {
	var ce *core.Error
	switch {
	case errors.As(rep.Err, &ce):
		return TraceAnswer{Err: ce.Code}
	case rep.Err != nil:
		return TraceAnswer{Err: rep.Err.Error()}
	case err != nil:
		return TraceAnswer{Err: "node: " + err.Error()}
	}
	switch op {
	case core.OpAdmit:
		a := TraceAnswer{Answer: rep.Admit.Answer.String()}
		if rep.Admit.Answer == core.AnswerDenied {
			a.Reason = rep.Admit.Reason.String()
		}
		return a
	case core.OpDecide:
		return TraceAnswer{Answer: map[bool]string{false: "decided", true: "repeat"}[rep.Decide.Repeat]}
	case core.OpComplete:
		return TraceAnswer{Answer: map[bool]string{false: "completed", true: "repeat"}[rep.Complete.Repeat]}
	case core.OpFence:
		return TraceAnswer{Answer: "fenced"}
	}
	return TraceAnswer{}
}

// traceViewOf is run r's view in g; all: every effect, else only key's.
func traceViewOf(g *core.Gate, r core.RunID, key core.Key, all bool) *TraceView {
	rv, ev, err := g.Status(r, key)
	if err != nil {
		return nil
	}
	v := &TraceView{Status: rv.Status.String(), Epoch: rv.Epoch, All: all, Effects: map[string]TraceEffect{}}
	for _, k := range rv.Pending {
		v.Pending = append(v.Pending, string(k))
	}
	add := func(e core.EffectView) {
		v.Effects[string(e.Key)] = TraceEffect{Status: e.Status.String(), Epoch: e.Epoch, Gated: e.Gated,
			Approved: e.Approved, Outcome: traceOutcome(e.Outcome)}
	}
	if all {
		for _, e := range g.Effects(r) {
			add(e)
		}
	} else if key != "" {
		add(ev)
	}
	return v
}

// traceStepLocked writes the line of the step c just taken, with reply rep, whose
// answer rests on the record at lsn (a persisted step's own).
func (n *Node) traceStepLocked(c core.Command, rep core.Reply, lsn wal.LSN) {
	if n.cfg.Trace == nil {
		return
	}
	n.traceSeq++
	line := traceStep{Seq: n.traceSeq, LSN: uint64(lsn), Op: c.Op.String(), Run: string(c.Run), Key: string(c.Key),
		Epoch: c.Epoch, Gated: c.Gated, Upto: c.Upto, Persist: rep.Persist, TraceAnswer: traceAnswerOf(c.Op, rep, nil)}
	if c.Op == core.OpDecide {
		line.Decision = c.Decision.String()
	}
	if c.Op == core.OpComplete {
		line.Outcome = c.Outcome.String()
	}
	if rep.Err == nil {
		// Admit and Complete change their key only, but a denied admit may have timed
		// its run out first (every live effect dropped): then the whole run.
		all := c.Op != core.OpAdmit && c.Op != core.OpComplete || rep.Admit.Answer == core.AnswerDenied
		line.View = traceViewOf(n.gate, c.Run, c.Key, all)
	}
	n.traceLocked(line)
}

// traceDeliverLocked writes the line of an answer handed back for step seq.
func (n *Node) traceDeliverLocked(seq uint64, op core.Op, rep core.Reply, err error) {
	if n.cfg.Trace == nil {
		return
	}
	n.traceLocked(traceDelivery{Deliver: seq, TraceAnswer: traceAnswerOf(op, rep, err)})
}

// traceRecovered writes the recovery line of a node that starts at last.
func traceRecovered(cfg Config, g *core.Gate, last wal.LSN) {
	if cfg.Trace == nil {
		return
	}
	line := traceRecovery{Recovered: uint64(last), Runs: map[string]TraceView{}}
	for _, r := range g.RunIDs() {
		if v := traceViewOf(g, r, "", true); v != nil {
			line.Runs[string(r)] = *v
		}
	}
	writeTrace(cfg, line)
}

func (n *Node) traceLocked(line any) { writeTrace(n.cfg, line) }

// writeTrace writes one line. A line that cannot be written is the verification's
// loss, not the gate's: the gate goes on, the log says so, and the trace's gap fails
// its validation.
func writeTrace(cfg Config, line any) {
	b, err := json.Marshal(line)
	if err == nil {
		_, err = cfg.Trace.Write(append(b, '\n'))
	}
	if err != nil && cfg.Logger != nil {
		cfg.Logger.Error("trace: a line was not written", "err", err)
	}
}
