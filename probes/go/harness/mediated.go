package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/soundgate/soundgate/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/probes/go/gatedrun"
)

// gateStartTimeout bounds the start of the probes' gate.
const gateStartTimeout = 60 * time.Second

var tokens = struct{ agent, approver, operator string }{
	"probe-agent-token-0123456789", "probe-approver-token-0123456789", "probe-operator-token-0123456789",
}

// gate is the running gate of the mediated probes (one per process).
var gate struct {
	cmd                       *exec.Cmd
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

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/soundgate/soundgate\n") {
			return d, nil
		}
	}
	return "", errors.New("repository root (module github.com/soundgate/soundgate) not found above " + dir)
}

func startGate() error {
	dir, err := os.MkdirTemp("", "soundgate-probes-go-")
	if err != nil {
		return err
	}
	bin := os.Getenv("SOUNDGATE_BIN")
	if bin == "" {
		root, err := repoRoot()
		if err != nil {
			return err
		}
		bin = filepath.Join(dir, "soundgate")
		build := exec.Command("go", "build", "-o", bin, "./cmd/soundgate")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./cmd/soundgate: %v: %s", err, out)
		}
	}
	roles, _ := json.Marshal(map[string]any{"tokens": []map[string]any{
		{"name": "probe-agent", "token": tokens.agent, "role": "agent", "runs": []string{"*"}},
		{"name": "probe-human", "token": tokens.approver, "role": "approver"},
		{"name": "probe-operator", "token": tokens.operator, "role": "operator"},
	}})
	rolesPath := filepath.Join(dir, "roles.json")
	if err := os.WriteFile(rolesPath, roles, 0o600); err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "serve", "--roles", rolesPath, "--listen", addr, "--durability", "memory")
	stderr, _ := cmd.StderrPipe()
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var log []string
		for sc.Scan() {
			log = append(log, sc.Text())
			if strings.Contains(sc.Text(), "listening") {
				ready <- nil
				for sc.Scan() {
				}
				return
			}
		}
		ready <- fmt.Errorf("gate exited: %s", strings.Join(log, " | "))
	}()
	select {
	case err := <-ready:
		if err != nil {
			return err
		}
	case <-time.After(gateStartTimeout):
		_ = cmd.Process.Kill()
		return errors.New("gate did not start in time")
	}
	gate.cmd = cmd
	ctx, cancel := context.WithTimeout(context.Background(), gatedrun.CallTimeout)
	defer cancel()
	for _, c := range []struct {
		dst   **client.Client
		token string
	}{{&gate.agent, tokens.agent}, {&gate.approver, tokens.approver}, {&gate.operator, tokens.operator}} {
		if *c.dst, err = client.Dial(ctx, addr, c.token); err != nil {
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
	if gate.cmd != nil {
		_ = gate.cmd.Process.Signal(os.Interrupt)
		_ = gate.cmd.Wait()
		gate.cmd = nil
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
