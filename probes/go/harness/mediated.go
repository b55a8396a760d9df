package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/server/servertest"
	"github.com/soundgate/soundgate/probes/go/gatedrun"
)

// gateStartTimeout bounds the start of the probes' gate.
const gateStartTimeout = 60 * time.Second

// gate is the running gate of the mediated probes (one per process).
var gate struct {
	proc                      *servertest.Process
	agent, approver, operator *client.Client
	runs                      atomic.Int64
}

// GateAvailable starts the gate of the mediated variant ($SOUNDGATE_BIN, or a
// binary built from this repository) and returns "" when it runs, or why not.
func GateAvailable() string {
	if err := startGate(); err != nil {
		return "gate unavailable: " + strings.SplitN(err.Error(), "\n", 2)[0]
	}
	return ""
}

func startGate() error {
	dir, err := os.MkdirTemp("", "soundgate-probes-go-")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), gateStartTimeout)
	defer cancel()
	bin := os.Getenv("SOUNDGATE_BIN")
	if bin == "" {
		if bin, err = servertest.Build(ctx, dir); err != nil {
			return err
		}
	}
	p, err := servertest.NewProcess(bin, []string{"serve", "--durability", "memory"}, dir)
	if err != nil {
		return err
	}
	p.Unix = ""
	if err := p.Start(ctx); err != nil {
		return err
	}
	gate.proc = p
	for _, c := range []struct {
		dst   **client.Client
		token string
	}{{&gate.agent, servertest.AgentToken}, {&gate.approver, servertest.ApproverToken}, {&gate.operator, servertest.OperatorToken}} {
		if *c.dst, err = client.Dial(ctx, p.TCP, c.token); err != nil {
			StopGate()
			return err
		}
	}
	return nil
}

// StopGate stops the gate started by GateAvailable.
func StopGate() {
	for _, c := range []*client.Client{gate.agent, gate.approver, gate.operator} {
		if c != nil {
			c.Close()
		}
	}
	if gate.proc != nil {
		_ = gate.proc.Stop()
		gate.proc = nil
	}
}

// DecisionFor is the human's decision in an approval probe: B2 rejects, the others approve.
func DecisionFor(p Probe) string {
	if p.Property == "B2" {
		return "reject"
	}
	return "approve"
}

// Mediated is the environment of a mediated probe: one fresh run on the gate.
type Mediated struct {
	L        *EventLog
	run      string
	gr       *gatedrun.Run
	decision string
	mu       sync.Mutex
	decided  map[string]chan string // plan -> the decision the human took at the gate
}

// NewMediated opens a fresh gate run for probe p (id names it in the log).
func NewMediated(ctx context.Context, id string, p Probe) (*Mediated, error) {
	m := &Mediated{L: NewEventLog(), decision: DecisionFor(p), decided: map[string]chan string{}}
	m.run = fmt.Sprintf("probe-go-%d-%d", os.Getpid(), gate.runs.Add(1))
	if _, err := gate.operator.Open(ctx, m.run, 0); err != nil {
		return nil, err
	}
	m.L.Add(Event{Kind: "gate", Text: "open " + m.run + " for " + id})
	m.gr = &gatedrun.Run{Agent: gate.agent, Run: m.run, Epoch: 1, MaxWait: 10 * time.Second,
		Observe: func(o gatedrun.Observation) {
			m.L.Add(Event{Kind: "gate", Key: o.Key, Answer: o.Answer, Reason: o.Why})
		}}
	return m, nil
}

// Close implements the end of a probe run (the gate run is left as it is).
func (m *Mediated) Close() {}

// Variant implements Env.
func (m *Mediated) Variant() string { return "mediated" }

// Log implements Env.
func (m *Mediated) Log() *EventLog { return m.L }

// Plan registers the plan with the gate and lets the human, who watches the
// gate's pending approvals, decide them after HumanThinkDuration.
func (m *Mediated) Plan(ctx context.Context, plan string, gated, effects []string) error {
	approvals, err := m.gr.Plan(ctx, gated, effects)
	if err != nil || len(approvals) == 0 {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.decided[plan]; ok {
		return nil
	}
	ch := make(chan string, 1)
	m.decided[plan] = ch
	go func() {
		time.Sleep(HumanThinkDuration)
		m.L.Add(Event{Kind: "decide", Plan: plan, Decision: m.decision, Text: "at the gate"})
		d := core.Approve
		if m.decision == "reject" {
			d = core.Reject
		}
		for _, k := range approvals {
			dctx, cancel := context.WithTimeout(context.Background(), gatedrun.CallTimeout)
			_, err := gate.approver.Decide(dctx, m.run, k, d)
			cancel()
			ans := "decided " + m.decision
			if err != nil {
				ans = "decide error: " + err.Error()
			}
			m.L.Add(Event{Kind: "gate", Key: k, Answer: ans})
		}
		ch <- m.decision
	}()
	return nil
}

// GatedStep implements Env: the effect commits only if the gate admits it.
func (m *Mediated) GatedStep(ctx context.Context, key, plan string, o StepOptions) (string, error) {
	a, err := m.gr.Effect(ctx, key, func() (string, error) {
		m.L.Add(Event{Kind: "effect", Key: key, Plan: plan, Run: o.Run})
		return "committed", nil
	})
	if errors.Is(err, gatedrun.ErrNotAdmitted) {
		return gatedrun.AnswerString(a), nil
	}
	if err != nil {
		return "", err
	}
	return "committed", nil
}

// Paused implements Env: the framework is resumed with the decision the human
// took at the gate.
func (m *Mediated) Paused(ctx context.Context, plan string, asks []string, fallback string, resume func(context.Context, string) error) error {
	m.L.Add(Event{Kind: "pause", Plan: plan, Asks: asks})
	m.mu.Lock()
	ch, ok := m.decided[plan]
	m.mu.Unlock()
	d := fallback
	if ok {
		d = <-ch
		ch <- d
		m.L.Add(Event{Kind: "note", Text: "framework resumed with the gate's decision (" + d + ")"})
	} else {
		time.Sleep(HumanThinkDuration)
		m.L.Add(Event{Kind: "decide", Plan: plan, Decision: d, Text: "at the framework: no approval registered with the gate for this plan"})
	}
	return resume(ctx, d)
}

// Stopped implements Env: a cancel cancels the gate run, a timeout fences it,
// before the framework's own cancellation runs.
func (m *Mediated) Stopped(ctx context.Context, how string, cancel func()) {
	m.L.Add(Event{Kind: "stop", How: how})
	gctx, gcancel := context.WithTimeout(context.WithoutCancel(ctx), gatedrun.CallTimeout)
	defer gcancel()
	if how == "cancel" {
		res, err := gate.operator.Cancel(gctx, m.run)
		m.L.Add(Event{Kind: "gate", Text: fmt.Sprintf("cancel: status %v epoch %d err %v", res.Status, res.Epoch, err)})
	} else {
		res, err := gate.operator.Fence(gctx, m.run)
		m.L.Add(Event{Kind: "gate", Text: fmt.Sprintf("fence: epoch %d err %v", res.Epoch, err)})
	}
	if cancel != nil {
		cancel()
	}
}

// Note implements Env.
func (m *Mediated) Note(text string) { m.L.Add(Event{Kind: "note", Text: text}) }
