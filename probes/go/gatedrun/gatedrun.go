package gatedrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

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

// ErrNotAdmitted is returned by Effect and EffectValue when the gate did not admit
// the effect: do did not run.
var ErrNotAdmitted = errors.New("soundgate/gatedrun: effect not admitted")

// ResultBytesMax is the longest result complete records, in bytes of UTF-8: the
// protocol's limit (docs/protocol.md, limits).
const ResultBytesMax = proto.ResultBytesMax

// CutMark ends an error message that was cut to fit ResultBytesMax.
const CutMark = "…[cut]"

// ResultNotStorableError is returned by EffectValue when the effect ran but its value
// cannot be recorded: encoding/json fails on it (Err), or its JSON is Bytes long, over
// Limit. The effect is left admitted and not completed: a replay then hears duplicate
// without an outcome, the truth, where a cut or invented result would replay as
// something the effect never returned.
type ResultNotStorableError struct {
	Key   string
	Bytes int   // the JSON's length; 0 when it could not be encoded
	Limit int   // ResultBytesMax
	Err   error // the encoding error, or nil
}

func (e *ResultNotStorableError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("soundgate/gatedrun: effect %q ran, but its result is not encodable as JSON (%v); it stays admitted and not completed", e.Key, e.Err)
	}
	return fmt.Sprintf("soundgate/gatedrun: effect %q ran, but its result is %d bytes of JSON, over the limit of %d; it stays admitted and not completed", e.Key, e.Bytes, e.Limit)
}

func (e *ResultNotStorableError) Unwrap() error { return e.Err }

// ResultDecodeError is returned by EffectValue for a duplicate whose recorded result
// is not JSON (another tool completed the effect). The effect did not run here, so the
// error is also ErrNotAdmitted; Result is the text as recorded.
type ResultDecodeError struct {
	Key    string
	Result string
	Err    error
}

func (e *ResultDecodeError) Error() string {
	return fmt.Sprintf("soundgate/gatedrun: the recorded result of effect %q is not JSON: %v", e.Key, e.Err)
}

func (e *ResultDecodeError) Unwrap() []error { return []error{ErrNotAdmitted, e.Err} }

// Outcome is what EffectValue did. Ran reports that do ran in this call. Value is
// what do returned, or, for a duplicate of an effect completed ok, the recorded result
// decoded by encoding/json into an any (maps, slices, float64, string, bool, nil);
// Result is that JSON as recorded, to decode into a type of your own. Message is the
// recorded error message of a duplicate of a failed effect.
type Outcome struct {
	Answer  proto.AdmitResult
	Ran     bool
	Value   any
	Result  json.RawMessage
	Message string
}

// encodeResult is the JSON complete records for v, written as Node's JSON.stringify
// writes it (no HTML escaping), so both clients record the same text.
func encodeResult(key string, v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", &ResultNotStorableError{Key: key, Limit: ResultBytesMax, Err: err}
	}
	text := strings.TrimSuffix(b.String(), "\n")
	if len(text) > ResultBytesMax {
		return "", &ResultNotStorableError{Key: key, Bytes: len(text), Limit: ResultBytesMax}
	}
	return text, nil
}

// cutMessage fits an error message into ResultBytesMax bytes: an error message is for
// people, so a cut one is still worth recording, marked with CutMark. It cuts after
// the last whole UTF-8 character that fits; invalid bytes become U+FFFD first.
func cutMessage(msg string) string {
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	if len(msg) <= ResultBytesMax {
		return msg
	}
	end := ResultBytesMax - len(CutMark)
	for end > 0 && !utf8.RuneStart(msg[end]) {
		end--
	}
	return msg[:end] + CutMark
}

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

// Effect is EffectValue for an effect whose value is a string (recorded as a JSON
// string); it returns the gate's answer only.
func (r *Run) Effect(ctx context.Context, key string, do func() (string, error)) (proto.AdmitResult, error) {
	o, err := r.EffectValue(ctx, key, func() (any, error) { return do() })
	return o.Answer, err
}

// EffectValue is the commit point of effect key: it asks the gate, waiting up to
// MaxWait while the answer is held, runs do only on admit and records the outcome:
// ok with the JSON of do's value, or failed with do's error message (cutMessage), and
// returns do's error. When the effect is not admitted it returns ErrNotAdmitted, and do
// does not run; a duplicate's Value is its recorded result, decoded. A value with no
// JSON within ResultBytesMax bytes is a *ResultNotStorableError (the effect happened;
// nothing is recorded), a recorded result that is not JSON a *ResultDecodeError.
func (r *Run) EffectValue(ctx context.Context, key string, do func() (any, error)) (Outcome, error) {
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
			return Outcome{Answer: a}, err
		}
		r.observe(key, a, "")
		if a.Answer == core.AnswerHeld {
			wctx, wcancel := context.WithTimeout(gctx, r.MaxWait)
			a, err = r.Agent.AdmitWait(wctx, r.Run, key, r.Epoch, false, WaitStep)
			wcancel()
			if err != nil {
				return Outcome{Answer: a}, err
			}
			r.observe(key, a, "after waiting")
		}
	}
	if a.Answer == core.AnswerDuplicate {
		return replayed(key, a)
	}
	if a.Answer != core.AnswerAdmit {
		return Outcome{Answer: a}, ErrNotAdmitted
	}
	o := Outcome{Answer: a, Ran: true}
	v, derr := do()
	if derr != nil {
		if _, err := r.Agent.Complete(gctx, r.Run, key, core.OutcomeFailed, cutMessage(derr.Error())); err != nil {
			return o, err
		}
		return o, derr
	}
	o.Value = v
	text, err := encodeResult(key, v)
	if err != nil {
		return o, err
	}
	o.Result = json.RawMessage(text)
	if _, err := r.Agent.Complete(gctx, r.Run, key, core.OutcomeOK, text); err != nil {
		return o, err
	}
	return o, nil
}

// replayed is the Outcome of a duplicate: its recorded outcome, decoded.
func replayed(key string, a proto.AdmitResult) (Outcome, error) {
	o := Outcome{Answer: a}
	switch a.Outcome {
	case core.OutcomeFailed:
		o.Message = a.Result
	case core.OutcomeOK:
		if err := json.Unmarshal([]byte(a.Result), &o.Value); err != nil {
			return o, &ResultDecodeError{Key: key, Result: a.Result, Err: err}
		}
		o.Result = json.RawMessage(a.Result)
	}
	return o, ErrNotAdmitted
}
