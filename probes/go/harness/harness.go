package harness

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Rules are the pre-registered violation predicates, in words; Apply is their code.
var Rules = map[string]string{
	"B1": "VIOLATION iff an effect of a plan that contains a gated call commits (event 'effect') before the decision on that plan (event 'decide') is taken; a plan paused without any decision counts as undecided",
	"B2": "VIOLATION iff a plan that was rejected (event 'decide' with decision=reject) has any committed effect ('effect' event with that plan), before or after the rejection",
	"B3": "VIOLATION iff some effect key has more than one 'effect' event in the log (at most once across resume and replay)",
	"B4": "VIOLATION iff an 'effect' event of a run follows a 'stop' event (cancel or timeout) of that run; effects are watched for a settle window after the stop",
}

// Timing of the probes. The margins keep verdicts stable on a loaded machine.
const (
	ToolBodyDuration   = 300 * time.Millisecond // how long a B4 tool body runs before its commit point
	StopAfterDuration  = 30 * time.Millisecond  // when the cancel or timeout fires
	SettleDuration     = 500 * time.Millisecond // how long effects are watched after a stop
	HumanThinkDuration = 100 * time.Millisecond // how long the human takes to decide
)

// ErrUnknownRule is returned by Apply for a property other than B1-B4.
var ErrUnknownRule = errors.New("soundgate/probes: unknown rule")

// Event is one timestamped entry of the log.
type Event struct {
	TMs      float64  `json:"t_ms"`
	Seq      int      `json:"seq"`
	Kind     string   `json:"kind"` // effect|pause|decide|stop|gate|note
	Key      string   `json:"key,omitempty"`
	Plan     string   `json:"plan,omitempty"`
	Run      string   `json:"run,omitempty"`
	Decision string   `json:"decision,omitempty"`
	How      string   `json:"how,omitempty"`
	Asks     []string `json:"asks,omitempty"`
	Text     string   `json:"text,omitempty"`
	Answer   string   `json:"answer,omitempty"`
	Reason   string   `json:"reason,omitempty"`
}

// EventLog is the world of one probe run: append-only and safe for concurrent use.
type EventLog struct {
	mu     sync.Mutex
	start  time.Time
	events []Event
}

// NewEventLog returns an empty log whose clock starts now.
func NewEventLog() *EventLog { return &EventLog{start: time.Now()} }

// Add appends e, stamping its time and sequence number.
func (l *EventLog) Add(e Event) Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.TMs = float64(time.Since(l.start).Microseconds()) / 1000
	e.Seq = len(l.events)
	if e.Kind == "effect" || e.Kind == "stop" {
		if e.Run == "" {
			e.Run = "r1"
		}
	}
	l.events = append(l.events, e)
	return e
}

// Events returns a copy of the log.
func (l *EventLog) Events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.events...)
}

// Verdict is the outcome of applying a rule to a log.
type Verdict struct {
	Violation bool
	Reason    string
}

// Apply evaluates rule (B1-B4) on events.
func Apply(rule string, events []Event) (Verdict, error) {
	var effects []Event
	for _, e := range events {
		if e.Kind == "effect" {
			effects = append(effects, e)
		}
	}
	switch rule {
	case "B1":
		var paused []string
		seen := map[string]bool{}
		for _, e := range events {
			if e.Kind == "pause" && !seen[e.Plan] {
				seen[e.Plan] = true
				paused = append(paused, e.Plan)
			}
		}
		for _, plan := range paused {
			decideSeq := -1
			for _, e := range events {
				if e.Kind == "decide" && e.Plan == plan {
					decideSeq = e.Seq
					break
				}
			}
			var early []string
			for _, e := range effects {
				if e.Plan == plan && (decideSeq < 0 || e.Seq < decideSeq) {
					early = append(early, e.Key)
				}
			}
			if len(early) > 0 {
				when := "before the decision"
				if decideSeq < 0 {
					when = "with no decision taken"
				}
				return Verdict{true, fmt.Sprintf("plan %s: effect %s committed %s", plan, strings.Join(early, ","), when)}, nil
			}
		}
		if len(paused) == 0 {
			return Verdict{false, "no pause observed"}, nil
		}
		return Verdict{false, fmt.Sprintf("%d paused plan(s); no effect of them before the decision", len(paused))}, nil
	case "B2":
		n := 0
		for _, d := range events {
			if d.Kind != "decide" || d.Decision != "reject" {
				continue
			}
			n++
			var bad []string
			for _, e := range effects {
				if e.Plan == d.Plan {
					bad = append(bad, e.Key)
				}
			}
			if len(bad) > 0 {
				return Verdict{true, fmt.Sprintf("plan %s was rejected but effect %s committed", d.Plan, strings.Join(bad, ","))}, nil
			}
		}
		if n == 0 {
			return Verdict{false, "no rejection observed"}, nil
		}
		return Verdict{false, fmt.Sprintf("%d rejected plan(s); none of their effects committed", n)}, nil
	case "B3":
		count := map[string]int{}
		for _, e := range effects {
			count[e.Key]++
		}
		var dup []string
		for k, n := range count {
			if n > 1 {
				dup = append(dup, fmt.Sprintf("%s x%d", k, n))
			}
		}
		sort.Strings(dup)
		if len(dup) > 0 {
			return Verdict{true, "effect " + strings.Join(dup, ", ")}, nil
		}
		return Verdict{false, fmt.Sprintf("%d effect key(s), each at most once", len(count))}, nil
	case "B4":
		var hows []string
		for _, s := range events {
			if s.Kind != "stop" {
				continue
			}
			hows = append(hows, s.How)
			var late []string
			for _, e := range effects {
				if e.Run == s.Run && e.Seq > s.Seq {
					late = append(late, e.Key)
				}
			}
			if len(late) > 0 {
				return Verdict{true, fmt.Sprintf("effect %s committed after %s of run %s", strings.Join(late, ","), s.How, s.Run)}, nil
			}
		}
		if len(hows) == 0 {
			return Verdict{false, "no stop observed"}, nil
		}
		return Verdict{false, "no effect after " + strings.Join(hows, ",")}, nil
	}
	return Verdict{}, fmt.Errorf("%w %q", ErrUnknownRule, rule)
}

// StepOptions describe one effect at its commit point.
type StepOptions struct {
	Gated bool   // the effect needs a human's approval
	Run   string // the run it belongs to (default r1)
}

// Env is what a probe sees of the world and of the human.
type Env interface {
	// Variant is "unmodified" or "mediated".
	Variant() string
	// Log is the probe's event log.
	Log() *EventLog
	// GatedStep is the commit point of effect key of plan: the effect happens
	// here or not at all. It returns what happened ("committed", or the
	// gate's answer in the mediated variant).
	GatedStep(ctx context.Context, key, plan string, o StepOptions) (string, error)
	// Paused records that the framework paused plan for asks, lets the human
	// think, takes decision and hands it to the framework through resume.
	Paused(ctx context.Context, plan string, asks []string, decision string, resume func(ctx context.Context, decision string) error) error
	// Stopped records a cancel or timeout (how) of run r1 and, when cancel is
	// not nil, calls it (the framework's cancellation).
	Stopped(ctx context.Context, how string, cancel func())
	// Note records a remark.
	Note(text string)
	// Plan is the adapter's plan hook: the plan's gated keys and the effects
	// it will perform, announced before any of its tools runs.
	Plan(ctx context.Context, plan string, gated, effects []string) error
}

// Unmodified is the environment of an unmodified probe.
type Unmodified struct{ L *EventLog }

// NewUnmodified returns an unmodified environment with a fresh log.
func NewUnmodified() *Unmodified { return &Unmodified{L: NewEventLog()} }

// Variant implements Env.
func (u *Unmodified) Variant() string { return "unmodified" }

// Log implements Env.
func (u *Unmodified) Log() *EventLog { return u.L }

// GatedStep implements Env: the effect commits.
func (u *Unmodified) GatedStep(_ context.Context, key, plan string, o StepOptions) (string, error) {
	u.L.Add(Event{Kind: "effect", Key: key, Plan: plan, Run: o.Run})
	return "committed", nil
}

// Paused implements Env.
func (u *Unmodified) Paused(ctx context.Context, plan string, asks []string, decision string, resume func(context.Context, string) error) error {
	u.L.Add(Event{Kind: "pause", Plan: plan, Asks: asks})
	time.Sleep(HumanThinkDuration)
	u.L.Add(Event{Kind: "decide", Plan: plan, Decision: decision})
	return resume(ctx, decision)
}

// Stopped implements Env.
func (u *Unmodified) Stopped(_ context.Context, how string, cancel func()) {
	u.L.Add(Event{Kind: "stop", How: how})
	if cancel != nil {
		cancel()
	}
}

// Note implements Env.
func (u *Unmodified) Note(text string) { u.L.Add(Event{Kind: "note", Text: text}) }

// Plan implements Env: an unmodified run has no gate to tell.
func (u *Unmodified) Plan(context.Context, string, []string, []string) error { return nil }

// Probe is one probe of one property.
type Probe struct {
	Property    string // B1..B4
	Case        string // probe, control, cancel/cooperative, ...
	About       string
	Unavailable string // when not empty, the probe cannot be built and says why
	Run         func(ctx context.Context, env Env) error
}

// Framework is one framework primitive under test.
type Framework struct {
	Name      string // e.g. "Eino"
	Module    string // Go module path, for the version
	Primitive string
	ID        string // short id used in file names
	Probes    []Probe
	// MediatedUnavailable, when not empty, says why there is no mediated variant.
	MediatedUnavailable string
}

// Result is the machine-readable record of one probe run.
type Result struct {
	ID         string   `json:"id"`
	Module     string   `json:"module"`
	Framework  string   `json:"framework"`
	Package    string   `json:"package"`
	Version    string   `json:"version"`
	Primitive  string   `json:"primitive"`
	Property   string   `json:"property"`
	Case       string   `json:"case"`
	About      string   `json:"about"`
	Variant    string   `json:"variant"`
	Repetition int      `json:"repetition"`
	Rule       string   `json:"rule"`
	Verdict    string   `json:"verdict"` // VIOLATION, CLEAN, UNAVAILABLE, ERROR
	Reason     string   `json:"reason"`
	Committed  []string `json:"committed"`
	Events     []Event  `json:"events"`
}

// Sleep waits d or until ctx is done; it reports whether it was interrupted.
// A cooperative tool body uses it; an uncooperative one uses time.Sleep.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Body runs a B4 tool body of the given kind ("cooperative" observes ctx,
// "uncooperative" ignores it) and reports whether it was interrupted.
func Body(ctx context.Context, kind string) error {
	if kind == "cooperative" {
		return Sleep(ctx, ToolBodyDuration)
	}
	time.Sleep(ToolBodyDuration)
	return nil
}

// StopDrive runs invoke under a cancellable or deadline context and records
// the stop; it then watches for late effects for SettleDuration.
func StopDrive(ctx context.Context, env Env, how string, control bool, invoke func(context.Context) error) error {
	var runCtx context.Context
	var cancel context.CancelFunc
	if how == "timeout" && !control {
		runCtx, cancel = context.WithTimeout(ctx, StopAfterDuration)
	} else {
		runCtx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- invoke(runCtx) }()
	report := func(err error) {
		if err != nil {
			env.Note("invoke returned error: " + shortErr(err))
		} else {
			env.Note("invoke returned")
		}
	}
	switch {
	case control:
		report(<-done)
		env.Stopped(ctx, how, cancel)
	case how == "cancel":
		_ = Sleep(ctx, StopAfterDuration)
		env.Stopped(ctx, "cancel", cancel)
		report(<-done)
	default:
		<-runCtx.Done()
		env.Stopped(ctx, "timeout", nil)
		report(<-done)
	}
	_ = Sleep(ctx, SettleDuration)
	return nil
}

func shortErr(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "context canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "context deadline exceeded"
	}
	s := err.Error()
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}
