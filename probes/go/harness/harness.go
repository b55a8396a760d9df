package harness

import (
	"context"
	"sync"
	"time"
)

// Timing of the probes. The margins keep verdicts stable on a loaded machine.
const (
	ToolBodyDuration   = 300 * time.Millisecond // how long a B4 tool body runs before its commit point
	StopAfterDuration  = 30 * time.Millisecond  // when the cancel or timeout fires
	SettleDuration     = 500 * time.Millisecond // how long effects are watched after a stop
	HumanThinkDuration = 100 * time.Millisecond // how long the human takes to decide
	SiblingDelay       = 5 * time.Millisecond   // how long a sibling of the gated call waits before its commit point
)

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
