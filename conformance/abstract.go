package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/internal/scenario"
	"github.com/soundgate/soundgate/model"
)

// Abstract maps the implementation's state to a model state over c's names: the
// abstraction function of the refinement. History variables are left empty; compare
// with Strip(s) of the model's state. What an approval says (core.Note: description,
// args digest, the time it opened, the decision's reason) is left out on purpose:
// the spec and the model have no notes, and no decision reads one, which the suite
// shows by driving the core with notes (command) that the model never sees.
func Abstract(c model.Config, g *core.Gate, runName func(string) core.RunID) model.State {
	s := Strip(model.Init(c))
	for i, r := range c.Runs {
		view, _, err := g.Status(runName(r), "")
		if err != nil { // unknown_run: the run was never seen
			continue
		}
		run := &s.Runs[i]
		run.Status = runStatus(view.Status)
		run.Epoch = int(view.Epoch)
		for _, k := range view.Pending {
			if j := index(c.Keys, string(k)); j >= 0 {
				run.Pending[j] = true
			}
		}
		for _, e := range g.Effects(runName(r)) {
			j := index(c.Keys, string(e.Key))
			if j < 0 {
				continue
			}
			// e.Note is not abstracted (see above)
			run.Effects[j] = model.Effect{Status: effectStatus(e.Status), Epoch: int(e.Epoch), Gated: e.Gated,
				Approved: e.Approved, Outcome: outcome(e.Outcome)}
		}
	}
	return s
}

// Strip returns s without its history variables (admit counts and contexts, doomed
// keys): the part of the state the implementation has.
func Strip(s model.State) model.State {
	t := s.Clone()
	for i := range t.Runs {
		for k := range t.Runs[i].Doomed {
			t.Runs[i].Doomed[k] = false
		}
		for k := range t.Runs[i].Effects {
			t.Runs[i].Effects[k].Admits = 0
			t.Runs[i].Effects[k].AdmitCtx = nil
		}
	}
	return t
}

func index(names []string, n string) int {
	for i, x := range names {
		if x == n {
			return i
		}
	}
	return -1
}

func runStatus(s core.RunStatus) model.RunStatus { return model.RunStatus(s.String()) }

func effectStatus(s core.EffectStatus) model.EffectStatus { return model.EffectStatus(s.String()) }

func outcome(o core.Outcome) string {
	if o == core.OutcomeNone {
		return model.NoOutcome
	}
	return o.String()
}

// answerOf turns the implementation's reply to op into the model's form of an answer.
func answerOf(op model.Op, rep core.Reply) model.Answer {
	if rep.Err != nil {
		return model.Answer{Err: errCode(rep.Err)}
	}
	switch op.Action {
	case model.ActAdmit:
		a := rep.Admit
		return model.Answer{Admit: a.Answer.String(), Reason: a.Reason.String(), Outcome: a.Outcome.String()}
	case model.ActDecide:
		return model.Answer{Repeat: rep.Decide.Repeat}
	case model.ActComplete:
		return model.Answer{Repeat: rep.Complete.Repeat}
	case model.ActOpen:
		return model.Answer{Status: runStatus(rep.Open.Run.Status), Epoch: int(rep.Open.Run.Epoch)}
	}
	return model.Answer{Status: runStatus(rep.Run.Status), Epoch: int(rep.Run.Epoch)}
}

// errCode returns the contract's name of a typed error; any other error is the
// harness's own, named so that it never equals a model answer's error.
func errCode(err error) string {
	if code, ok := scenario.ErrorCode(err); ok {
		return code
	}
	return "harness:" + err.Error()
}

// command turns a model operation into the core's command over the given run name:
// the model's action is the core's operation of the same name. Admits and decides of
// every other key (noted) carry a note the model does not have: a description and an
// args digest, a reason; cancels and fences of every other run a reason, and its
// decides, cancels and fences who asked.
func command(op model.Op, run core.RunID) core.Command {
	o, ok := core.ParseOp(strings.ToLower(op.Action))
	if !ok || o == core.OpStatus {
		panic(fmt.Sprintf("conformance: unknown action %q", op.Action))
	}
	c := core.Command{Op: o, Run: run, Key: core.Key(op.Key), Epoch: uint64(max(op.Epoch, 0)), Gated: op.Gated, Upto: op.Upto}
	c.Decision, _ = core.ParseDecision(op.Decision)
	c.Outcome, _ = core.ParseOutcome(op.Outcome)
	c.Description, c.ArgsDigest, c.Reason = note(op)
	if c.Reason == "" {
		c.Reason = runNote(op)
	}
	if noted(op.Run) { // who asked, for the audit trail: no decision reads it either
		switch o {
		case core.OpDecide, core.OpCancel, core.OpFence:
			c.By = "token of " + op.Run
		}
	}
	return c
}

// note is the opaque note command gives op: for an admit of a noted key a
// description (with a line break and markup, which no decision reads either) and
// the digest of its name, for a decide of one a reason; nothing otherwise.
func note(op model.Op) (description, digest, reason string) {
	if !noted(op.Key) {
		return "", "", ""
	}
	switch op.Action {
	case model.ActAdmit:
		sum := sha256.Sum256([]byte(op.Run + "/" + op.Key))
		return "effect " + op.Key + " of " + op.Run + "\n<b>" + strconv.Itoa(op.Epoch) + "</b>", "sha256:" + hex.EncodeToString(sum[:]), ""
	case model.ActDecide:
		return "", "", op.Decision + "d: " + op.Key
	}
	return "", "", ""
}

// runNote is the reason command gives a cancel or a fence of run (every other run).
func runNote(op model.Op) string {
	if noted(op.Run) && (op.Action == model.ActCancel || op.Action == model.ActFence) {
		return op.Action + " of " + op.Run
	}
	return ""
}

// noted reports whether key's admits and decides carry a note, and run's decides,
// cancels and fences who asked: every other one (its last byte odd), so that both
// kinds meet.
func noted(key string) bool { return key != "" && key[len(key)-1]%2 == 1 }
