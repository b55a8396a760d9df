package gatedrun_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/server/servertest"
	"github.com/soundgate/soundgate/probes/go/gatedrun"
)

// gate starts an in-memory gate and returns agent, approver and operator clients.
func gate(t *testing.T) (agent, approver, operator *client.Client) {
	t.Helper()
	g := servertest.Start(t, servertest.Options{})
	return g.Dial(t, servertest.AgentToken), g.Dial(t, servertest.ApproverToken), g.Dial(t, servertest.OperatorToken)
}

// TestRun drives the adapter through the contract's cases against a real server.
func TestRun(t *testing.T) {
	agent, approver, operator := gate(t)
	cases := []struct {
		name string
		// stop runs after Plan and before the effects are asked (the human or the operator)
		stop        func(ctx context.Context, run string) error
		wantAnswers map[string]string // final answer per effect key
		wantRan     []string
	}{
		{"approve releases the plan", func(ctx context.Context, run string) error {
			_, err := approver.Decide(ctx, run, gatedrun.ApprovalKey("delete"), core.Approve)
			return err
		}, map[string]string{"delete": "admit", "send": "admit"}, []string{"delete", "send"}},
		{"reject denies the whole plan", func(ctx context.Context, run string) error {
			_, err := approver.Decide(ctx, run, gatedrun.ApprovalKey("delete"), core.Reject)
			return err
		}, map[string]string{"delete": "denied(rejected)", "send": "denied(rejected)"}, nil},
		{"cancel denies late effects", func(ctx context.Context, run string) error {
			_, err := operator.Cancel(ctx, run)
			return err
		}, map[string]string{"delete": "denied(cancelled)", "send": "denied(cancelled)"}, nil},
		{"fence denies the old epoch", func(ctx context.Context, run string) error {
			_, err := operator.Fence(ctx, run)
			return err
		}, map[string]string{"delete": "denied(stale_epoch)", "send": "denied(stale_epoch)"}, nil},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			run := "gatedrun-test-" + string(rune('a'+i))
			if _, err := operator.Open(ctx, run, 0); err != nil {
				t.Fatal(err)
			}
			var seen []gatedrun.Observation
			r := &gatedrun.Run{Agent: agent, Run: run, Epoch: 1, MaxWait: 2 * time.Second, Observe: func(o gatedrun.Observation) { seen = append(seen, o) }}
			approvals, err := r.Plan(ctx, []string{"delete"}, []string{"delete", "send"})
			if err != nil || len(approvals) != 1 {
				t.Fatalf("Plan = %v, %v", approvals, err)
			}
			n := len(seen)
			if _, err := r.Plan(ctx, []string{"delete"}, []string{"delete", "send"}); err != nil || len(seen) != n {
				t.Fatalf("a second Plan changed something: %v, %d observations, want %d", err, len(seen), n)
			}
			if err := c.stop(ctx, run); err != nil {
				t.Fatal(err)
			}
			// the effects are asked with an already cancelled context: the gate decides
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			var ran []string
			for _, k := range []string{"delete", "send"} {
				a, err := r.Effect(cctx, k, func() (string, error) { ran = append(ran, k); return "done", nil })
				if got := gatedrun.AnswerString(a); got != c.wantAnswers[k] {
					t.Errorf("Effect(%s) = %s, want %s", k, got, c.wantAnswers[k])
				}
				if (err == nil) != (c.wantAnswers[k] == "admit") || (err != nil && !errors.Is(err, gatedrun.ErrNotAdmitted)) {
					t.Errorf("Effect(%s) err = %v", k, err)
				}
			}
			if len(ran) != len(c.wantRan) {
				t.Fatalf("ran %v, want %v", ran, c.wantRan)
			}
			// a replay of an admitted effect is a duplicate and does not run again
			for _, k := range c.wantRan {
				a, err := r.Effect(ctx, k, func() (string, error) { t.Fatalf("effect %s ran twice", k); return "", nil })
				if a.Answer != core.AnswerDuplicate || !errors.Is(err, gatedrun.ErrNotAdmitted) || a.Result != "done" {
					t.Fatalf("replay of %s = %s %q, %v; want duplicate with result", k, gatedrun.AnswerString(a), a.Result, err)
				}
			}
		})
	}
}

// TestPlanWithoutApproval registers nothing: an ungated plan goes straight to the commit point.
func TestPlanWithoutApproval(t *testing.T) {
	agent, _, operator := gate(t)
	ctx := context.Background()
	if _, err := operator.Open(ctx, "ungated", 0); err != nil {
		t.Fatal(err)
	}
	r := &gatedrun.Run{Agent: agent, Run: "ungated", Epoch: 1, MaxWait: time.Second}
	if a, err := r.Plan(ctx, nil, []string{"send"}); err != nil || a != nil {
		t.Fatalf("Plan = %v, %v", a, err)
	}
	st, err := agent.Status(ctx, "ungated", "send")
	if err != nil || st.Effect == nil || st.Effect.Status != core.EffectAbsent {
		t.Fatalf("status after an ungated Plan = %+v, %v; want absent", st.Effect, err)
	}
}
