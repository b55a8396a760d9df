package gatedrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
)

// Timeouts of gate calls.
const (
	// CallTimeout bounds one gate call that does not wait.
	CallTimeout = 10 * time.Second
	// WaitStep is how long one parked admit waits on the gate before asking again.
	WaitStep = time.Second
)

// ErrNotAdmitted is returned by Effect when the gate did not admit the effect.
var ErrNotAdmitted = errors.New("soundgate/gatedrun: effect not admitted")

// ApprovalKey is the gate key of the approval that guards effect key.
func ApprovalKey(key string) string { return "approval/" + key }

// Observation is one gate answer as an adapter saw it (for logs).
type Observation struct {
	Key    string
	Answer string
	Why    string
}

// Run binds an agent client to run Run at Epoch.
type Run struct {
	Agent *client.Client
	Run   string
	Epoch uint64
	// MaxWait bounds how long a held effect waits for a decision.
	MaxWait time.Duration
	// Observe, when not nil, sees every gate answer.
	Observe     func(Observation)
	preAdmitted map[string]bool
}

func (r *Run) observe(key string, a proto.AdmitResult, why string) {
	if r.Observe != nil {
		r.Observe(Observation{Key: key, Answer: AnswerString(a), Why: why})
	}
}

// AnswerString renders an admit answer as the contract names it: admit, held,
// duplicate, denied(reason).
func AnswerString(a proto.AdmitResult) string {
	if a.Answer == core.AnswerDenied {
		return fmt.Sprintf("denied(%s)", a.Reason)
	}
	return a.Answer.String()
}

// detached is a context for a gate call that must be asked even when the
// caller's context was cancelled: the gate, not the framework, decides
// whether a late effect may happen.
func detached(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), d)
}

// Plan registers a plan with the gate before any of its effects runs: each key
// in gated opens an approval (ApprovalKey(key), gated), then each key in
// effects is asked once so that the gate holds it under that approval (and a
// rejection rejects it). Keys the gate already knows are left alone, so
// calling Plan again on resume or replay changes nothing. It returns the
// approval keys a human must decide.
func (r *Run) Plan(ctx context.Context, gated, effects []string) ([]string, error) {
	if len(gated) == 0 {
		return nil, nil
	}
	ctx, cancel := detached(ctx, CallTimeout)
	defer cancel()
	known := func(k string) (bool, error) {
		st, err := r.Agent.Status(ctx, r.Run, k)
		if err != nil {
			return false, err
		}
		return st.Effect != nil && st.Effect.Status != core.EffectAbsent, nil
	}
	var approvals []string
	for _, k := range gated {
		ak := ApprovalKey(k)
		approvals = append(approvals, ak)
		if ok, err := known(ak); err != nil || ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		a, err := r.Agent.Admit(ctx, r.Run, ak, r.Epoch, client.AdmitOptions{Gated: true})
		if err != nil {
			return nil, err
		}
		r.observe(ak, a, "plan: approval requested")
	}
	for _, k := range effects {
		if ok, err := known(k); err != nil || ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		a, err := r.Agent.Admit(ctx, r.Run, k, r.Epoch, client.AdmitOptions{})
		if err != nil {
			return nil, err
		}
		r.observe(k, a, "plan: effect registered")
		if a.Answer == core.AnswerAdmit { // every approval was already decided: keep the admission
			if r.preAdmitted == nil {
				r.preAdmitted = map[string]bool{}
			}
			r.preAdmitted[k] = true
		}
	}
	return approvals, nil
}

// Effect is the commit point of effect key: it asks the gate, waiting up to
// MaxWait while the answer is held, runs do only on admit and records the
// outcome. When the effect is not admitted it returns the answer and
// ErrNotAdmitted, and do does not run.
func (r *Run) Effect(ctx context.Context, key string, do func() (string, error)) (proto.AdmitResult, error) {
	gctx, cancel := detached(ctx, r.MaxWait+CallTimeout)
	defer cancel()
	var a proto.AdmitResult
	var err error
	if r.preAdmitted[key] {
		delete(r.preAdmitted, key)
		a = proto.AdmitResult{Answer: core.AnswerAdmit, Epoch: r.Epoch}
		r.observe(key, a, "admitted when the plan was registered")
	} else {
		a, err = r.Agent.Admit(gctx, r.Run, key, r.Epoch, client.AdmitOptions{})
		if err != nil {
			return a, err
		}
		r.observe(key, a, "")
		if a.Answer == core.AnswerHeld {
			wctx, wcancel := context.WithTimeout(gctx, r.MaxWait)
			a, err = r.Agent.AdmitWait(wctx, r.Run, key, r.Epoch, false, WaitStep)
			wcancel()
			if err != nil {
				return a, err
			}
			r.observe(key, a, "after waiting")
		}
	}
	if a.Answer != core.AnswerAdmit {
		return a, ErrNotAdmitted
	}
	result, derr := do()
	outcome := core.OutcomeOK
	if derr != nil {
		outcome, result = core.OutcomeFailed, derr.Error()
	}
	if len(result) > 1024 {
		result = result[:1024]
	}
	if _, err := r.Agent.Complete(gctx, r.Run, key, outcome, result); err != nil {
		return a, err
	}
	return a, derr
}
